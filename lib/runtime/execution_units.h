// Execution units (XUs): the engine behind the async API (nrt/nrt_async.h)
// and the async-exec callback and drain of nrt/nrt_experimental.h.
//
// Every (logical core, XU kind, queue) is a queue with its own worker
// thread, started by the first request scheduled on it, running requests
// strictly in order. A request is a closure returning an NRT_STATUS; a
// failing one is recorded in its ErrorTracker (if any) and completes all
// the same. Completion is observable by sequence id: polled (IsCompleted,
// LastCompleted), waited for through an eventfd (CompletionFd), or for a
// whole core (Drain).
//
// The engine knows nothing of the runtime's lifetime: whoever schedules
// decides what a request holds while it runs (libnrt holds the runtime
// around each one, so nrt_close first shuts the units down).
//
//   ExecutionUnits units;
//   auto seq = units.Enqueue(0, XuKind::kTensorWrite, 0, {.run = [] { ... }});
//   units.Drain(0);
//   units.Shutdown();  // runs what is queued, then joins the workers
#ifndef NEURON_LIB_RUNTIME_EXECUTION_UNITS_H_
#define NEURON_LIB_RUNTIME_EXECUTION_UNITS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "neuron/nrt_status.h"

namespace neuron::runtime {

// The kinds of XU, numbered as nrta_xu_t.
enum class XuKind : int {
  kTensorRead = 0,
  kTensorWrite = 1,
  kTensorOp = 2,  // tensor operations other than read and write
  kCompute = 3,
  kCollectives = 4,
};
inline constexpr int kXuKindCount = 5;

// Queues per XU kind, as the SDK's async API overview gives them: 2 per
// tensor unit (independent transfers need not wait on each other), 1 for
// COMPUTE, 3 for COLLECTIVES.
inline constexpr int kQueuesPerXu[kXuKindCount] = {2, 2, 2, 1, 3};

// "TENSOR_READ" ... "COLLECTIVES", "unknown" for a kind out of range.
const char* XuKindName(XuKind kind);

// Sequence ids. The 16-bit XU id of a queue: bits 15..8 the logical core,
// 7..4 the XU kind, 3..0 the queue. A sequence id puts it above a 48-bit
// number that counts from 1 per queue (0: nothing yet).
using XuId = uint16_t;
using XuSeq = uint64_t;
inline constexpr int kXuCoreShift = 8;
inline constexpr int kXuKindShift = 4;
inline constexpr int kMaxXuCore = 0xff;
inline constexpr int kSeqNumberBits = 48;
inline constexpr uint64_t kSeqNumberMask = (uint64_t{1} << kSeqNumberBits) - 1;

constexpr XuId MakeXuId(int core, XuKind kind, int queue) {
  return static_cast<XuId>((core << kXuCoreShift) | (static_cast<int>(kind) << kXuKindShift) |
                           queue);
}
constexpr XuSeq MakeSeq(XuId xu, uint64_t number) {
  return (static_cast<XuSeq>(xu) << kSeqNumberBits) | (number & kSeqNumberMask);
}
constexpr XuId SeqXuId(XuSeq seq) { return static_cast<XuId>(seq >> kSeqNumberBits); }
constexpr uint64_t SeqNumber(XuSeq seq) { return seq & kSeqNumberMask; }

// NRT_INVALID unless `kind` is a kind and `queue` one of its queues.
absl::Status CheckXuQueue(XuKind kind, int queue);
// NRT_INVALID unless `core` fits the core bits of an XU id.
absl::Status CheckXuCore(int core);

// The failures of the requests given the tracker, for one logical core.
// Shared with those requests (std::shared_ptr), so dropping a tracker
// while they are queued is safe, and a tracker outlives the units.
class ErrorTracker {
 public:
  struct Error {
    XuSeq seq = 0;
    NRT_STATUS status = NRT_SUCCESS;
  };

  explicit ErrorTracker(int core) : core_(core) {}
  ErrorTracker(const ErrorTracker&) = delete;
  ErrorTracker& operator=(const ErrorTracker&) = delete;

  int core() const { return core_; }
  void Add(XuSeq seq, NRT_STATUS status);
  // The failures recorded since the last call, oldest first.
  std::vector<Error> Take();

 private:
  const int core_;
  std::mutex mu_;
  std::vector<Error> recorded_;  // guarded by mu_
};

class ExecutionUnits {
 public:
  struct Request {
    std::function<NRT_STATUS()> run;
    std::shared_ptr<ErrorTracker> tracker;  // null: failures go nowhere
    uint32_t model_id = 0;                  // COMPUTE: what the callback reports
    // COMPUTE: how many requests may be queued or running on the core
    // (NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS; below 1 counts as 1).
    uint64_t compute_limit = 1;
  };
  // Called by a COMPUTE worker after each request, before it completes.
  using ExecCallback =
      std::function<void(uint32_t model_id, int core, XuSeq seq, NRT_STATUS status)>;

  ExecutionUnits();
  ~ExecutionUnits();  // Shutdown(); not from one of its own workers
  ExecutionUnits(const ExecutionUnits&) = delete;
  ExecutionUnits& operator=(const ExecutionUnits&) = delete;

  // Queues `request` on queue `queue` of unit `kind` of `core`, starting
  // its worker if needed; returns its sequence id. NRT_INVALID for a bad
  // queue or core or a tracker of another core, NRT_QUEUE_FULL past the
  // COMPUTE limit, NRT_RESOURCE when no worker thread can start.
  absl::StatusOr<XuSeq> Enqueue(int core, XuKind kind, int queue, Request request);

  // Whether request `seq` finished; NRT_INVALID when no request of that id
  // was scheduled (since the last Shutdown).
  absl::StatusOr<bool> IsCompleted(XuSeq seq) const;
  // The last finished sequence id of a queue (number 0 when none).
  XuSeq LastCompleted(int core, XuKind kind, int queue) const;
  // An eventfd (the caller's to close) that becomes readable when `seq`
  // finishes. NRT_INVALID as IsCompleted, NRT_RESOURCE when out of fds.
  absl::StatusOr<int> CompletionFd(XuSeq seq);

  void SetExecCallback(ExecCallback callback);

  // Waits for every request queued on `core` now (not those scheduled while
  // waiting). NRT_INVALID from a worker of that core (e.g. inside the
  // callback), which would wait for itself.
  absl::Status Drain(int core);

  // Stops every worker after it ran what was queued, and forgets the
  // queues (sequence numbers start over), the COMPUTE counts and the
  // callback. From a worker's own callback, that worker is detached and
  // finishes its queue once the callback returns.
  void Shutdown();

 private:
  struct Queue;
  struct State;  // shared with the workers, which may outlive a Shutdown

  static void Work(std::shared_ptr<State> state, std::shared_ptr<Queue> q);
  // The queue a sequence id names, or NRT_INVALID when none holds it.
  absl::StatusOr<std::shared_ptr<Queue>> FindSeq(XuSeq seq) const;

  std::shared_ptr<State> state_;
};

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_EXECUTION_UNITS_H_
