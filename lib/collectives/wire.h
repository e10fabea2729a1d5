// The messages ranks exchange while they set up a job, and their parsers:
// every value a peer sends is checked here before it sizes, indexes or
// offsets anything. Layouts are fixed-size structs in x86-64 byte order
// (both ends of every job run the same build); integers the kernel reads
// (addresses) are in network order.
//
// Every connection a listener takes starts the same way:
//   listener -> dialer  Challenge (magic, whether the job has a secret, a
//                       fresh nonce)
//   dialer -> listener  its hello, ending in a Proof: the dialer's nonce and
//                       HMAC-SHA256(secret, label, challenge nonce, hello)
//   listener -> dialer  Verdict (admitted or refused, and an HMAC of the
//                       dialer's nonce, so the dialer knows the listener
//                       holds the secret too)
// Without a secret the MACs are zero and only the magic tells a rank from
// a stranger.
#ifndef NEURON_LIB_COLLECTIVES_WIRE_H_
#define NEURON_LIB_COLLECTIVES_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace neuron::collectives::wire {

inline constexpr uint32_t kChallengeMagic = 0x4e434348u;  // "NCCH"
inline constexpr uint32_t kVerdictMagic = 0x4e434356u;    // "NCCV"
inline constexpr uint32_t kBootHelloMagic = 0x4e43434du;  // "NCCM"
inline constexpr uint32_t kMeshHelloMagic = 0x4e43434eu;  // "NCCN"
inline constexpr uint32_t kProtocolVersion = 3;  // 3: send/recv hellos answer a challenge
inline constexpr size_t kNonceBytes = 16;
inline constexpr size_t kMacBytes = 32;
// An arena larger than this is a corrupt or hostile hello (1 TiB).
inline constexpr uint64_t kMaxArenaBytes = uint64_t{1} << 40;
inline constexpr uint32_t kFlagSecret = 1;  // Challenge, Proof: the job has a secret

struct Challenge {
  uint32_t magic, version, flags, reserved;
  uint8_t nonce[kNonceBytes];
};

// Ends every hello.
struct Proof {
  uint32_t flags, reserved;
  uint8_t nonce[kNonceBytes];
  uint8_t mac[kMacBytes];
};

enum VerdictCode : uint32_t {
  kAdmitted = 0,
  kWrongSecret = 1,    // the MAC did not verify
  kSecretMismatch = 2,  // one side has a secret, the other none
};
struct Verdict {
  uint32_t magic, code;
  uint8_t mac[kMacBytes];
};

// A rank's hello to rank 0, and its entry in the rank table rank 0 sends.
struct BootHello {
  uint32_t magic;
  uint32_t rank;
  uint32_t world;
  uint32_t pid;
  uint32_t data_ip;    // network order
  uint32_t data_port;  // host order
  uint64_t arena_bytes;
  char host[64];     // the host key
  char name[64];     // the host as people know it
  char machine[40];  // the kernel's boot id
  Proof proof;
};

// A rank's hello on another rank's data listener (the TCP mesh).
struct MeshHello {
  uint32_t magic;
  int32_t rank, channel;
  uint32_t reserved;
  Proof proof;
};

absl::StatusOr<Challenge> ParseChallenge(std::string_view bytes);
absl::StatusOr<Verdict> ParseVerdict(std::string_view bytes);

// A hello (or table entry) of a world of `world`: magic, world, rank in
// range, arena in bounds and page-aligned, a port. The message names the
// first thing wrong.
absl::StatusOr<BootHello> ParseBootHello(std::string_view bytes, int world);

// What rank 0 sends every rank once all joined: u64 job nonce, then one
// BootHello per rank, in rank order (entry r is rank r's).
struct RankTable {
  uint64_t nonce = 0;
  std::vector<BootHello> ranks;
};
std::string SerializeRankTable(const RankTable& table);
absl::StatusOr<RankTable> ParseRankTable(std::string_view bytes, int world);

// A mesh hello for a listener of rank `me` in a world of `world`, on
// `channel`: only a higher rank dials a lower one.
absl::StatusOr<MeshHello> ParseMeshHello(std::string_view bytes, int me, int world, int channel);

// What each rank says of its libfabric endpoint during set-up:
// "F<provider>\0<endpoint name>" or "T<why not>".
struct EndpointBlob {
  bool fabric = false;
  std::string provider;  // fabric only
  std::string name;      // fabric only: the endpoint's address, opaque
  std::string why;       // not fabric: the reason
};
std::string SerializeEndpointBlob(const EndpointBlob& blob);
// A name longer than kMaxEndpointName is refused (providers' are tens of
// bytes); the caller checks it against its own provider's length.
inline constexpr size_t kMaxEndpointName = 256;
absl::StatusOr<EndpointBlob> ParseEndpointBlob(std::string_view blob);

// Point-to-point (point_to_point.h): the dialer's hello, the acceptor's
// ack, and the header before each message.
inline constexpr uint32_t kP2pHelloMagic = 0x4e535248;  // "NSRH"
inline constexpr uint32_t kP2pAckMagic = 0x4e535241;    // "NSRA"
inline constexpr uint32_t kP2pDataMagic = 0x4e535244;   // "NSRD"
struct P2pHello {
  uint32_t magic, src_lnc, dst_lnc, seq;  // network order
  Proof proof;
};
struct P2pAck {
  uint32_t magic, reserved;
  uint8_t mac[kMacBytes];
};
struct P2pDataHeader {
  uint32_t magic;
  uint32_t seq;     // the message's number on its connection
  uint64_t length;  // the sender's byte order: both ends are x86-64 here
};
absl::StatusOr<P2pHello> ParseP2pHello(std::string_view bytes, int my_lnc);
absl::StatusOr<P2pAck> ParseP2pAck(std::string_view bytes);
// A header for the receive numbered `seq`, posted with `posted` bytes.
absl::StatusOr<P2pDataHeader> ParseP2pDataHeader(std::string_view bytes, uint32_t seq,
                                                 uint64_t posted);

// The header before every transfer of the TCP transport (tcp_transport.cc).
inline constexpr uint32_t kTcpFrameMagic = 0x4e434346u;  // "NCCF"
struct TcpFrame {
  uint32_t magic;
  uint32_t op;      // per pair and direction, counted from 0
  uint64_t length;  // bytes that follow
};
absl::StatusOr<TcpFrame> ParseTcpFrame(std::string_view bytes, uint32_t op, uint64_t expected);

}  // namespace neuron::collectives::wire

#endif  // NEURON_LIB_COLLECTIVES_WIRE_H_
