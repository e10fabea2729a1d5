#include "lib/collectives/wire.h"

#include <arpa/inet.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace neuron::collectives::wire {
namespace {

static_assert(sizeof(Challenge) == 32 && sizeof(Proof) == 56 && sizeof(Verdict) == 40);
static_assert(sizeof(BootHello) == 32 + 168 + 56 && sizeof(MeshHello) == 16 + 56);
static_assert(sizeof(P2pHello) == 72 && sizeof(P2pAck) == 40 && sizeof(P2pDataHeader) == 16);
static_assert(sizeof(TcpFrame) == 16);

template <typename T>
absl::StatusOr<T> Fixed(std::string_view bytes, const char* what) {
  if (bytes.size() != sizeof(T)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " of ", bytes.size(), " bytes, not ", sizeof(T)));
  }
  T t;
  std::memcpy(&t, bytes.data(), sizeof(T));
  return t;
}

absl::Status Magic(uint32_t got, uint32_t want, const char* what) {
  if (got == want) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("not a ", what, " (magic ", absl::Hex(got), ")"));
}

}  // namespace

absl::StatusOr<Challenge> ParseChallenge(std::string_view bytes) {
  auto c = Fixed<Challenge>(bytes, "challenge");
  if (!c.ok()) return c.status();
  if (absl::Status st = Magic(c->magic, kChallengeMagic, "rank's challenge"); !st.ok()) return st;
  if (c->version != kProtocolVersion) {
    return absl::InvalidArgumentError(absl::StrCat("protocol version ", c->version, ", this build speaks ",
                                                   kProtocolVersion, " (the same build on every rank?)"));
  }
  return c;
}

absl::StatusOr<Verdict> ParseVerdict(std::string_view bytes) {
  auto v = Fixed<Verdict>(bytes, "verdict");
  if (!v.ok()) return v.status();
  if (absl::Status st = Magic(v->magic, kVerdictMagic, "rank's verdict"); !st.ok()) return st;
  if (v->code > kSecretMismatch) {
    return absl::InvalidArgumentError(absl::StrCat("verdict code ", v->code, " is unknown"));
  }
  return v;
}

absl::StatusOr<BootHello> ParseBootHello(std::string_view bytes, int world) {
  auto h = Fixed<BootHello>(bytes, "hello");
  if (!h.ok()) return h.status();
  if (absl::Status st = Magic(h->magic, kBootHelloMagic, "rank's hello"); !st.ok()) return st;
  if (world < 1 || h->world != static_cast<uint32_t>(world)) {
    return absl::InvalidArgumentError(absl::StrCat("rank ", h->rank, " says the world has ", h->world,
                                                   " ranks, rank 0 says ", world));
  }
  if (h->rank >= h->world) {
    return absl::InvalidArgumentError(
        absl::StrCat("a rank numbered ", h->rank, " joined a world of ", world));
  }
  if (h->arena_bytes > kMaxArenaBytes || h->arena_bytes % 4096 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rank ", h->rank, " says its arena has ", h->arena_bytes,
        " bytes (at most 1 TiB, in whole pages)"));
  }
  if (h->data_port == 0 || h->data_port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", h->rank, " says it listens on port ", h->data_port));
  }
  return h;
}

std::string SerializeRankTable(const RankTable& table) {
  std::string out(sizeof(uint64_t) + sizeof(BootHello) * table.ranks.size(), '\0');
  std::memcpy(out.data(), &table.nonce, sizeof(uint64_t));
  if (!table.ranks.empty()) {
    std::memcpy(out.data() + sizeof(uint64_t), table.ranks.data(),
                sizeof(BootHello) * table.ranks.size());
  }
  return out;
}

absl::StatusOr<RankTable> ParseRankTable(std::string_view bytes, int world) {
  if (world < 1 || bytes.size() != sizeof(uint64_t) + sizeof(BootHello) * static_cast<size_t>(world)) {
    return absl::InvalidArgumentError(absl::StrCat("a rank table of ", bytes.size(),
                                                   " bytes for a world of ", world));
  }
  RankTable t;
  std::memcpy(&t.nonce, bytes.data(), sizeof(uint64_t));
  t.ranks.resize(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    auto h = ParseBootHello(bytes.substr(sizeof(uint64_t) + sizeof(BootHello) * r, sizeof(BootHello)),
                            world);
    if (!h.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("rank table entry ", r, ": ", h.status().message()));
    }
    if (h->rank != static_cast<uint32_t>(r)) {
      return absl::InvalidArgumentError(
          absl::StrCat("rank table entry ", r, " is rank ", h->rank, "'s"));
    }
    t.ranks[r] = *h;
  }
  return t;
}

