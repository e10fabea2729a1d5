// The C API of include/neuron/nrt.h over the C++ runtime: one process-wide
// Runtime between nrt_init and nrt_close, handles that wrap Model and
// TensorBuffer, and tensor sets as name -> tensor maps.
#include "neuron/nrt.h"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "absl/strings/str_format.h"
#include "lib/log/log.h"
#include "lib/runtime/runtime.h"
#include "lib/runtime/status.h"
#include "neuron/version.h"

struct nrt_model {
  std::unique_ptr<neuron::runtime::Model> model;
};

struct nrt_tensor {
  std::unique_ptr<neuron::runtime::TensorBuffer> buffer;
};

namespace {

using neuron::runtime::Runtime;

struct TensorSet {
  std::map<std::string, nrt_tensor*> tensors;
};

std::mutex g_mu;
std::unique_ptr<Runtime> g_runtime;  // guarded by g_mu for init/close
std::set<int> g_cores_with_models;
thread_local std::string g_last_error;

// Failures are logged here, as libnrt logs them; the C++ API only returns them.
NRT_STATUS Fail(NRT_STATUS code, std::string message) {
  NEURON_LOG(NRT, kError, "%s (%s)", message, nrt_get_status_name(code));
  g_last_error = std::move(message);
  return code;
}

NRT_STATUS Fail(const absl::Status& status) {
  return Fail(neuron::runtime::NrtStatusOf(status), std::string(status.message()));
}

NRT_STATUS NotInitialized(const char* function) {
  return Fail(NRT_UNINITIALIZED, absl::StrFormat("%s: nrt_init has not been called", function));
}

nrt_dtype_t ToNrtDtype(neuron::hlo::ElementType type) {
  using neuron::hlo::ElementType;
  switch (type) {
    case ElementType::kU64: return NRT_DTYPE_UINT64;
    case ElementType::kS8: return NRT_DTYPE_INT8;
    case ElementType::kU8: return NRT_DTYPE_UINT8;
    case ElementType::kPred: return NRT_DTYPE_UINT8;
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
    default: return NRT_DTYPE_UNKNOWN;
  }
}

}  // namespace

extern "C" {

NRT_STATUS nrt_init(nrt_framework_type_t framework, const char* fw_version,
                    const char* fal_version) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_runtime != nullptr) {
    return Fail(NRT_INVALID, "nrt_init: the runtime is already initialized (call nrt_close first)");
  }
  if (framework == NRT_FRAMEWORK_TYPE_INVALID) {
    return Fail(NRT_INVALID, "nrt_init: invalid framework type");
  }
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Init({});
  if (!rt.ok()) return Fail(rt.status());
  g_runtime = std::move(*rt);
  g_cores_with_models.clear();
  return NRT_SUCCESS;
}

void nrt_close(void) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_runtime.reset();
  g_cores_with_models.clear();
}

NRT_STATUS nrt_load(const void* neff_bytes, size_t size, int32_t start_vnc, int32_t vnc_count,
                    nrt_model_t** model) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_runtime == nullptr) return NotInitialized("nrt_load");
  if (neff_bytes == nullptr || model == nullptr) {
    return Fail(NRT_INVALID, "nrt_load: null NEFF or model pointer");
  }
  if (vnc_count != -1 && vnc_count != 1) {
    return Fail(NRT_INVALID,
                absl::StrFormat("nrt_load: vnc_count %d is not supported (use -1 or 1)", vnc_count));
  }
  int core = start_vnc;
  if (core < 0) {
    // The first held core without a model, else the first held core.
    core = g_runtime->cores().front();
    for (int c : g_runtime->cores()) {
      if (!g_cores_with_models.count(c)) {
        core = c;
        break;
      }
    }
  }
  absl::StatusOr<std::unique_ptr<neuron::runtime::Model>> loaded = g_runtime->LoadBytes(
      std::string_view(static_cast<const char*>(neff_bytes), size), core);
  if (!loaded.ok()) return Fail(loaded.status());
  g_cores_with_models.insert(core);
  *model = new nrt_model{std::move(*loaded)};
  return NRT_SUCCESS;
}

NRT_STATUS nrt_unload(nrt_model_t* model) {
  if (model == nullptr) return Fail(NRT_INVALID_HANDLE, "nrt_unload: null model");
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_cores_with_models.erase(model->model->core_id());
  }
  delete model;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_tensor_allocate(nrt_tensor_placement_t placement, int vnc, size_t size,
                               const char* name, nrt_tensor_t** tensor) {
  if (tensor == nullptr) return Fail(NRT_INVALID, "nrt_tensor_allocate: null tensor pointer");
  const std::string tensor_name = name != nullptr ? name : "";
  if (placement == NRT_TENSOR_PLACEMENT_HOST) {
    *tensor = new nrt_tensor{neuron::runtime::TensorBuffer::AllocateHost(size, tensor_name)};
    return NRT_SUCCESS;
  }
  if (placement != NRT_TENSOR_PLACEMENT_DEVICE) {
    return Fail(NRT_INVALID, "nrt_tensor_allocate: only device and host placement are supported");
  }
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_runtime == nullptr) return NotInitialized("nrt_tensor_allocate");
  absl::StatusOr<std::unique_ptr<neuron::runtime::TensorBuffer>> buffer =
      g_runtime->AllocateTensor(vnc, size, tensor_name);
  if (!buffer.ok()) return Fail(buffer.status());
  *tensor = new nrt_tensor{std::move(*buffer)};
  return NRT_SUCCESS;
}

