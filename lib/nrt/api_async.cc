// The async API (nrt/nrt_async.h) and the async-exec callback and drain of
// nrt/nrt_experimental.h, over the execution units of
// lib/runtime/execution_units.h.
//
// Arguments are checked when a request is scheduled (the error comes back
// from the call); what fails while it runs goes to the request's error
// tracker. Each request holds the runtime (RuntimeRef) only while it runs:
// nrt_close shuts the units down (ShutdownAsync, after running everything
// queued) before it takes the runtime exclusively.
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "lib/nrt/api_state.h"
#include "lib/runtime/execution_units.h"
#include "nrt/nrt_async.h"

namespace runtime = neuron::runtime;

// The engine numbers kinds and sequence ids as nrt_async.h does.
static_assert(static_cast<int>(runtime::XuKind::kCompute) == NRTA_XU_COMPUTE &&
              static_cast<int>(runtime::XuKind::kCollectives) == NRTA_XU_COLLECTIVES &&
              runtime::kXuKindCount == NRTA_XU_TYPE_NUM);
static_assert(runtime::kSeqNumberMask == NRTA_SEQ_NUM_MASK &&
              sizeof(runtime::XuId) == sizeof(nrta_xu_id_t));

// The engine's tracker, and the list the last get_list handed out (valid
// until the next call or destroy, as nrt_async.h promises).
struct nrta_error_tracker {
  std::shared_ptr<runtime::ErrorTracker> tracker;
  std::mutex mu;
  std::vector<nrta_error_t> handed_out;  // guarded by mu
};