absl::StatusOr<MeshHello> ParseMeshHello(std::string_view bytes, int me, int world, int channel) {
  auto h = Fixed<MeshHello>(bytes, "mesh hello");
  if (!h.ok()) return h.status();
  if (absl::Status st = Magic(h->magic, kMeshHelloMagic, "rank's mesh hello"); !st.ok()) return st;
  if (h->rank <= me || h->rank >= world) {
    return absl::InvalidArgumentError(absl::StrCat("a mesh hello from rank ", h->rank, " to rank ", me,
                                                   " (only ranks ", me + 1, "..", world - 1, " dial it)"));
  }
  if (h->channel != channel) {
    return absl::InvalidArgumentError(absl::StrCat("rank ", h->rank, " dialed channel ", h->channel,
                                                   " while rank ", me, " sets up channel ", channel));
  }
  return h;
}

std::string SerializeEndpointBlob(const EndpointBlob& blob) {
  if (!blob.fabric) return absl::StrCat("T", blob.why);
  return absl::StrCat("F", blob.provider, std::string(1, '\0'), blob.name);
}

absl::StatusOr<EndpointBlob> ParseEndpointBlob(std::string_view blob) {
  EndpointBlob out;
  if (blob.empty() || (blob[0] != 'F' && blob[0] != 'T')) {
    return absl::InvalidArgumentError("an endpoint description that is neither libfabric's nor TCP's");
  }
  if (blob[0] == 'T') {
    out.why = std::string(blob.substr(1));
    return out;
  }
  const size_t nul = blob.find('\0');
  if (nul == std::string_view::npos || nul == 1) {
    return absl::InvalidArgumentError("a libfabric endpoint description without a provider");
  }
  out.fabric = true;
  out.provider = std::string(blob.substr(1, nul - 1));
  out.name = std::string(blob.substr(nul + 1));
  if (out.name.empty() || out.name.size() > kMaxEndpointName) {
    return absl::InvalidArgumentError(absl::StrCat("a libfabric endpoint name of ", out.name.size(),
                                                   " bytes (1..", kMaxEndpointName, ")"));
  }
  return out;
}

absl::StatusOr<P2pHello> ParseP2pHello(std::string_view bytes, int my_lnc) {
  auto h = Fixed<P2pHello>(bytes, "send/recv hello");
  if (!h.ok()) return h.status();
  if (absl::Status st = Magic(ntohl(h->magic), kP2pHelloMagic, "send/recv hello"); !st.ok()) return st;
  if (static_cast<int>(ntohl(h->dst_lnc)) != my_lnc) {
    return absl::InvalidArgumentError(
        absl::StrCat("a send/recv hello for lnc ", ntohl(h->dst_lnc), " reached lnc ", my_lnc));
  }
  if (ntohl(h->src_lnc) > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("a send/recv hello from lnc ", ntohl(h->src_lnc)));
  }
  return h;
}

absl::StatusOr<P2pAck> ParseP2pAck(std::string_view bytes) {
  auto a = Fixed<P2pAck>(bytes, "send/recv acknowledgement");
  if (!a.ok()) return a.status();
  if (absl::Status st = Magic(ntohl(a->magic), kP2pAckMagic, "send/recv acknowledgement");
      !st.ok()) {
    return st;
  }
  return a;
}

absl::StatusOr<P2pDataHeader> ParseP2pDataHeader(std::string_view bytes, uint32_t seq,
                                                 uint64_t posted) {
  auto h = Fixed<P2pDataHeader>(bytes, "message header");
  if (!h.ok()) return h.status();
  if (absl::Status st = Magic(h->magic, kP2pDataMagic, "message header"); !st.ok()) return st;
  if (h->seq != seq) {
    return absl::InvalidArgumentError(
        absl::StrCat("message ", h->seq, " arrived where message ", seq, " was due"));
  }
  if (h->length > posted) {
    return absl::InvalidArgumentError(
        absl::StrCat("a ", h->length, "-byte tensor to a ", posted, "-byte receive"));
  }
  return h;
}

absl::StatusOr<TcpFrame> ParseTcpFrame(std::string_view bytes, uint32_t op, uint64_t expected) {
  auto f = Fixed<TcpFrame>(bytes, "transfer header");
  if (!f.ok()) return f.status();
  if (absl::Status st = Magic(f->magic, kTcpFrameMagic, "transfer header"); !st.ok()) return st;
  if (f->op != op) {
    return absl::InvalidArgumentError(
        absl::StrCat("transfer ", f->op, " arrived where transfer ", op, " was due"));
  }
  if (f->length != expected) {
    return absl::InvalidArgumentError(absl::StrCat("a transfer of ", f->length, " bytes where ",
                                                   expected, " were due"));
  }
  return f;
}

}  // namespace neuron::collectives::wire