void nrt_tensor_free(nrt_tensor_t** tensor) {
  if (tensor == nullptr || *tensor == nullptr) return;
  delete *tensor;
  *tensor = nullptr;
}

NRT_STATUS nrt_tensor_read(const nrt_tensor_t* tensor, void* buf, size_t offset, size_t size) {
  if (tensor == nullptr || (buf == nullptr && size > 0)) {
    return Fail(NRT_INVALID, "nrt_tensor_read: null tensor or buffer");
  }
  absl::Status s = tensor->buffer->Read(buf, offset, size);
  return s.ok() ? NRT_SUCCESS : Fail(s);
}

NRT_STATUS nrt_tensor_write(nrt_tensor_t* tensor, const void* buf, size_t offset, size_t size) {
  if (tensor == nullptr || (buf == nullptr && size > 0)) {
    return Fail(NRT_INVALID, "nrt_tensor_write: null tensor or buffer");
  }
  absl::Status s = tensor->buffer->Write(buf, offset, size);
  return s.ok() ? NRT_SUCCESS : Fail(s);
}

size_t nrt_tensor_get_size(const nrt_tensor_t* tensor) {
  return tensor != nullptr ? tensor->buffer->size() : 0;
}

NRT_STATUS nrt_allocate_tensor_set(nrt_tensor_set_t** result) {
  if (result == nullptr) return Fail(NRT_INVALID, "nrt_allocate_tensor_set: null pointer");
  *result = new TensorSet();
  return NRT_SUCCESS;
}

void nrt_destroy_tensor_set(nrt_tensor_set_t** tensor_set) {
  if (tensor_set == nullptr || *tensor_set == nullptr) return;
  delete static_cast<TensorSet*>(*tensor_set);
  *tensor_set = nullptr;
}

