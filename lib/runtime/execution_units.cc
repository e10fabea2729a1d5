#include "lib/runtime/execution_units.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/str_format.h"
#include "lib/runtime/status.h"

namespace neuron::runtime {
namespace {

// The units and core the calling thread works for (null off the workers),
// so a callback that drains its own core is refused rather than deadlocking.
thread_local const void* t_worker_units = nullptr;
thread_local int t_worker_core = -1;

}  // namespace

const char* XuKindName(XuKind kind) {
  switch (kind) {
    case XuKind::kTensorRead: return "TENSOR_READ";
    case XuKind::kTensorWrite: return "TENSOR_WRITE";
    case XuKind::kTensorOp: return "TENSOR_OP";
    case XuKind::kCompute: return "COMPUTE";
    case XuKind::kCollectives: return "COLLECTIVES";
  }
  return "unknown";
}

absl::Status CheckXuQueue(XuKind kind, int queue) {
  const int k = static_cast<int>(kind);
  if (k < 0 || k >= kXuKindCount) {
    return RtError(NRT_INVALID, absl::StrFormat("unknown execution unit %d", k));
  }
  if (queue < 0 || queue >= kQueuesPerXu[k]) {
    return RtError(NRT_INVALID,
                   absl::StrFormat("queue %d is not a queue of the %s unit (it has %s)", queue,
                                   XuKindName(kind),
                                   kQueuesPerXu[k] == 1
                                       ? std::string("queue 0 only")
                                       : absl::StrFormat("queues 0-%d", kQueuesPerXu[k] - 1)));
  }
  return absl::OkStatus();
}

absl::Status CheckXuCore(int core) {
  if (core < 0 || core > kMaxXuCore) {
    return RtError(NRT_INVALID, absl::StrFormat("logical core %d is out of range", core));
  }
  return absl::OkStatus();
}

void ErrorTracker::Add(XuSeq seq, NRT_STATUS status) {
  std::lock_guard<std::mutex> lock(mu_);
  recorded_.push_back({seq, status});
}

std::vector<ErrorTracker::Error> ErrorTracker::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(recorded_, {});
}

struct ExecutionUnits::Queue {
  Queue(int core, XuKind kind, int index)
      : id(MakeXuId(core, kind, index)), core(core), kind(kind) {}

  const XuId id;
  const int core;
  const XuKind kind;

  std::mutex mu;
  std::condition_variable work_cv;                   // a request arrived, or stop
  std::condition_variable done_cv;                   // a request completed
  std::deque<std::pair<uint64_t, Request>> pending;  // number -> request, in order
  uint64_t next = 1;                                 // the number the next request gets
  uint64_t completed = 0;                            // the last finished (they finish in order)
  std::multimap<uint64_t, int> waiters;              // number -> our own dup of an eventfd
  bool stop = false;
  std::thread worker;

  // Makes every waiter for a number up to `completed` readable; mu held.
  void SignalWaitersLocked() {
    auto end = waiters.upper_bound(completed);
    for (auto it = waiters.begin(); it != end; ++it) {
      const uint64_t one = 1;
      // The eventfd counter cannot overflow from one write per handle.
      (void)!write(it->second, &one, sizeof one);
      close(it->second);
    }
    waiters.erase(waiters.begin(), end);
  }
};

struct ExecutionUnits::State {
  mutable std::mutex mu;
  std::map<XuId, std::shared_ptr<Queue>> queues;  // guarded by mu
  std::map<int, uint64_t> compute_in_flight;      // per core: queued + running; mu

  std::mutex callback_mu;
  ExecCallback callback;  // guarded by callback_mu
};

ExecutionUnits::ExecutionUnits() : state_(std::make_shared<State>()) {}

ExecutionUnits::~ExecutionUnits() { Shutdown(); }

