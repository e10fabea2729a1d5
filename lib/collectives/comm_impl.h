// The communicator's state, shared by its bootstrap (communicator.cc), the
// loss roll call (roll_call.cc), the shared-memory algorithms (shm_ops.cc)
// and the inter-host algorithms (inter_host_ops.cc).
// Internal to lib/collectives.
#ifndef NEURON_LIB_COLLECTIVES_COMM_IMPL_H_
#define NEURON_LIB_COLLECTIVES_COMM_IMPL_H_

#include <netinet/in.h>

#include <atomic>
#include <memory>
#include <cstdint>
#include <string>
#include <vector>

#include "lib/collectives/communicator.h"
#include "lib/collectives/net.h"
#include "lib/collectives/transport.h"

namespace neuron::collectives {

// One cache line per counter so ranks spinning on one do not disturb
// writers of another. A waiter that stops spinning sleeps on the futex of
// `value` after counting itself in `waiters`; Publish wakes it.
struct alignas(64) Counter {
  std::atomic<uint64_t> value;
  std::atomic<uint32_t> waiters;
  uint32_t unused;
  // posted only: two 24-byte slots (by step parity) for tiny messages, so
  // one cache-line transfer carries both the flag and the data.
  char payload[48];
};
inline constexpr size_t kInlineBytes = 24;

// Stores v and wakes sleepers (sequentially consistent against the
// waiter's increment of `waiters`, so no wake-up is lost).
void Publish(Counter& c, uint64_t v);

struct RankFlags {
  Counter posted;   // staging slot of the step is written
  Counter reduced;  // result slot of the step is written
  Counter done;     // finished reading the peers' slots of the step
  Counter barrier;  // barrier epoch reached
  Counter entered;  // entered a zero-copy step; payload: its buffers
};

inline constexpr size_t kSegmentHeaderBytes = 4096;

struct SegmentHeader {
  uint64_t magic;
  uint32_t nlocal;
  std::atomic<int32_t> lost;  // 1 + the rank declared lost, 0: none
};

// Whether [offset, offset + bytes) lies in an arena of arena_bytes, with no
// overflow: offsets another rank publishes are checked so before use.
inline bool InArena(uint64_t offset, uint64_t bytes, uint64_t arena_bytes) {
  return offset <= arena_bytes && arena_bytes - offset >= bytes;
}

struct Peer {
  int pid = 0;
  std::string host;  // host key: ranks with the same key share memory
  std::string name;  // the host as people know it (name or address)
  int host_id = 0;   // index of its host (distinct keys in rank order)
  sockaddr_in data_addr{};
  int local = -1;  // index among this host's ranks, -1 on other hosts
  uint64_t arena_bytes = 0;
  size_t arena_offset = 0;  // in the segment
};

enum class InterHostAlgorithm { kRing, kRdh, kHier };
const char* InterHostAlgorithmName(InterHostAlgorithm a);  // "ring", "rdh", "hier"

// One operation's view of its group.
struct GroupView {
  std::vector<int> members;  // world ranks, in group order
  int me = 0;                // this rank's index in members
  bool local = true;         // every member on this host
};

class Communicator::Impl {
 public:
  CommOptions opt;
  int rank = 0;
  int world = 1;
  int nhosts = 1;
  int machine_ranks = 0;  // ranks sharing this rank's kernel (and CPUs)
  std::vector<Peer> peers;
  uint64_t nonce = 0;

  // Bootstrap sockets: to rank 0 (others), from every rank (rank 0).
  int boot_fd = -1;
  std::vector<int> boot_fds;
  int data_listen_fd = -1;
  uint64_t barrier_epoch = 0;

  // Across hosts: the transport, and a TCP control connection per rank
  // that carries only the loss roll call (roll_call.cc).
  std::unique_ptr<Transport> transport;
  std::vector<int> control;
  std::vector<bool> answered;  // said 'R' (roll call) or 'B' (left)
  std::vector<bool> left;      // closed the communicator normally
  absl::Status broken;         // the first failure; later operations repeat it
  // Until Create returns: a rank may then be busy for seconds in a call
  // that cannot listen (libfabric's discovery), so a roll call waits for it
  // until the set-up's deadline rather than a second.
  bool setting_up = true;
  uint64_t network_bytes = 0;  // sent through the transport
  // A roll call another rank started, or a peer's control connection that
  // closed without a goodbye: the operation's status then (OK: neither).
  absl::Status CheckControl();
  // Asks every rank to answer within a second; those that do not are lost.
  // suspect (-1: none) and why describe what this rank saw first.
  absl::Status RollCall(int suspect, const std::string& why);
  // Receives from a bootstrap connection while listening on the control
  // connections: a rank waiting here still answers another rank's roll call
  // (and hears a peer's process end), so a rank lost during set-up is named
  // the same on every survivor. Without control connections, net::RecvAll.
  absl::Status RecvBoot(int fd, void* data, size_t bytes, net::Deadline until);
  void SayGoodbye();
  std::string HostOf(int r) const;  // "host NAME (ADDR)"