NRT_STATUS nrt_add_tensor_to_tensor_set(nrt_tensor_set_t* tensor_set, const char* tensor_name,
                                        nrt_tensor_t* tensor) {
  if (tensor_set == nullptr || tensor_name == nullptr || tensor == nullptr) {
    return Fail(NRT_INVALID, "nrt_add_tensor_to_tensor_set: null argument");
  }
  static_cast<TensorSet*>(tensor_set)->tensors[tensor_name] = tensor;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_get_tensor_from_tensor_set(nrt_tensor_set_t* tensor_set, const char* tensor_name,
                                          nrt_tensor_t** tensor) {
  if (tensor_set == nullptr || tensor_name == nullptr || tensor == nullptr) {
    return Fail(NRT_INVALID, "nrt_get_tensor_from_tensor_set: null argument");
  }
  auto& tensors = static_cast<TensorSet*>(tensor_set)->tensors;
  auto it = tensors.find(tensor_name);
  if (it == tensors.end()) {
    return Fail(NRT_INVALID, absl::StrFormat("no tensor named '%s' in the set", tensor_name));
  }
  *tensor = it->second;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_execute(nrt_model_t* model, const nrt_tensor_set_t* input_set,
                       nrt_tensor_set_t* output_set) {
  return nrt_execute_repeat(model, input_set, output_set, 1);
}

NRT_STATUS nrt_execute_repeat(nrt_model_t* model, const nrt_tensor_set_t* input_set,
                              nrt_tensor_set_t* output_set, int repeat_count) {
  if (model == nullptr) return Fail(NRT_INVALID_HANDLE, "nrt_execute: null model");
  if (input_set == nullptr || output_set == nullptr) {
    return Fail(NRT_INVALID, "nrt_execute: null tensor set");
  }
  const auto& ins = static_cast<const TensorSet*>(input_set)->tensors;
  const auto& outs = static_cast<const TensorSet*>(output_set)->tensors;
  const neuron::runtime::Model& m = *model->model;
  std::vector<const neuron::runtime::TensorBuffer*> in;
  for (const auto& info : m.inputs()) {
    auto it = ins.find(info.name);
    if (it == ins.end()) {
      return Fail(NRT_INVALID, absl::StrFormat("nrt_execute: no input tensor named '%s'", info.name));
    }
    in.push_back(it->second->buffer.get());
  }
  std::vector<neuron::runtime::TensorBuffer*> out;
  for (const auto& info : m.outputs()) {
    auto it = outs.find(info.name);
    if (it == outs.end()) {
      return Fail(NRT_INVALID,
                  absl::StrFormat("nrt_execute: no output tensor named '%s'", info.name));
    }
    out.push_back(it->second->buffer.get());
  }
  NRT_STATUS last = NRT_SUCCESS;
  for (int r = 0; r < std::max(1, repeat_count); ++r) {
    absl::StatusOr<neuron::runtime::ExecuteResult> result = model->model->Execute(in, out);
    if (!result.ok()) return Fail(result.status());
    if (result->status != NRT_SUCCESS) {
      g_last_error = result->numerical_report;
      last = result->status;
    }
  }
  return last;
}

NRT_STATUS nrt_get_model_tensor_info(nrt_model_t* model, nrt_tensor_info_array_t** tensor_info) {
  if (model == nullptr || tensor_info == nullptr) {
    return Fail(NRT_INVALID, "nrt_get_model_tensor_info: null argument");
  }
  const neuron::runtime::Model& m = *model->model;
  const size_t n = m.inputs().size() + m.outputs().size();
  auto* array = static_cast<nrt_tensor_info_array_t*>(
      std::calloc(1, sizeof(nrt_tensor_info_array_t) + n * sizeof(nrt_tensor_info_t)));
  if (array == nullptr) return Fail(NRT_FAIL_HOST_MEM_ALLOC, "out of host memory");
  array->tensor_count = n;
  size_t k = 0;
  auto add = [&](const neuron::runtime::TensorInfo& t, nrt_tensor_usage_t usage) {
    nrt_tensor_info_t& info = array->tensor_array[k++];
    std::snprintf(info.name, sizeof(info.name), "%s", t.name.c_str());
    info.usage = usage;
    info.size = t.bytes;
    info.dtype = ToNrtDtype(t.shape.type);
    info.ndim = static_cast<uint32_t>(t.shape.dims.size());
    info.shape = static_cast<uint32_t*>(std::calloc(info.ndim + 1, sizeof(uint32_t)));
    for (uint32_t d = 0; d < info.ndim && info.shape != nullptr; ++d) {
      info.shape[d] = static_cast<uint32_t>(t.shape.dims[d]);
    }
  };
  for (const auto& t : m.inputs()) add(t, NRT_TENSOR_USAGE_INPUT);
  for (const auto& t : m.outputs()) add(t, NRT_TENSOR_USAGE_OUTPUT);
  *tensor_info = array;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_free_model_tensor_info(nrt_tensor_info_array_t* tensor_info) {
  if (tensor_info == nullptr) return NRT_SUCCESS;
  for (uint64_t i = 0; i < tensor_info->tensor_count; ++i) {
    std::free(tensor_info->tensor_array[i].shape);
  }
  std::free(tensor_info);
  return NRT_SUCCESS;
}

NRT_STATUS nrt_get_visible_vnc_count(uint32_t* vnc_count) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_runtime == nullptr) return NotInitialized("nrt_get_visible_vnc_count");
  if (vnc_count == nullptr) return Fail(NRT_INVALID, "nrt_get_visible_vnc_count: null pointer");
  *vnc_count = static_cast<uint32_t>(g_runtime->config().visible_cores.size());
  return NRT_SUCCESS;
}

NRT_STATUS nrt_get_total_vnc_count(uint32_t* vnc_count) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_runtime == nullptr) return NotInitialized("nrt_get_total_vnc_count");
  if (vnc_count == nullptr) return Fail(NRT_INVALID, "nrt_get_total_vnc_count: null pointer");
  *vnc_count = static_cast<uint32_t>(g_runtime->core_map().count());
  return NRT_SUCCESS;
}

NRT_STATUS nrt_get_model_vnc_count(const nrt_model_t* model, uint32_t* vnc_count) {
  if (model == nullptr || vnc_count == nullptr) {
    return Fail(NRT_INVALID, "nrt_get_model_vnc_count: null argument");
  }
  *vnc_count = 1;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_get_version(nrt_version_t* ver, size_t size) {
  if (ver == nullptr || size < sizeof(nrt_version_t)) {
    return Fail(NRT_INVALID, "nrt_get_version: null or short version struct");
  }
  std::memset(ver, 0, sizeof(*ver));
  ver->rt_major = NRT_MAJOR_VERSION;
  ver->rt_minor = NRT_MINOR_VERSION;
  std::snprintf(ver->rt_detail, sizeof(ver->rt_detail), "neuron-tools %s (simulated device)",
                NEURON_TOOLS_VERSION);
  std::snprintf(ver->git_hash, sizeof(ver->git_hash), "unknown");
  return NRT_SUCCESS;
}

const char* nrt_get_last_error(void) { return g_last_error.c_str(); }

}  // extern "C"