void ExecutionUnits::Work(std::shared_ptr<State> state, std::shared_ptr<Queue> q) {
  t_worker_units = state.get();
  t_worker_core = q->core;
  for (;;) {
    uint64_t number;
    Request r;
    {
      std::unique_lock<std::mutex> lock(q->mu);
      q->work_cv.wait(lock, [&] { return q->stop || !q->pending.empty(); });
      // Stopping still runs what was queued: nothing is dropped.
      if (q->pending.empty()) return;
      number = q->pending.front().first;
      r = std::move(q->pending.front().second);
      q->pending.pop_front();
    }
    const NRT_STATUS status = r.run();
    const XuSeq seq = MakeSeq(q->id, number);
    if (status != NRT_SUCCESS && r.tracker != nullptr) r.tracker->Add(seq, status);
    if (q->kind == XuKind::kCompute) {
      ExecCallback callback;
      {
        std::lock_guard<std::mutex> lock(state->callback_mu);
        callback = state->callback;
      }
      // Before completion, so a finished request has had its callback.
      if (callback) callback(r.model_id, q->core, seq, status);
      std::lock_guard<std::mutex> lock(state->mu);
      auto it = state->compute_in_flight.find(q->core);
      if (it != state->compute_in_flight.end() && it->second > 0) --it->second;
    }
    {
      std::lock_guard<std::mutex> lock(q->mu);
      q->completed = number;
      q->SignalWaitersLocked();
    }
    q->done_cv.notify_all();
  }
}

absl::StatusOr<XuSeq> ExecutionUnits::Enqueue(int core, XuKind kind, int queue, Request r) {
  if (absl::Status s = CheckXuQueue(kind, queue); !s.ok()) return s;
  if (absl::Status s = CheckXuCore(core); !s.ok()) return s;
  if (r.tracker != nullptr && r.tracker->core() != core) {
    return RtError(NRT_INVALID,
                   absl::StrFormat("the error tracker is for logical core %d, the request runs "
                                   "on core %d",
                                   r.tracker->core(), core));
  }
  const XuId id = MakeXuId(core, kind, queue);
  std::shared_ptr<Queue> q;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    std::shared_ptr<Queue>& slot = state_->queues[id];
    if (slot == nullptr) {
      auto fresh = std::make_shared<Queue>(core, kind, queue);
      try {
        fresh->worker = std::thread(Work, state_, fresh);
      } catch (const std::system_error& e) {
        state_->queues.erase(id);
        return RtError(NRT_RESOURCE, absl::StrFormat("cannot start the %s worker of core %d: %s",
                                                     XuKindName(kind), core, e.what()));
      }
      slot = std::move(fresh);
    }
    q = slot;
    if (kind == XuKind::kCompute) {
      const uint64_t limit = std::max<uint64_t>(1, r.compute_limit);
      uint64_t& in_flight = state_->compute_in_flight[core];
      if (in_flight >= limit) {
        return RtError(NRT_QUEUE_FULL,
                       absl::StrFormat("the COMPUTE queue of logical core %d already holds %d "
                                       "requests (NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS=%d)",
                                       core, in_flight, limit));
      }
      ++in_flight;
    }
  }
  XuSeq seq;
  {
    std::lock_guard<std::mutex> lock(q->mu);
    const uint64_t number = q->next++;
    seq = MakeSeq(id, number);
    q->pending.emplace_back(number, std::move(r));
  }
  q->work_cv.notify_one();
  return seq;
}

absl::StatusOr<std::shared_ptr<ExecutionUnits::Queue>> ExecutionUnits::FindSeq(XuSeq seq) const {
  const uint64_t number = SeqNumber(seq);
  std::shared_ptr<Queue> q;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    auto it = state_->queues.find(SeqXuId(seq));
    if (it != state_->queues.end()) q = it->second;
  }
  bool scheduled = false;
  if (q != nullptr) {
    std::lock_guard<std::mutex> lock(q->mu);
    scheduled = number >= 1 && number < q->next;
  }
  if (!scheduled) {
    return RtError(NRT_INVALID,
                   absl::StrFormat("sequence id 0x%016x names no scheduled request", seq));
  }
  return q;
}

