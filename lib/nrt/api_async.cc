// The async API (nrt/nrt_async.h): execution units, queues, sequence ids,
// completion handles and error trackers; and the async-exec callback and
// drain of nrt/nrt_experimental.h.
//
// Every (core, XU kind, queue) is a Queue with its own worker thread,
// started by the first request scheduled on it, running requests strictly
// in order. Arguments are checked when a request is scheduled (the error
// comes back from the call); what fails while it runs goes to the request's
// error tracker, and the request completes all the same. A worker holds the
// runtime (RuntimeRef) only while it runs one request: nrt_close stops the
// workers (ShutdownAsync, after running everything queued) before it takes
// the runtime exclusively.
#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/str_format.h"
#include "lib/nrt/api_state.h"
#include "lib/runtime/core.h"
#include "nrt/nrt_async.h"

namespace neuron::nrt_api {

// What a tracker records; shared with the requests given the tracker, so
// destroying a tracker while they are queued is safe (their errors are
// dropped with it).
struct TrackerState {
  std::mutex mu;
  std::vector<nrta_error_t> recorded;    // since the last get_list
  std::vector<nrta_error_t> handed_out;  // what the last get_list returned

  void Add(nrta_seq_t seq, NRT_STATUS status) {
    std::lock_guard<std::mutex> lock(mu);
    recorded.push_back({seq, static_cast<uint64_t>(status)});
  }
};

}  // namespace neuron::nrt_api

struct nrta_error_tracker {
  uint32_t lnc = 0;
  std::shared_ptr<neuron::nrt_api::TrackerState> state;
};

namespace neuron::nrt_api {
namespace {

// Queues per XU kind: tensor units have several so independent transfers
// need not wait on each other; COMPUTE and COLLECTIVES run one stream.
constexpr int kQueuesPerXu[NRTA_XU_TYPE_NUM] = {4, 4, 4, 1, 1};

// The 16-bit XU id of a queue: bits 15..8 the logical core, 7..4 the XU
// kind, 3..0 the queue. Sequence ids put it above a 48-bit number that
// counts from 1 per queue.
constexpr int kCoreShift = 8;
constexpr int kKindShift = 4;
constexpr int kMaxCore = 0xff;

nrta_xu_id_t XuId(int core, nrta_xu_t kind, int queue) {
  return static_cast<nrta_xu_id_t>((core << kCoreShift) | (static_cast<int>(kind) << kKindShift) |
                                   queue);
}
nrta_seq_t SeqId(nrta_xu_id_t xu, uint64_t number) {
  return (static_cast<nrta_seq_t>(xu) << 48) | (number & NRTA_SEQ_NUM_MASK);
}

const char* XuName(nrta_xu_t kind) {
  switch (kind) {
    case NRTA_XU_TENSOR_READ: return "TENSOR_READ";
    case NRTA_XU_TENSOR_WRITE: return "TENSOR_WRITE";
    case NRTA_XU_TENSOR_OP: return "TENSOR_OP";
    case NRTA_XU_COMPUTE: return "COMPUTE";
    case NRTA_XU_COLLECTIVES: return "COLLECTIVES";
    default: return "unknown";
  }
}

struct Request {
  uint64_t number = 0;
  const char* function = "";
  std::function<NRT_STATUS()> run;  // called holding the runtime
  std::function<void()> abandon;    // instead of `run` when the runtime is gone
  std::shared_ptr<TrackerState> tracker;
  nrt_model* model = nullptr;  // COMPUTE: for the async-exec callback
};

struct Queue {
  Queue(int core, nrta_xu_t kind, int index)
      : id(XuId(core, kind, index)), core(core), kind(kind) {}

  const nrta_xu_id_t id;
  const int core;
  const nrta_xu_t kind;

