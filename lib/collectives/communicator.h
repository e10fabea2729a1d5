// A communicator over ranks in one or several processes and hosts: the
// collectives engine behind neuron-allreduce and the executor's HLO
// collectives.
//
// Every operation is collective over the whole communicator: every rank
// calls it, in the same order, with the same sizes and groups (as HLO's
// replica groups, which partition the ranks). Groups then run independently.
// Ranks of one host exchange data through one shared-memory segment set up
// at Create() and reused; groups spanning hosts go through a Transport
// (libfabric, or TCP where libfabric has no provider).
//
// Failures carry the NRT status name first in the message, e.g.
// "NRT_TIMEOUT: rank 2 lost ..."; NrtStatusOf() recovers the code.
#ifndef NEURON_LIB_COLLECTIVES_COMMUNICATOR_H_
#define NEURON_LIB_COLLECTIVES_COMMUNICATOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/collectives/transport.h"
#include "lib/collectives/dtype.h"
#include "neuron/nrt_status.h"

namespace neuron::collectives {

using Group = std::vector<int>;
using Groups = std::vector<Group>;  // empty: all ranks in one group

struct CommOptions {
  int rank = 0;
  int world = 1;
  std::string root_comm_id;  // host:port of rank 0 (NEURON_RT_ROOT_COMM_ID)
  int listen_fd = -1;        // rank 0 only: an already listening socket
  // The address this rank is reached at and known by (NEURON_HOST_ADDR);
  // ranks with different addresses count as different hosts. Empty: the
  // host name.
  std::string host_addr;
  // The job's secret (NEURON_TOOLS_JOB_SECRET or _FILE; job_secret.h):
  // every rank proves it holds it when it connects. Empty: the job is
  // unauthenticated (strangers are still ignored, but could claim a rank).
  std::string secret;
  // Why the secret could not be read (Create fails with it), e.g. an
  // unreadable NEURON_TOOLS_JOB_SECRET_FILE.
  std::string secret_error;
  uint64_t timeout_s = 30;              // NEURON_RT_EXEC_TIMEOUT
  uint64_t chunk_bytes = 2u << 20;      // NEURON_RT_CC_CHUNK_SIZE
  uint64_t channel_buffers = 8;         // NEURON_RT_CC_CHANNEL_BUFFER_N
  // NEURON_RT_CC_STREAM_SPLIT: how the messages in flight between hosts are
  // divided between the collectives (W0) and point-to-point (W1).
  uint32_t stream_split[2] = {3, 1};
  // NEURON_RT_REGISTER_HBM_MR (in effect only with NEURON_RT_MAP_HBM): this
  // rank's arena and what AddDeviceMemory names are registered with the
  // fabric once, one region each; otherwise every transfer registers its
  // own buffers.
  bool register_device_memory = false;
  bool p2p_registration = false;        // NEURON_RT_ENABLE_P2P (else dma-buf)
  bool validate_groups = false;         // NEURON_RT_ENABLE_RG_VALIDATION
  bool hw_barrier = false;              // NEURON_RT_ENABLE_HW_EXECUTION_BARRIER
  bool one_thread_per_core = false;     // NEURON_RT_ONE_THREAD_PER_CORE
  // Ranks of a host that share one network proxy: in the hierarchical
  // all-reduce only one rank of every N talks to other hosts, for all N.
  uint64_t ranks_per_proxy = 1;         // NEURON_RT_RANKS_PER_NETWORK_PROXY
  std::vector<int> cpu_affinity;        // NEURON_RT_LOW_LATENCY_TASKS_CPU_AFFINITY
  uint64_t small_bytes = 0;             // latency-path limit (0: default)
  // Bytes of this rank's arena in the shared segment (0: none). Buffers an
  // all-reduce finds in the arenas of every member are read by the peers in
  // place, with no staging copy.
  uint64_t arena_bytes = 0;
  // The algorithm groups that span hosts take: "auto" (by size and
  // topology), "ring", "rdh" (recursive doubling-halving) or "hier"
  // (shared memory inside each host, ring across hosts).
  std::string algorithm = "auto";
  // For tests: called with this rank as it enters a stage of the set-up
  // across hosts ("endpoint exchange", "last barrier"), so a test can end
  // a rank at an exact point of it.
  std::function<void(int rank, std::string_view stage)> on_setup_stage;
};

// The NRT status a failed operation carries (NRT_SUCCESS for ok).
NRT_STATUS NrtStatusOf(const absl::Status& status);
// absl::Status whose message starts with the NRT status name.
absl::Status NrtError(NRT_STATUS code, const std::string& message);

// "auto", "ring", "rdh" or "hier" (CommOptions::algorithm).
bool IsInterHostAlgorithm(const std::string& name);

// Checks groups against the world: every rank in exactly one group, no
// empty or unequal groups, ranks in range. "" when well formed.
std::string ValidateGroups(const Groups& groups, int world);

class Communicator {
 public:
  // Joins the job: bootstrap through rank 0, shared memory with the ranks
  // of this host, TCP connections when the job spans hosts.
  static absl::StatusOr<std::unique_ptr<Communicator>> Create(
      const CommOptions& options);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const;
  int world() const;
  int hosts() const;  // distinct hosts in the job
  // This rank's arena (CommOptions::arena_bytes, page-aligned, populated),
  // or nullptr when it has none.
  char* Arena() const;

