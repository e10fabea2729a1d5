// libFuzzer target for the collectives' wire messages (lib/collectives/
// wire.h): the first byte picks the parser (challenge, verdict, bootstrap
// hello, rank table, mesh hello, endpoint blob, point-to-point hello, ack
// and message header, TCP frame), the second a world size or sequence
// number, the rest is the message. Nothing may crash, read out of bounds
// or allocate beyond what the input justifies; what a parser accepts must
// obey the bounds it promises.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "lib/collectives/wire.h"

namespace wire = neuron::collectives::wire;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int which = data[0] % 10;
  const int n = data[1] % 9;  // a world of 0..8, an lnc, a sequence number
  std::string_view bytes(reinterpret_cast<const char*>(data + 2), size - 2);
  switch (which) {
    case 0: (void)wire::ParseChallenge(bytes); break;
    case 1: (void)wire::ParseVerdict(bytes); break;
    case 2:
      if (auto h = wire::ParseBootHello(bytes, n); h.ok()) {
        if (h->rank >= static_cast<uint32_t>(n) || h->arena_bytes > wire::kMaxArenaBytes) abort();
      }
      break;
    case 3:
      if (auto t = wire::ParseRankTable(bytes, n); t.ok()) {
        if (t->ranks.size() != static_cast<size_t>(n)) abort();
        for (size_t r = 0; r < t->ranks.size(); ++r) {
          if (t->ranks[r].rank != r) abort();
        }
        if (wire::SerializeRankTable(*t) != bytes) abort();
      }
      break;
    case 4:
      if (auto h = wire::ParseMeshHello(bytes, n / 2, n, 0); h.ok()) {
        if (h->rank <= n / 2 || h->rank >= n) abort();
      }
      break;
    case 5:
      if (auto b = wire::ParseEndpointBlob(bytes); b.ok()) {
        if (b->fabric && (b->name.empty() || b->name.size() > wire::kMaxEndpointName)) abort();
        if (wire::SerializeEndpointBlob(*b) != bytes) abort();
      }
      break;
    case 6: (void)wire::ParseP2pHello(bytes, n); break;
    case 7: (void)wire::ParseP2pAck(bytes); break;
    case 8:
      if (auto h = wire::ParseP2pDataHeader(bytes, static_cast<uint32_t>(n), 64); h.ok()) {
        if (h->length > 64) abort();
      }
      break;
    case 9:
      if (auto f = wire::ParseTcpFrame(bytes, static_cast<uint32_t>(n), 64); f.ok()) {
        if (f->length != 64) abort();
      }
      break;
  }
  return 0;
}