  std::mutex mu;
  std::condition_variable work_cv;       // a request arrived, or stop
  std::condition_variable done_cv;       // a request completed
  std::deque<Request> pending;           // not yet started, in order
  uint64_t next = 1;                     // the number the next request gets
  uint64_t completed = 0;                // the last finished (they finish in order)
  std::multimap<uint64_t, int> waiters;  // number -> our own dup of an eventfd
  bool stop = false;
  std::thread worker;
};

// Never destroyed: a program may exit without nrt_close while workers
// still wait on these (destroying a joinable thread would abort it).
std::mutex& g_mu = *new std::mutex;
auto& g_queues = *new std::map<nrta_xu_id_t, std::shared_ptr<Queue>>;  // guarded by g_mu
auto& g_compute_in_flight = *new std::map<int, uint64_t>;  // per core: queued + running; g_mu

std::mutex& g_callback_mu = *new std::mutex;
NRT_ASYNC_EXEC_STATUS_CALLBACK g_callback = nullptr;  // guarded by g_callback_mu
void* g_callback_params = nullptr;                    // guarded by g_callback_mu

// The queue the calling thread works for (null off the workers), so a
// callback that drains its own core is refused rather than deadlocking.
thread_local Queue* t_worker_queue = nullptr;

// Makes every waiter for a number up to `completed` readable; q->mu held.
void SignalWaitersLocked(Queue& q) {
  auto end = q.waiters.upper_bound(q.completed);
  for (auto it = q.waiters.begin(); it != end; ++it) {
    const uint64_t one = 1;
    // The eventfd counter cannot overflow from one write per handle.
    (void)!write(it->second, &one, sizeof one);
    close(it->second);
  }
  q.waiters.erase(q.waiters.begin(), end);
}

void Work(std::shared_ptr<Queue> q) {
  t_worker_queue = q.get();
  for (;;) {
    Request r;
    {
      std::unique_lock<std::mutex> lock(q->mu);
      q->work_cv.wait(lock, [&] { return q->stop || !q->pending.empty(); });
      // Stopping still runs what was queued: nothing is dropped.
      if (q->pending.empty()) return;
      r = std::move(q->pending.front());
      q->pending.pop_front();
    }
    NRT_STATUS status;
    {
      RuntimeRef rt(r.function);
      if (rt.ok()) {
        status = r.run();
      } else {
        if (r.abandon) r.abandon();
        status = rt.status();
      }
    }
    const nrta_seq_t seq = SeqId(q->id, r.number);
    if (status != NRT_SUCCESS && r.tracker != nullptr) r.tracker->Add(seq, status);
    if (q->kind == NRTA_XU_COMPUTE) {
      NRT_ASYNC_EXEC_STATUS_CALLBACK callback;
      void* params;
      {
        std::lock_guard<std::mutex> lock(g_callback_mu);
        callback = g_callback;
        params = g_callback_params;
      }
      // Before completion, so a finished request has had its callback.
      if (callback != nullptr) {
        callback(params, r.model->id, static_cast<uint32_t>(q->core), seq, status);
      }
      std::lock_guard<std::mutex> lock(g_mu);
      auto it = g_compute_in_flight.find(q->core);
      if (it != g_compute_in_flight.end() && it->second > 0) --it->second;
    }
    {
      std::lock_guard<std::mutex> lock(q->mu);
      q->completed = r.number;
      SignalWaitersLocked(*q);
    }
    q->done_cv.notify_all();
  }
}

// Checks the queue index of an XU kind.
NRT_STATUS CheckQueue(const char* function, nrta_xu_t kind, int queue) {
  if (kind < 0 || kind >= NRTA_XU_TYPE_NUM) {
    return Fail(NRT_INVALID, absl::StrFormat("%s: unknown execution unit %d", function, kind));
  }
  if (queue < 0 || queue >= kQueuesPerXu[kind]) {
    return Fail(NRT_INVALID,
                absl::StrFormat("%s: queue %d is not a queue of the %s unit (it has %s)", function,
                                queue, XuName(kind),
                                kQueuesPerXu[kind] == 1
                                    ? std::string("queue 0 only")
                                    : absl::StrFormat("queues 0-%d", kQueuesPerXu[kind] - 1)));
  }
  return NRT_SUCCESS;
}

NRT_STATUS CheckCore(const char* function, runtime::Runtime& rt, int core) {
  if (core < 0 || core > kMaxCore) {
    return Fail(NRT_INVALID,
                absl::StrFormat("%s: logical core %d is out of range", function, core));
  }
  absl::StatusOr<runtime::Core*> c = rt.GetCore(core);
  if (!c.ok()) return Fail(function, c.status());
  return NRT_SUCCESS;
}

// Queues `r` on queue `queue` of unit `kind` of `core`, starting its
// worker if needed.
NRT_STATUS Enqueue(const char* function, runtime::Runtime& rt, int core, nrta_xu_t kind, int queue,
                   nrta_error_tracker_t* err, Request r, nrta_seq_t* req_sequence) {
  if (NRT_STATUS s = CheckQueue(function, kind, queue); s != NRT_SUCCESS) return s;
  if (NRT_STATUS s = CheckCore(function, rt, core); s != NRT_SUCCESS) return s;
  if (err != nullptr && static_cast<int>(err->lnc) != core) {
    return Fail(NRT_INVALID,
                absl::StrFormat("%s: the error tracker is for logical core %d, the request runs "
                                "on core %d",
                                function, err->lnc, core));
  }
  r.function = function;
  if (err != nullptr) r.tracker = err->state;
  const nrta_xu_id_t id = XuId(core, kind, queue);
  std::shared_ptr<Queue> q;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    std::shared_ptr<Queue>& slot = g_queues[id];
    if (slot == nullptr) {
      auto fresh = std::make_shared<Queue>(core, kind, queue);
      try {
        fresh->worker = std::thread(Work, fresh);
      } catch (const std::system_error& e) {
        g_queues.erase(id);
        return Fail(NRT_RESOURCE, absl::StrFormat("%s: cannot start the %s worker of core %d: %s",
                                                  function, XuName(kind), core, e.what()));
      }
      slot = std::move(fresh);
    }
    q = slot;
    if (kind == NRTA_XU_COMPUTE) {
      const uint64_t limit = std::max<uint64_t>(1, rt.config().xu_max_queued_requests);
      uint64_t& in_flight = g_compute_in_flight[core];
      if (in_flight >= limit) {
        return Fail(NRT_QUEUE_FULL,
                    absl::StrFormat("%s: the COMPUTE queue of logical core %d already holds %d "
                                    "requests (NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS=%d)",
                                    function, core, in_flight, limit));
      }
      ++in_flight;
    }
  }
  {
    std::lock_guard<std::mutex> lock(q->mu);
    r.number = q->next++;
    if (req_sequence != nullptr) *req_sequence = SeqId(id, r.number);
    q->pending.push_back(std::move(r));
  }
  q->work_cv.notify_one();
  return NRT_SUCCESS;
}

// The queue a sequence id names and its number, or NRT_INVALID when no
// request of that id was scheduled.
NRT_STATUS FindSeq(const char* function, nrta_seq_t seq, std::shared_ptr<Queue>* q,
                   uint64_t* number) {
  *number = NRTA_SEQ_GET_SEQ_NUM(seq);
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_queues.find(static_cast<nrta_xu_id_t>(NRTA_SEQ_GET_XU_ID(seq)));
    if (it != g_queues.end()) *q = it->second;
  }
  bool scheduled = false;
  if (*q != nullptr) {
    std::lock_guard<std::mutex> lock((*q)->mu);
    scheduled = *number >= 1 && *number < (*q)->next;
  }
  if (!scheduled) {
    return Fail(NRT_INVALID, absl::StrFormat("%s: sequence id 0x%016x names no scheduled request",
                                             function, seq));
  }
  return NRT_SUCCESS;
}