  // out = in0 OP in1 OP ... over the group (in may equal out).
  absl::Status AllReduce(const void* in, void* out, size_t count,
                         DataType type, ReduceOp op, const Groups& groups = {});
  // out = concatenation of every member's `count` elements, in group order.
  absl::Status AllGather(const void* in, void* out, size_t count,
                         DataType type, const Groups& groups = {});
  // in holds group-size blocks of `count` elements; out = this member's
  // block reduced over the group.
  absl::Status ReduceScatter(const void* in, void* out, size_t count,
                             DataType type, ReduceOp op,
                             const Groups& groups = {});
  // out = the root member's in (root: index within the group).
  absl::Status Broadcast(const void* in, void* out, size_t count,
                         DataType type, int root, const Groups& groups = {});
  // Each (source, target) pair sends source's in to target's out; a rank
  // that is no pair's target gets zeros. Every rank passes the same pairs.
  absl::Status Permute(const void* in, void* out, size_t bytes,
                       const std::vector<std::pair<int, int>>& pairs);
  // This rank's side of a permutation: send to `to`, receive from `from`
  // (-1: none). Every rank calls it at the same time.
  absl::Status SendRecv(const void* in, int to, void* out, int from,
                        size_t bytes);
  // Waits for every rank.
  absl::Status Barrier();

  // The algorithm an operation of `bytes` per rank takes here: on one
  // host "direct" (shared-memory latency path), "pipelined" (chunked
  // reduce-scatter/all-gather) or "zero-copy"; across hosts "ring", "rdh"
  // (recursive doubling-halving) or "hier" (shared memory inside each
  // host, ring or rdh across).
  std::string AlgorithmFor(const char* op, size_t bytes,
                           const Groups& groups = {}) const;
  // What carries the bytes between hosts: "libfabric PROVIDER", "tcp"
  // (no provider found), or "shared memory" when the job is on one host.
  std::string TransportName() const;
  // Bytes this rank has sent to other ranks through the transport.
  uint64_t NetworkBytesSent() const;
  // Names memory this rank's tensors live in (its device memory): with
  // register_device_memory it is registered with the fabric once, as one
  // region (where the provider refuses, a warning is logged and transfers
  // register their own buffers); otherwise nothing happens.
  absl::Status AddDeviceMemory(const void* base, size_t bytes);
  // What Barrier() waits on: "shared memory" (the hardware barrier's
  // counterpart: NEURON_RT_ENABLE_HW_EXECUTION_BARRIER with every rank on
  // one host) or "socket" (rank 0 collects and releases every rank).
  std::string BarrierKind() const;
  // The inter-host transport's figures (empty on one host).
  TransportStats NetworkStats() const;

  class Impl;

 private:
  explicit Communicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace neuron::collectives

#endif  // NEURON_LIB_COLLECTIVES_COMMUNICATOR_H_