absl::StatusOr<bool> ExecutionUnits::IsCompleted(XuSeq seq) const {
  absl::StatusOr<std::shared_ptr<Queue>> q = FindSeq(seq);
  if (!q.ok()) return q.status();
  std::lock_guard<std::mutex> lock((*q)->mu);
  return SeqNumber(seq) <= (*q)->completed;
}

XuSeq ExecutionUnits::LastCompleted(int core, XuKind kind, int queue) const {
  const XuId id = MakeXuId(core, kind, queue);
  std::shared_ptr<Queue> q;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    auto it = state_->queues.find(id);
    if (it != state_->queues.end()) q = it->second;
  }
  uint64_t completed = 0;
  if (q != nullptr) {
    std::lock_guard<std::mutex> lock(q->mu);
    completed = q->completed;
  }
  return MakeSeq(id, completed);
}

absl::StatusOr<int> ExecutionUnits::CompletionFd(XuSeq seq) {
  absl::StatusOr<std::shared_ptr<Queue>> found = FindSeq(seq);
  if (!found.ok()) return found.status();
  Queue& q = **found;
  const uint64_t number = SeqNumber(seq);
  const int efd = eventfd(0, EFD_CLOEXEC);
  if (efd < 0) {
    return RtError(NRT_RESOURCE, absl::StrFormat("eventfd: %s", std::strerror(errno)));
  }
  std::lock_guard<std::mutex> lock(q.mu);
  if (number <= q.completed) {
    const uint64_t one = 1;
    (void)!write(efd, &one, sizeof one);
  } else {
    // The worker signals its own duplicate, so a caller closing the handle
    // early (and the number being reused) cannot redirect the write.
    const int mine = fcntl(efd, F_DUPFD_CLOEXEC, 0);
    if (mine < 0) {
      const int e = errno;
      close(efd);
      return RtError(NRT_RESOURCE, absl::StrFormat("dup: %s", std::strerror(e)));
    }
    q.waiters.emplace(number, mine);
  }
  return efd;
}

void ExecutionUnits::SetExecCallback(ExecCallback callback) {
  std::lock_guard<std::mutex> lock(state_->callback_mu);
  state_->callback = std::move(callback);
}

absl::Status ExecutionUnits::Drain(int core) {
  if (t_worker_units == state_.get() && t_worker_core == core) {
    return RtError(NRT_INVALID,
                   absl::StrFormat("called from a worker of core %d (an async callback), which "
                                   "would wait for itself",
                                   core));
  }
  // What is queued now; requests scheduled while waiting are not waited for.
  std::vector<std::pair<std::shared_ptr<Queue>, uint64_t>> targets;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    for (auto& [id, q] : state_->queues) {
      if (q->core != core) continue;
      std::lock_guard<std::mutex> qlock(q->mu);
      targets.emplace_back(q, q->next - 1);
    }
  }
  for (auto& [q, last] : targets) {
    std::unique_lock<std::mutex> lock(q->mu);
    q->done_cv.wait(lock, [&] { return q->completed >= last; });
  }
  return absl::OkStatus();
}

void ExecutionUnits::Shutdown() {
  std::map<XuId, std::shared_ptr<Queue>> queues;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    queues.swap(state_->queues);
  }
  for (auto& [id, q] : queues) {
    {
      std::lock_guard<std::mutex> lock(q->mu);
      q->stop = true;
    }
    q->work_cv.notify_all();
  }
  for (auto& [id, q] : queues) {
    if (!q->worker.joinable()) continue;
    // Called from a worker's callback: that worker finishes its queue after
    // the callback returns (it holds the state it needs).
    if (q->worker.get_id() == std::this_thread::get_id()) {
      q->worker.detach();
    } else {
      q->worker.join();
    }
  }
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->compute_in_flight.clear();
  }
  // A callback belongs to whoever registered it before this shutdown.
  SetExecCallback(nullptr);
}

}  // namespace neuron::runtime