// Where `size` bytes at `offset` of the tensor are, or a failure naming it.
NRT_STATUS Span(const char* function, const char* role, const nrt_tensor* tensor, uint64_t offset,
                uint64_t size, char** at) {
  if (tensor == nullptr) {
    return Fail(NRT_INVALID_HANDLE, absl::StrFormat("%s: null %s tensor", function, role));
  }
  runtime::TensorBuffer* t = tensor->buffer();
  if (t == nullptr) {
    return Fail(NRT_INVALID,
                absl::StrFormat("%s: %s tensor '%s' has no storage", function, role, tensor->name));
  }
  if (offset > t->size() || size > t->size() - offset) {
    return Fail(NRT_INVALID,
                absl::StrFormat("%s: %d bytes at offset %d is outside %s tensor '%s' (%d bytes)",
                                function, size, offset, role, t->name(), t->size()));
  }
  *at = static_cast<char*>(t->data()) + offset;
  return NRT_SUCCESS;
}

// The core a tensor's requests run on: a device tensor's own; for host
// memory, the tracker's core or else the first held core.
int TensorCore(const nrt_tensor* tensor, runtime::Runtime& rt, const nrta_error_tracker_t* err) {
  const runtime::TensorBuffer* t = tensor->buffer();
  if (t != nullptr && t->on_device()) return t->core_id();
  if (err != nullptr) return static_cast<int>(err->lnc);
  return rt.cores().front();
}

