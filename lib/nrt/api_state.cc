#include "lib/nrt/api_state.h"

#include <atomic>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "lib/collectives/communicator.h"
#include "lib/log/log.h"
#include "lib/runtime/status.h"

void nrt_tensor::MarkWritten() {
  {
    std::lock_guard<std::mutex> lock(completion_mu);
    ++completions;
  }
  completion_cv.notify_all();
}

namespace neuron::nrt_api {
namespace {

thread_local std::string t_last_error;
std::atomic<bool> g_quiet_api_errors{false};

std::mutex g_handles_mu;
std::set<nrt_model*> g_models;    // guarded by g_handles_mu
std::set<nrt_tensor*> g_tensors;  // guarded by g_handles_mu

}  // namespace

void SetLastError(std::string message) { t_last_error = std::move(message); }
const std::string& LastError() { return t_last_error; }

void SetQuietApiErrors(bool quiet) { g_quiet_api_errors.store(quiet); }

NRT_STATUS Fail(NRT_STATUS code, std::string message) {
  if (!g_quiet_api_errors.load()) NEURON_LOG(NRT, kError, "%s (%s)", message, nrt_get_status_name(code));
  t_last_error = std::move(message);
  return code;
}

NRT_STATUS Fail(const absl::Status& status) {
  return Fail(runtime::NrtStatusOf(status), std::string(status.message()));
}

NRT_STATUS Fail(const char* function, const absl::Status& status) {
  return Fail(runtime::NrtStatusOf(status), absl::StrCat(function, ": ", status.message()));
}

NRT_STATUS FailCollectives(const char* function, const absl::Status& status) {
  const NRT_STATUS code = collectives::NrtStatusOf(status);
  const std::string prefix = absl::StrCat(nrt_get_status_name(code), ": ");
  return Fail(code, absl::StrCat(function, ": ", absl::StripPrefix(status.message(), prefix)));
}

RuntimeRef::RuntimeRef(const char* function)
    : lock_(RuntimeMutex()), runtime_(CurrentRuntimeLocked()), function_(function) {}

NRT_STATUS RuntimeRef::status() const {
  if (runtime_ != nullptr) return NRT_SUCCESS;
  if (WasClosed()) {
    return Fail(NRT_CLOSED, absl::StrFormat("%s: the runtime was closed (nrt_close)", function_));
  }
  return Fail(NRT_UNINITIALIZED, absl::StrFormat("%s: nrt_init has not been called", function_));
}

NRT_STATUS CoreOfVnc(const char* function, const runtime::Runtime& rt, int64_t vnc, int* core) {
  const std::vector<int>& held = rt.cores();
  if (vnc < 0 || vnc >= static_cast<int64_t>(held.size())) {
    return Fail(NRT_INVALID,
                absl::StrFormat("%s: NeuronCore %d is not one of this process's %d (vnc 0-%d; "
                                "NEURON_RT_VISIBLE_CORES picks which)",
                                function, vnc, held.size(), held.size() - 1));
  }
  *core = held[static_cast<size_t>(vnc)];
  return NRT_SUCCESS;
}

int VncOfCore(const runtime::Runtime& rt, int core) {
  const std::vector<int>& held = rt.cores();
  for (size_t i = 0; i < held.size(); ++i) {
    if (held[i] == core) return static_cast<int>(i);
  }
  return -1;
}

void TrackModel(nrt_model* model) {
  std::lock_guard<std::mutex> lock(g_handles_mu);
  g_models.insert(model);
}

void UntrackModel(nrt_model* model) {
  std::lock_guard<std::mutex> lock(g_handles_mu);
  g_models.erase(model);
}

void TrackTensor(nrt_tensor* tensor) {
  std::lock_guard<std::mutex> lock(g_handles_mu);
  g_tensors.insert(tensor);
}

void UntrackTensor(nrt_tensor* tensor) {
  std::lock_guard<std::mutex> lock(g_handles_mu);
  g_tensors.erase(tensor);
}

void ReleaseAllHandles() {
  std::lock_guard<std::mutex> lock(g_handles_mu);
  for (nrt_model* m : g_models) m->model.reset();
  // Views first: a slice's window points into storage another tensor may
  // release. Only device memory depends on the runtime; host and caller
  // memory stays usable.
  for (nrt_tensor* t : g_tensors) {
    if (t->storage != nullptr && t->storage->on_device()) {
      t->window.reset();
    }
  }
  for (nrt_tensor* t : g_tensors) {
    if (t->storage != nullptr && t->storage->on_device()) t->storage.reset();
  }
}

NRT_STATUS ExecuteModel(nrt_model* model, const TensorSet& inputs, TensorSet& outputs,
                        const char* function) {
  if (model == nullptr || model->model == nullptr) {
    return Fail(NRT_INVALID_HANDLE, absl::StrFormat("%s: null or unloaded model", function));
  }
  const runtime::Model& m = *model->model;
  std::vector<const runtime::TensorBuffer*> in;
  in.reserve(m.inputs().size());
  for (const runtime::TensorInfo& info : m.inputs()) {
    auto it = inputs.tensors.find(info.name);
    if (it == inputs.tensors.end() || it->second->buffer() == nullptr) {
      return Fail(NRT_INVALID,
                  absl::StrFormat("%s: model '%s' needs input tensor '%s', which the input set %s",
                                  function, m.name(), info.name,
                                  it == inputs.tensors.end() ? "does not have" : "holds without storage"));
    }
    in.push_back(it->second->buffer());
  }
  std::vector<runtime::TensorBuffer*> out;
  std::vector<nrt_tensor*> written;
  out.reserve(m.outputs().size());
  for (const runtime::TensorInfo& info : m.outputs()) {
    auto it = outputs.tensors.find(info.name);
    if (it == outputs.tensors.end() || it->second->buffer() == nullptr) {
      return Fail(NRT_INVALID,
                  absl::StrFormat("%s: model '%s' needs output tensor '%s', which the output set %s",
                                  function, m.name(), info.name,
                                  it == outputs.tensors.end() ? "does not have" : "holds without storage"));
    }
    out.push_back(it->second->buffer());
    written.push_back(it->second);
  }
  absl::StatusOr<runtime::ExecuteResult> result = model->model->Execute(in, out, model->options);
  if (!result.ok()) return Fail(function, result.status());
  model->last_loop_trips.store(result->loop_trips, std::memory_order_relaxed);
  model->last_loop_ns.store(result->loop_ns, std::memory_order_relaxed);
  for (nrt_tensor* t : written) t->MarkWritten();
  if (result->status != NRT_SUCCESS) {
    if (result->fail) return Fail(result->status, result->numerical_report);
    SetLastError(result->numerical_report);
  }
  return result->status;
}

nrt_dtype_t ToNrtDtype(hlo::ElementType type) {
  using hlo::ElementType;
  switch (type) {
    case ElementType::kU64: return NRT_DTYPE_UINT64;
    case ElementType::kS8: return NRT_DTYPE_INT8;
    case ElementType::kU8: return NRT_DTYPE_UINT8;
    case ElementType::kS16: return NRT_DTYPE_INT16;
    case ElementType::kU16: return NRT_DTYPE_UINT16;
    case ElementType::kBF16: return NRT_DTYPE_BFLOAT16;
    case ElementType::kF16: return NRT_DTYPE_FLOAT16;
    case ElementType::kS32: return NRT_DTYPE_INT32;
    case ElementType::kU32: return NRT_DTYPE_UINT32;
    case ElementType::kF32: return NRT_DTYPE_FLOAT32;
    case ElementType::kS64: return NRT_DTYPE_INT64;
    case ElementType::kF8E4M3FN: return NRT_DTYPE_FP8_E4;
    case ElementType::kF8E5M2: return NRT_DTYPE_FP8_E5;
    case ElementType::kF8E3M4: return NRT_DTYPE_FP8_E3;
    // pred, f64, complex and the rest have no value in the SDK's enum:
    // UNKNOWN (size still exact); nrt_tools_describe_model names them.
    default: return NRT_DTYPE_UNKNOWN;
  }
}

}  // namespace neuron::nrt_api