namespace neuron::nrt_api {
namespace {

// Process-wide like the runtime itself; never destroyed, since a program
// may exit without nrt_close while workers still wait.
runtime::ExecutionUnits& Units() {
  static auto* units = new runtime::ExecutionUnits;
  return *units;
}

runtime::XuKind Kind(nrta_xu_t xu) { return static_cast<runtime::XuKind>(xu); }

NRT_STATUS CheckQueue(const char* function, nrta_xu_t kind, int queue) {
  absl::Status s = runtime::CheckXuQueue(Kind(kind), queue);
  return s.ok() ? NRT_SUCCESS : Fail(function, s);
}

NRT_STATUS CheckCore(const char* function, runtime::Runtime& rt, int core) {
  if (absl::Status s = runtime::CheckXuCore(core); !s.ok()) return Fail(function, s);
  absl::StatusOr<runtime::Core*> c = rt.GetCore(core);
  if (!c.ok()) return Fail(function, c.status());
  return NRT_SUCCESS;
}

// The core of a caller's lnc index (counted among the held cores, as every
// libnrt core index is but send/recv's).
NRT_STATUS CheckLnc(const char* function, runtime::Runtime& rt, uint32_t lnc, int* core) {
  if (NRT_STATUS s = CoreOfVnc(function, rt, lnc, core); s != NRT_SUCCESS) return s;
  return CheckCore(function, rt, *core);
}

// Stores an engine result where the caller asked (if anywhere), or fails
// naming `function`.
template <typename T, typename U>
NRT_STATUS Deliver(const char* function, const absl::StatusOr<T>& value, U* out) {
  if (!value.ok()) return Fail(function, value.status());
  if (out != nullptr) *out = *value;
  return NRT_SUCCESS;
}

// Queues `run` on queue `queue` of unit `kind` of `core`. It runs holding
// the runtime; `abandon` runs instead when the runtime is gone by then.
NRT_STATUS Schedule(const char* function, runtime::Runtime& rt, int core, nrta_xu_t kind, int queue,
                    nrta_error_tracker_t* err, std::function<NRT_STATUS()> run,
                    std::function<void()> abandon, nrta_seq_t* req_sequence,
                    uint32_t model_id = 0) {
  if (NRT_STATUS s = CheckQueue(function, kind, queue); s != NRT_SUCCESS) return s;
  if (NRT_STATUS s = CheckCore(function, rt, core); s != NRT_SUCCESS) return s;
  runtime::ExecutionUnits::Request r;
  r.run = [function, run = std::move(run), abandon = std::move(abandon)] {
    RuntimeRef held(function);
    if (held.ok()) return run();
    if (abandon) abandon();
    return held.status();
  };
  if (err != nullptr) r.tracker = err->tracker;
  r.model_id = model_id;
  r.compute_limit = rt.config().xu_max_queued_requests;
  return Deliver(function, Units().Enqueue(core, Kind(kind), queue, std::move(r)), req_sequence);
}

// The core a tensor's requests run on: a device tensor's own; for host
// memory, the tracker's core or else the first held core.
int TensorCore(const nrt_tensor* tensor, runtime::Runtime& rt, const nrta_error_tracker_t* err) {
  const runtime::TensorBuffer* t = tensor->buffer();
  if (t != nullptr && t->on_device()) return t->core_id();
  if (err != nullptr) return err->tracker->core();
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

}  // namespace

void ShutdownAsync() { Units().Shutdown(); }

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
  auto run = [tensor, buf, offset, size] {
    char* to = nullptr;  // checked again: the tensor may have changed since
    NRT_STATUS s = Span(kFn, "destination", tensor, offset, size, &to);
    if (s == NRT_SUCCESS && size > 0) std::memcpy(to, buf, size);
    return s;
  };
  return Schedule(kFn, *rt, TensorCore(tensor, *rt, err), NRTA_XU_TENSOR_WRITE, queue, err, run,
                  nullptr, req_sequence);
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
  auto run = [tensor, buf, offset, size] {
    char* from = nullptr;
    NRT_STATUS s = Span(kFn, "source", tensor, offset, size, &from);
    if (s == NRT_SUCCESS && size > 0) std::memcpy(buf, from, size);
    return s;
  };
  return Schedule(kFn, *rt, TensorCore(tensor, *rt, err), NRTA_XU_TENSOR_READ, queue, err, run,
                  nullptr, req_sequence);
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
  const runtime::TensorBuffer* sb = src->buffer();
  const runtime::TensorBuffer* db = dst->buffer();
  if (sb->on_device() && db->on_device() && sb->core_id() != db->core_id()) {
    return Fail(NRT_INVALID,
                absl::StrFormat("nrta_tensor_copy: device tensors '%s' (NeuronCore %d) and '%s' "
                                "(NeuronCore %d) are on different cores",
                                sb->name(), sb->core_id(), db->name(), db->core_id()));
  }
  const int core = sb->on_device() ? sb->core_id() : TensorCore(dst, *rt, err);
  auto run = [src, src_offset, dst, dst_offset, size] {
    char* f = nullptr;
    char* t = nullptr;
    NRT_STATUS s = Span(kFn, "source", src, src_offset, size, &f);
    if (s == NRT_SUCCESS) s = Span(kFn, "destination", dst, dst_offset, size, &t);
    // memmove: a tensor and its slice may overlap.
    if (s == NRT_SUCCESS && size > 0) std::memmove(t, f, size);
    return s;
  };
  return Schedule(kFn, *rt, core, NRTA_XU_TENSOR_OP, queue, err, run, nullptr, req_sequence);
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
  const runtime::Model& m = *model->model;
  if (NRT_STATUS s = CheckSet(kFn, m, m.inputs(), *ins, "input"); s != NRT_SUCCESS) return s;
  if (NRT_STATUS s = CheckSet(kFn, m, m.outputs(), *outs, "output"); s != NRT_SUCCESS) return s;
  auto run = [model, ins, outs] { return ExecuteModel(model, *ins, *outs, kFn); };
  return Schedule(kFn, *rt, model->core, NRTA_XU_COMPUTE, queue, err, run, nullptr, req_sequence,
                  model->id);
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
  auto run = [ctx] {
    const NRT_STATUS status = RunCollective(ctx);
    FreeCollective(ctx);  // RunCollective leaves the context to its owner: us
    return status;
  };
  NRT_STATUS s = Schedule(
      kFn, *rt, CollectiveContextCore(ctx), NRTA_XU_COLLECTIVES, queue, err, run,
      [ctx] { FreeCollective(ctx); }, req_sequence);
  if (s != NRT_SUCCESS) FreeCollective(ctx);
  return s;
}

NRT_STATUS nrta_is_completed(nrta_seq_t seq, bool* is_completed) {
  static constexpr const char* kFn = "nrta_is_completed";
  if (is_completed == nullptr) return Fail(NRT_INVALID, "nrta_is_completed: null result pointer");
  RuntimeRef rt(kFn);
  if (!rt.ok()) return rt.status();
  return Deliver(kFn, Units().IsCompleted(seq), is_completed);
}

NRT_STATUS nrta_get_sequence(uint32_t lnc, nrta_xu_t xu, int queue, nrta_seq_t* seq) {
  static constexpr const char* kFn = "nrta_get_sequence";
  if (seq == nullptr) return Fail(NRT_INVALID, "nrta_get_sequence: null result pointer");
  RuntimeRef rt(kFn);
  if (!rt.ok()) return rt.status();
  int core = 0;
  if (NRT_STATUS s = CheckLnc(kFn, *rt, lnc, &core); s != NRT_SUCCESS) return s;
  if (NRT_STATUS s = CheckQueue(kFn, xu, queue); s != NRT_SUCCESS) return s;
  *seq = Units().LastCompleted(core, Kind(xu), queue);
  return NRT_SUCCESS;
}

NRT_STATUS nrta_get_completion_handle(nrta_seq_t seq, int* fd) {
  static constexpr const char* kFn = "nrta_get_completion_handle";
  if (fd == nullptr) return Fail(NRT_INVALID, "nrta_get_completion_handle: null fd pointer");
  RuntimeRef rt(kFn);
  if (!rt.ok()) return rt.status();
  return Deliver(kFn, Units().CompletionFd(seq), fd);
}

NRT_STATUS nrta_error_tracker_create(uint32_t lnc_idx, nrta_error_tracker_t** error_tracker) {
  static constexpr const char* kFn = "nrta_error_tracker_create";
  if (error_tracker == nullptr) {
    return Fail(NRT_INVALID, "nrta_error_tracker_create: null result pointer");
  }
  RuntimeRef rt(kFn);
  if (!rt.ok()) return rt.status();
  int core = 0;
  if (NRT_STATUS s = CheckLnc(kFn, *rt, lnc_idx, &core); s != NRT_SUCCESS) return s;
  auto* t = new nrta_error_tracker;
  t->tracker = std::make_shared<runtime::ErrorTracker>(core);
  *error_tracker = t;
  return NRT_SUCCESS;
}

void nrta_error_tracker_destroy(nrta_error_tracker_t* error_tracker) {
  // Queued requests keep the engine's tracker alive; their errors go nowhere now.
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
  std::lock_guard<std::mutex> lock(error_tracker->mu);
  std::vector<nrta_error_t>& out = error_tracker->handed_out;
  out.clear();
  for (const runtime::ErrorTracker::Error& e : error_tracker->tracker->Take()) {
    out.push_back({e.seq, static_cast<uint64_t>(e.status)});
  }
  *list = out.empty() ? nullptr : out.data();
  *error_count = out.size();
  return NRT_SUCCESS;
}

NRT_STATUS nrt_register_async_exec_callback(NRT_ASYNC_EXEC_STATUS_CALLBACK callback, void* params) {
  RuntimeRef rt("nrt_register_async_exec_callback");
  if (!rt.ok()) return rt.status();
  if (callback == nullptr) {
    Units().SetExecCallback(nullptr);
  } else {
    // The callback is told the vnc, as every core index of the API; the
    // held cores stay the same until nrt_close, which unregisters it.
    Units().SetExecCallback(
        [callback, params, held = rt->cores()](uint32_t model_id, int core, nrta_seq_t seq,
                                               NRT_STATUS status) {
          const auto at = std::find(held.begin(), held.end(), core);
          callback(params, model_id, static_cast<uint32_t>(at - held.begin()), seq, status);
        });
  }
  return NRT_SUCCESS;
}

NRT_STATUS nrt_async_drain_queued_execs(int32_t vnc) {
  static constexpr const char* kFn = "nrt_async_drain_queued_execs";
  int core = 0;
  {
    RuntimeRef rt(kFn);
    if (!rt.ok()) return rt.status();
    if (NRT_STATUS s = CoreOfVnc(kFn, *rt, vnc, &core); s != NRT_SUCCESS) return s;
  }
  // Without the runtime held: the workers need it, and nrt_close may come.
  if (absl::Status s = Units().Drain(core); !s.ok()) return Fail(kFn, s);
  return NRT_SUCCESS;
}

}  // extern "C"