// The model's tensors, looked up by name as ExecuteModel will do.
NRT_STATUS CheckSet(const char* function, const runtime::Model& m,
                    const std::vector<runtime::TensorInfo>& infos, const TensorSet& set,
                    const char* kind) {
  for (const runtime::TensorInfo& info : infos) {
    auto it = set.tensors.find(info.name);
    const runtime::TensorBuffer* t =
        it == set.tensors.end() || it->second == nullptr ? nullptr : it->second->buffer();
    if (t == nullptr) {
      return Fail(
          NRT_INVALID,
          absl::StrFormat("%s: model '%s' needs %s tensor '%s', which the %s set %s", function,
                          m.name(), kind, info.name, kind,
                          it == set.tensors.end() ? "does not have" : "holds without storage"));
    }
    if (t->size() < info.bytes) {
      return Fail(
          NRT_INVALID,
          absl::StrFormat("%s: model '%s' %s '%s' needs %d bytes, tensor '%s' has %d", function,
                          m.name(), kind, info.name, info.bytes, t->name(), t->size()));
    }
  }
  return NRT_SUCCESS;
}

}  // namespace

void ShutdownAsync() {
  std::map<nrta_xu_id_t, std::shared_ptr<Queue>> queues;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    queues.swap(g_queues);
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
    // nrt_close from an async callback: this worker finishes its queue
    // after the callback returns (against a closed runtime: each request
    // then fails into its tracker).
    if (q->worker.get_id() == std::this_thread::get_id()) {
      q->worker.detach();
    } else {
      q->worker.join();
    }
  }
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_compute_in_flight.clear();
  }
  // A callback belongs to the runtime it was registered with.
  std::lock_guard<std::mutex> lock(g_callback_mu);
  g_callback = nullptr;
  g_callback_params = nullptr;
}

}  // namespace neuron::nrt_api

using namespace neuron::nrt_api;  // NOLINT: the C API is this file's whole job

