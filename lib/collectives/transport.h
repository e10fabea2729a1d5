// The one interface the inter-host algorithms see: a duplex byte exchange
// with another rank of the job. Implementations: libfabric (RDM endpoints;
// EFA on an instance, tcp;ofi_rxm elsewhere) and, only when libfabric finds
// no provider, a TCP mesh of our own. Ranks on one host talk through shared
// memory (shm_ops.cc), never through a Transport.
#ifndef NEURON_LIB_COLLECTIVES_TRANSPORT_H_
#define NEURON_LIB_COLLECTIVES_TRANSPORT_H_

#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/collectives/net.h"

namespace neuron::collectives {

// How a transport reports to its communicator while it waits.
struct TransferHooks {
  // Called at least every 50 ms while a transfer waits; a non-OK status
  // (another rank announced a loss) ends the transfer with it.
  std::function<absl::Status()> check;
  // The status for a peer that closed its connection or made no progress
  // before the deadline (names the lost rank).
  std::function<absl::Status(int peer, const std::string& why)> lost;
  const net::Deadline* deadline = nullptr;  // of the operation in progress
};

// The collective streams: 0 carries the collectives, 1 point-to-point.
inline constexpr int kTransportStreams = 2;
inline constexpr int kCollectiveStream = 0;
inline constexpr int kPointToPointStream = 1;

// What a transport did, for reports (neuron-allreduce --show-algorithm).
struct TransportStats {
  int inflight_limit[kTransportStreams] = {};  // messages each stream may have in flight
  int max_inflight[kTransportStreams] = {};    // the most it had, each way
  uint64_t registrations = 0;  // memory registrations made with the fabric
  uint64_t region_hits = 0;    // transfers served by a region registered once
  std::string memory;          // how memory is registered, in words
};

// What a transport needs from the job to set itself up.
struct TransportSetup {
  int rank = 0;
  int world = 1;
  std::vector<sockaddr_in> addrs;  // every rank's data address (port unused)
  uint64_t chunk_bytes = 2u << 20;  // NEURON_RT_CC_CHUNK_SIZE
  uint64_t channel_buffers = 8;     // NEURON_RT_CC_CHANNEL_BUFFER_N
  // NEURON_RT_CC_STREAM_SPLIT: the messages in flight are divided between
  // the streams as W0:W1 (stream 0 the collectives, stream 1 point-to-point),
  // each keeping at least one.
  uint32_t stream_weights[kTransportStreams] = {3, 1};
  // NEURON_RT_ENABLE_P2P: which driver interface the registrations name.
  bool p2p = false;
  // Busy-poll instead of sleeping in poll(2) (NEURON_RT_ONE_THREAD_PER_CORE:
  // a CPU of its own for every rank, so nobody waits for it).
  bool spin = false;
  // Gives every rank's blob (index = rank) for this rank's; collective.
  std::function<absl::StatusOr<std::vector<std::string>>(const std::string&)> all_gather;
  // The TCP mesh's sockets, one per rank (-1: self), when it is the transport.
  std::function<absl::StatusOr<std::vector<int>>()> tcp_mesh;
  TransferHooks hooks;
};

// One step of a ring pipeline (Transport::RingPipeline): what it sends to
// the next rank and where what the previous rank sends lands.
struct PipelineStep {
  const void* send = nullptr;
  size_t send_bytes = 0;
  void* recv = nullptr;
  size_t recv_bytes = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // What carries the bytes, e.g. "libfabric tcp;ofi_rxm" or "tcp".
  virtual std::string Name() const = 0;
  // Sends sbytes to rank `to` while receiving rbytes from rank `from`
  // (either -1: none). Both ends of every pair make matching calls in the
  // same order.
  // `stream` (kCollectiveStream or kPointToPointStream) says whose share
  // of the messages in flight the transfer uses.
  virtual absl::Status Exchange(int to, const void* sbuf, size_t sbytes,
                                int from, void* rbuf, size_t rbytes, int stream) = 0;
  // Exchange, calling on_received(offset, bytes) for each piece of rbuf once
  // it has arrived (pieces in any order, together covering rbytes), so the
  // caller works on what is there while the rest is in flight (a ring
  // reduces each piece as it lands). Without pieces of its own a transport
  // hands over the whole buffer at the end.
  virtual absl::Status ExchangeInPieces(int to, const void* sbuf, size_t sbytes, int from, void* rbuf,
                                        size_t rbytes, int stream,
                                        const std::function<void(size_t, size_t)>& on_received) {
    absl::Status st = Exchange(to, sbuf, sbytes, from, rbuf, rbytes, stream);
    if (st.ok() && from >= 0 && rbytes > 0) on_received(0, rbytes);
    return st;
  }
  // The steps of a ring as one pipeline: step j+1 sends what step j
  // received (send_bytes[j+1] == recv_bytes[j]) once on_received(j, offset,
  // bytes) has handed it over, piece by piece, so a piece travels on while
  // the rest of its step is still arriving and no link waits for a whole
  // step at the boundaries. A receive for step j is posted only after step
  // j-2 was handed over whole, so steps two apart may share a buffer.
  // Without a pipeline of its own a transport runs the steps one by one.
  virtual absl::Status RingPipeline(int to, int from, const std::vector<PipelineStep>& steps,
                                    int stream,
                                    const std::function<void(size_t, size_t, size_t)>& on_received) {
    for (size_t j = 0; j < steps.size(); ++j) {
      const PipelineStep& s = steps[j];
      absl::Status st = ExchangeInPieces(to, s.send, s.send_bytes, from, s.recv, s.recv_bytes,
                                         stream, [&](size_t offset, size_t bytes) {
                                           on_received(j, offset, bytes);
                                         });
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }
  virtual TransportStats Stats() const { return {}; }
  // Registers device memory with the fabric once, as one region
  // (NEURON_RT_REGISTER_HBM_MR); transfers inside it then register nothing.
  // Without regions every transfer registers its own buffers.
  virtual absl::Status AddRegion(const void* base, size_t bytes) { return absl::OkStatus(); }
};

// The libfabric transport when a provider serves this job's addresses
// (FI_PROVIDER chooses, else the best found), else the TCP mesh; every rank
// must make the same choice, so the first rank's choice is the job's.
absl::StatusOr<std::unique_ptr<Transport>> MakeInterHostTransport(
    const TransportSetup& setup);

// The provider libfabric would give an inter-host job from this host, for
// reports (neuron-ls --env): e.g. "tcp;ofi_rxm", or "" when none.
std::string BestFabricProvider();

}  // namespace neuron::collectives

#endif  // NEURON_LIB_COLLECTIVES_TRANSPORT_H_