  // Shared memory with this host's ranks.
  char* shm = nullptr;
  size_t shm_size = 0;
  SegmentHeader* header = nullptr;
  size_t data_offset = 0;  // slots start here, after header and flags
  size_t chunk = 0;       // bytes per slot
  uint64_t nbuf = 0;      // slots per rank
  size_t small_bytes = 0;  // latency-path limit
  int latency_spins = 0;   // pauses before the latency path sleeps
  // This machine's ranks outnumber its CPUs: a waiter yields its CPU (to the
  // rank it waits for, most likely) instead of pausing.
  bool oversubscribed = false;
  uint64_t step = 0;      // next pipeline step (identical on every rank)
  std::vector<std::vector<int>> slot_readers;  // per slot: last readers
  std::vector<uint64_t> slot_step;             // per slot: last step + 1
  std::vector<int> inline_readers[2];          // the same for the payloads
  uint64_t inline_step[2] = {0, 0};
  std::vector<uint64_t> known_done;            // per local rank, cached
  std::vector<char> scratch;                   // ring receive buffer
  std::vector<char> hier_scratch, slice, region;  // hier's padding, slices
  size_t rdh_doubling_bytes = 16 * 1024;       // rdh: whole vectors up to here
  size_t rdh_bytes = 64 * 1024;                // auto: rdh up to here, then ring

  net::Deadline deadline;  // of the operation in progress

  ~Impl();

  // communicator.cc
  absl::Status Bootstrap();
  absl::Status SetupShm();
  absl::Status SetupTransport();
  // A TCP connection with every other rank (-1: self): the higher rank
  // connects to the lower one's data listener and names the channel.
  absl::StatusOr<std::vector<int>> ConnectMesh(int channel);
  // Every rank's blob, through rank 0 (set-up only).
  absl::StatusOr<std::vector<std::string>> BootAllGather(const std::string& mine);
  absl::Status SocketBarrier(bool ok);
  // The caller's group; valid until the next call (no allocation for the
  // whole world).
  absl::StatusOr<const GroupView*> View(const Groups& groups);
  GroupView world_view, group_view;
  void StartOp() {
    deadline = net::Clock::now() + std::chrono::seconds(opt.timeout_s);
  }
  absl::Status Lost(int peer, const std::string& why);

  // shm_ops.cc. Pipeline steps an operation takes: the same on every rank
  // whatever path its group takes, so the step numbers stay in agreement.
  uint64_t AllReduceSteps(size_t count, size_t es, size_t g) const;
  uint64_t ReduceScatterSteps(size_t count, size_t es, size_t g) const;
  uint64_t CopySteps(size_t bytes, size_t g) const;
  RankFlags* Flags(int rank) const;
  char* Staging(int rank, uint64_t s) const;
  char* Result(int rank, uint64_t s) const;
  // spins: pauses before sleeping (0: the default for bulk transfers).
  absl::Status WaitFlag(Counter RankFlags::*which, const std::vector<int>& ranks,
                        int skip, uint64_t target, int spins = 0);
  absl::Status BeginWrite(uint64_t s, const std::vector<int>& readers);
  absl::Status WaitReaders(std::vector<int>& last, uint64_t& last_step,
                           uint64_t s, const std::vector<int>& readers);
  absl::Status ShmAllReduce(const GroupView& g, const char* in, char* out,
                            size_t count, DataType type, ReduceOp op);
  absl::Status PipelinedAllReduce(const GroupView& g, const char* in, char* out,
                                  size_t count, DataType type, ReduceOp op);
  absl::Status ZeroCopyAllReduce(const GroupView& g, const char* in, char* out,
                                 size_t count, DataType type, ReduceOp op,
                                 bool* done);
  char* ArenaOf(int rank) const { return shm + peers[rank].arena_offset; }
  absl::Status ShmReduceScatter(const GroupView& g, const char* in, char* out,
                                size_t count, DataType type, ReduceOp op);
  absl::Status ShmAllGather(const GroupView& g, const char* in, char* out,
                            size_t bytes);
  absl::Status ShmBroadcast(const GroupView& g, const char* in, char* out,
                            size_t bytes, int root);
  absl::Status ShmSendRecv(const char* in, int to, char* out, int from,
                           size_t bytes);
  absl::Status ShmBarrier();

  bool UsesShmBarrier() const { return opt.hw_barrier && header != nullptr && nhosts == 1; }

  // The algorithm an all-reduce of `bytes` per rank across hosts takes;
  // the same on every rank (it looks at every group, not just this one's).
  InterHostAlgorithm ChooseInterHost(const Groups& groups, size_t bytes) const;

  // inter_host_ops.cc. The bodies work in place on out and take no
  // pipeline steps; their callers account for them.
  absl::Status Xfer(int to, const void* sbuf, size_t sbytes, int from,
                    void* rbuf, size_t rbytes, int stream = kCollectiveStream);
  // Xfer that reduces what it receives into `into` (count elements) piece
  // by piece as the pieces land, overlapping the arithmetic with the rest
  // of the transfer.
  absl::Status XferReducing(int to, const void* sbuf, size_t sbytes, int from, void* rbuf,
                            char* into, size_t count, DataType type, ReduceOp op);
  // Reads `in` (which may be `out`) and writes every byte of `out`.
  absl::Status RingAllReduceBody(const GroupView& g, const char* in, char* out, size_t count,
                                 DataType type, ReduceOp op);
  absl::Status RdhAllReduceBody(const GroupView& g, char* out, size_t count,
                                DataType type, ReduceOp op);
  absl::Status HierAllReduce(const GroupView& g, const char* in, char* out,
                             size_t count, DataType type, ReduceOp op);
  absl::Status RingReduceScatter(const GroupView& g, const char* in, char* out,
                                 size_t count, DataType type, ReduceOp op);
  absl::Status RingAllGather(const GroupView& g, const char* in, char* out,
                             size_t bytes);
  absl::Status RingBroadcast(const GroupView& g, const char* in, char* out,
                             size_t bytes, int root);
};

}  // namespace neuron::collectives

#endif  // NEURON_LIB_COLLECTIVES_COMM_IMPL_H_