extern "C" {

NRT_STATUS nrta_tensor_write(nrt_tensor_t* tensor, const void* buf, uint64_t offset, uint64_t size,
                             int queue, nrta_error_tracker_t* err, nrta_seq_t* req_sequence) {
  static constexpr const char* kFn = "nrta_tensor_write";
  RuntimeRef rt(kFn);
  if (!rt.ok()) return rt.status();
  char* at = nullptr;
  if (NRT_STATUS s = Span(kFn, "destination", tensor, offset, size, &at); s != NRT_SUCCESS)
    return s;
  if (buf == nullptr && size > 0) return Fail(NRT_INVALID, "nrta_tensor_write: null source buffer");
  Request r;
  r.run = [tensor, buf, offset, size] {
    // Checked again: the tensor may have changed since it was scheduled.
    char* to = nullptr;
    if (NRT_STATUS s = Span(kFn, "destination", tensor, offset, size, &to); s != NRT_SUCCESS) {
      return s;
    }
    if (size > 0) std::memcpy(to, buf, size);
    return NRT_SUCCESS;
  };
  return Enqueue(kFn, *rt, TensorCore(tensor, *rt, err), NRTA_XU_TENSOR_WRITE, queue, err,
                 std::move(r), req_sequence);
}

NRT_STATUS nrta_tensor_read(void* buf, nrt_tensor_t* tensor, uint64_t offset, uint64_t size,
                            int queue, nrta_error_tracker_t* err, nrta_seq_t* req_sequence) {
  static constexpr const char* kFn = "nrta_tensor_read";
  RuntimeRef rt(kFn);
  if (!rt.ok()) return rt.status();
  char* at = nullptr;
  if (NRT_STATUS s = Span(kFn, "source", tensor, offset, size, &at); s != NRT_SUCCESS) return s;
  if (buf == nullptr && size > 0) {
    return Fail(NRT_INVALID, "nrta_tensor_read: null destination buffer");
  }
  Request r;
  r.run = [tensor, buf, offset, size] {
    char* from = nullptr;
    if (NRT_STATUS s = Span(kFn, "source", tensor, offset, size, &from); s != NRT_SUCCESS) {
      return s;
    }
    if (size > 0) std::memcpy(buf, from, size);
    return NRT_SUCCESS;
  };
  return Enqueue(kFn, *rt, TensorCore(tensor, *rt, err), NRTA_XU_TENSOR_READ, queue, err,
                 std::move(r), req_sequence);
}

NRT_STATUS nrta_tensor_copy(nrt_tensor_t* src, uint64_t src_offset, nrt_tensor_t* dst,
                            uint64_t dst_offset, uint64_t size, int queue,
                            nrta_error_tracker_t* err, nrta_seq_t* req_sequence) {
  static constexpr const char* kFn = "nrta_tensor_copy";
  RuntimeRef rt(kFn);
  if (!rt.ok()) return rt.status();
  char* from = nullptr;
  char* to = nullptr;
  if (NRT_STATUS s = Span(kFn, "source", src, src_offset, size, &from); s != NRT_SUCCESS) return s;
  if (NRT_STATUS s = Span(kFn, "destination", dst, dst_offset, size, &to); s != NRT_SUCCESS) {
    return s;
  }
  const neuron::runtime::TensorBuffer* sb = src->buffer();
  const neuron::runtime::TensorBuffer* db = dst->buffer();
  if (sb->on_device() && db->on_device() && sb->core_id() != db->core_id()) {
    return Fail(NRT_INVALID,
                absl::StrFormat("nrta_tensor_copy: device tensors '%s' (NeuronCore %d) and '%s' "
                                "(NeuronCore %d) are on different cores",
                                sb->name(), sb->core_id(), db->name(), db->core_id()));
  }
  const int core = sb->on_device() ? sb->core_id() : TensorCore(dst, *rt, err);
  Request r;
  r.run = [src, src_offset, dst, dst_offset, size] {
    char* f = nullptr;
    char* t = nullptr;
    if (NRT_STATUS s = Span(kFn, "source", src, src_offset, size, &f); s != NRT_SUCCESS) return s;
    if (NRT_STATUS s = Span(kFn, "destination", dst, dst_offset, size, &t); s != NRT_SUCCESS) {
      return s;
    }
    // memmove: a tensor and its slice may overlap.
    if (size > 0) std::memmove(t, f, size);
    return NRT_SUCCESS;
  };
  return Enqueue(kFn, *rt, core, NRTA_XU_TENSOR_OP, queue, err, std::move(r), req_sequence);
}

NRT_STATUS nrta_execute_schedule(nrt_model_t* model, const nrt_tensor_set_t* input,
                                 nrt_tensor_set_t* output, int queue, nrta_error_tracker_t* err,
                                 nrta_seq_t* req_sequence) {
  static constexpr const char* kFn = "nrta_execute_schedule";
  RuntimeRef rt(kFn);
  if (!rt.ok()) return rt.status();
  if (model == nullptr || model->model == nullptr) {
    return Fail(NRT_INVALID_HANDLE, "nrta_execute_schedule: null or unloaded model");
  }
  if (input == nullptr || output == nullptr) {
    return Fail(NRT_INVALID, "nrta_execute_schedule: null tensor set");
  }
  // The sets as they are now: the caller may change or free them once
  // this returns (the tensors themselves must live until the run).
  auto ins = std::make_shared<TensorSet>(*static_cast<const TensorSet*>(input));
  auto outs = std::make_shared<TensorSet>(*static_cast<const TensorSet*>(output));
  const neuron::runtime::Model& m = *model->model;
  if (NRT_STATUS s = CheckSet(kFn, m, m.inputs(), *ins, "input"); s != NRT_SUCCESS) return s;
  if (NRT_STATUS s = CheckSet(kFn, m, m.outputs(), *outs, "output"); s != NRT_SUCCESS) return s;
  Request r;
  r.model = model;
  r.run = [model, ins, outs] { return ExecuteModel(model, *ins, *outs, kFn); };
  return Enqueue(kFn, *rt, model->vnc, NRTA_XU_COMPUTE, queue, err, std::move(r), req_sequence);
}

NRT_STATUS nrta_cc_schedule(nrt_cc_context_t** cc_ctx, int queue, nrta_error_tracker_t* err,
                            nrta_seq_t* req_sequence) {
  static constexpr const char* kFn = "nrta_cc_schedule";
  if (cc_ctx == nullptr || *cc_ctx == nullptr) {
    return Fail(NRT_INVALID_HANDLE, "nrta_cc_schedule: null collective context");
  }
  // Consumed whatever happens: there is no other way to free a context.
  nrt_cc_context_t* ctx = *cc_ctx;
  *cc_ctx = nullptr;
  RuntimeRef rt(kFn);
  if (!rt.ok()) {
    FreeCollective(ctx);
    return rt.status();
  }
  Request r;
  r.run = [ctx] {
    const NRT_STATUS status = RunCollective(ctx);
    FreeCollective(ctx);  // RunCollective leaves the context to its owner: us
    return status;
  };
  r.abandon = [ctx] { FreeCollective(ctx); };
  NRT_STATUS s = Enqueue(kFn, *rt, CollectiveContextVnc(ctx), NRTA_XU_COLLECTIVES, queue, err,
                         std::move(r), req_sequence);
  if (s != NRT_SUCCESS) FreeCollective(ctx);
  return s;
}

NRT_STATUS nrta_is_completed(nrta_seq_t seq, bool* is_completed) {
  static constexpr const char* kFn = "nrta_is_completed";
  if (is_completed == nullptr) return Fail(NRT_INVALID, "nrta_is_completed: null result pointer");
  RuntimeRef rt(kFn);
  if (!rt.ok()) return rt.status();
  std::shared_ptr<Queue> q;
  uint64_t number = 0;
  if (NRT_STATUS s = FindSeq(kFn, seq, &q, &number); s != NRT_SUCCESS) return s;
  std::lock_guard<std::mutex> lock(q->mu);
  *is_completed = number <= q->completed;
  return NRT_SUCCESS;
}

NRT_STATUS nrta_get_sequence(uint32_t lnc, nrta_xu_t xu, int queue, nrta_seq_t* seq) {
  static constexpr const char* kFn = "nrta_get_sequence";
  if (seq == nullptr) return Fail(NRT_INVALID, "nrta_get_sequence: null result pointer");
  RuntimeRef rt(kFn);
  if (!rt.ok()) return rt.status();
  if (lnc > static_cast<uint32_t>(kMaxCore)) {
    return Fail(NRT_INVALID,
                absl::StrFormat("nrta_get_sequence: logical core %u is out of range", lnc));
  }
  if (NRT_STATUS s = CheckCore(kFn, *rt, static_cast<int>(lnc)); s != NRT_SUCCESS) return s;
  if (NRT_STATUS s = CheckQueue(kFn, xu, queue); s != NRT_SUCCESS) return s;
  const nrta_xu_id_t id = XuId(static_cast<int>(lnc), xu, queue);
  std::shared_ptr<Queue> q;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_queues.find(id);
    if (it != g_queues.end()) q = it->second;
  }
  uint64_t completed = 0;
  if (q != nullptr) {
    std::lock_guard<std::mutex> lock(q->mu);
    completed = q->completed;
  }
  *seq = SeqId(id, completed);
  return NRT_SUCCESS;
}

NRT_STATUS nrta_get_completion_handle(nrta_seq_t seq, int* fd) {
  static constexpr const char* kFn = "nrta_get_completion_handle";
  if (fd == nullptr) return Fail(NRT_INVALID, "nrta_get_completion_handle: null fd pointer");
  RuntimeRef rt(kFn);
  if (!rt.ok()) return rt.status();
  std::shared_ptr<Queue> q;
  uint64_t number = 0;
  if (NRT_STATUS s = FindSeq(kFn, seq, &q, &number); s != NRT_SUCCESS) return s;
  const int efd = eventfd(0, EFD_CLOEXEC);
  if (efd < 0) {
    return Fail(NRT_RESOURCE,
                absl::StrFormat("nrta_get_completion_handle: eventfd: %s", std::strerror(errno)));
  }
  std::lock_guard<std::mutex> lock(q->mu);
  if (number <= q->completed) {
    const uint64_t one = 1;
    (void)!write(efd, &one, sizeof one);
  } else {
    // The worker signals its own duplicate, so a caller closing the handle
    // early (and the number being reused) cannot redirect the write.
    const int mine = fcntl(efd, F_DUPFD_CLOEXEC, 0);
    if (mine < 0) {
      const int e = errno;
      close(efd);
      return Fail(NRT_RESOURCE,
                  absl::StrFormat("nrta_get_completion_handle: dup: %s", std::strerror(e)));
    }
    q->waiters.emplace(number, mine);
  }
  *fd = efd;
  return NRT_SUCCESS;
}

NRT_STATUS nrta_error_tracker_create(uint32_t lnc_idx, nrta_error_tracker_t** error_tracker) {
  static constexpr const char* kFn = "nrta_error_tracker_create";
  if (error_tracker == nullptr) {
    return Fail(NRT_INVALID, "nrta_error_tracker_create: null result pointer");
  }
  RuntimeRef rt(kFn);
  if (!rt.ok()) return rt.status();
  if (lnc_idx > static_cast<uint32_t>(kMaxCore)) {
    return Fail(
        NRT_INVALID,
        absl::StrFormat("nrta_error_tracker_create: logical core %u is out of range", lnc_idx));
  }
  if (NRT_STATUS s = CheckCore(kFn, *rt, static_cast<int>(lnc_idx)); s != NRT_SUCCESS) return s;
  auto* t = new nrta_error_tracker;
  t->lnc = lnc_idx;
  t->state = std::make_shared<TrackerState>();
  *error_tracker = t;
  return NRT_SUCCESS;
}

void nrta_error_tracker_destroy(nrta_error_tracker_t* error_tracker) {
  // Queued requests keep the state alive; their errors go nowhere now.
  delete error_tracker;
}

// Trackers outlive the runtime like tensor handles do: the errors of the
// requests nrt_close ran can still be read afterwards.
NRT_STATUS nrta_error_tracker_get_list(nrta_error_tracker_t* error_tracker,
                                       const nrta_error_t** list, size_t* error_count) {
  if (error_tracker == nullptr) {
    return Fail(NRT_INVALID_HANDLE, "nrta_error_tracker_get_list: null error tracker");
  }
  if (list == nullptr || error_count == nullptr) {
    return Fail(NRT_INVALID, "nrta_error_tracker_get_list: null list or count pointer");
  }
  TrackerState& s = *error_tracker->state;
  std::lock_guard<std::mutex> lock(s.mu);
  s.handed_out.swap(s.recorded);
  s.recorded.clear();
  *list = s.handed_out.empty() ? nullptr : s.handed_out.data();
  *error_count = s.handed_out.size();
  return NRT_SUCCESS;
}

NRT_STATUS nrt_register_async_exec_callback(NRT_ASYNC_EXEC_STATUS_CALLBACK callback, void* params) {
  RuntimeRef rt("nrt_register_async_exec_callback");
  if (!rt.ok()) return rt.status();
  std::lock_guard<std::mutex> lock(g_callback_mu);
  g_callback = callback;
  g_callback_params = params;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_async_drain_queued_execs(int32_t vnc) {
  static constexpr const char* kFn = "nrt_async_drain_queued_execs";
  {
    RuntimeRef rt(kFn);
    if (!rt.ok()) return rt.status();
    if (NRT_STATUS s = CheckCore(kFn, *rt, vnc); s != NRT_SUCCESS) return s;
  }
  if (t_worker_queue != nullptr && t_worker_queue->core == vnc) {
    return Fail(NRT_INVALID,
                absl::StrFormat("nrt_async_drain_queued_execs: called from a worker of core %d "
                                "(an async callback), which would wait for itself",
                                vnc));
  }
  // What is queued now; requests scheduled while waiting are not waited for.
  std::vector<std::pair<std::shared_ptr<Queue>, uint64_t>> targets;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    for (auto& [id, q] : g_queues) {
      if (q->core != vnc) continue;
      std::lock_guard<std::mutex> qlock(q->mu);
      targets.emplace_back(q, q->next - 1);
    }
  }
  // Without the runtime held: the workers need it, and nrt_close may come.
  for (auto& [q, last] : targets) {
    std::unique_lock<std::mutex> lock(q->mu);
    q->done_cv.wait(lock, [&] { return q->completed >= last; });
  }
  return NRT_SUCCESS;
}

}  // extern "C"
