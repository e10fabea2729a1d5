// Lifecycle, loading, core counts, versions and the questions a program
// asks about the instance, a core or a model.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <set>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "lib/nrt/api_state.h"
#include "lib/runtime/core.h"
#include "neuron/version.h"
#include "nrt/nrt_version.h"

namespace neuron::nrt_api {
namespace {

RuntimeLock g_runtime_mu;
std::unique_ptr<runtime::Runtime> g_runtime;  // guarded by g_runtime_mu
bool g_closed = false;                        // guarded by g_runtime_mu
std::mutex g_load_mu;
std::multiset<int> g_cores_with_models;       // guarded by g_load_mu
std::atomic<uint32_t> g_next_model_id{1};

// Copies `full` into a caller's struct the caller says is `size_in` bytes
// (older or newer headers), reporting what was written.
template <typename T>
void CopySized(const T& full, void* out, size_t size_in, size_t* size_out) {
  const size_t n = std::min(size_in, sizeof(T));
  std::memcpy(out, &full, n);
  if (size_out != nullptr) *size_out = n;
}

uint32_t InstanceFamily(const std::string& arch) {
  if (arch == "trn1") return NRT_INSTANCE_TRN1;
  if (arch == "trn1n") return NRT_INSTANCE_TRN1N;
  if (arch == "inf2") return NRT_INSTANCE_INF2;
  if (arch == "trn2") return NRT_INSTANCE_TRN2;
  if (arch == "trn2n") return NRT_INSTANCE_TRN2N;
  if (arch == "trn3") return NRT_INSTANCE_TRN3;
  return NRT_INSTANCE_UNKNOWN;
}

// "trn1.32xlarge" -> NRT_INSTANCE_SIZE_32XL.
uint32_t InstanceSize(const std::string& name) {
  const size_t dot = name.find('.');
  const std::string size = dot == std::string::npos ? "" : name.substr(dot + 1);
  static const std::pair<const char*, uint32_t> kSizes[] = {
      {"xlarge", NRT_INSTANCE_SIZE_1XL},     {"2xlarge", NRT_INSTANCE_SIZE_2XL},
      {"3xlarge", NRT_INSTANCE_SIZE_3XL},    {"4xlarge", NRT_INSTANCE_SIZE_4XL},
      {"6xlarge", NRT_INSTANCE_SIZE_6XL},    {"8xlarge", NRT_INSTANCE_SIZE_8XL},
      {"24xlarge", NRT_INSTANCE_SIZE_24XL},  {"32xlarge", NRT_INSTANCE_SIZE_32XL},
      {"48xlarge", NRT_INSTANCE_SIZE_48XL},
  };
  for (const auto& [text, value] : kSizes) {
    if (size == text) return value;
  }
  return NRT_INSTANCE_SIZE_UNKNOWN;
}

// Core counts answer from the running runtime, else from the environment.
NRT_STATUS CountCores(const char* function, uint32_t* out, bool visible) {
  if (out == nullptr) return Fail(NRT_INVALID, absl::StrFormat("%s: null count pointer", function));
  std::shared_lock<RuntimeLock> lock(g_runtime_mu);
  if (g_runtime != nullptr) {
    *out = static_cast<uint32_t>(visible ? g_runtime->config().visible_cores.size()
                                         : g_runtime->core_map().count());
    return NRT_SUCCESS;
  }
  absl::StatusOr<runtime::PlatformView> view = runtime::ProbePlatform(config::ProcessEnv());
  if (!view.ok()) return Fail(function, view.status());
  *out = static_cast<uint32_t>(visible ? view->visible_cores.size() : view->core_map.count());
  return NRT_SUCCESS;
}

// A load's core and count, checked before anything else: -1 is the one
// documented "any core", so -2 or INT32_MIN is a caller's bug, not -1.
NRT_STATUS CheckLoadCores(const char* function, int32_t vnc, int32_t vnc_count) {
  if (vnc < -1) {
    return Fail(NRT_INVALID,
                absl::StrFormat("%s: vnc %d is not a core (pass 0 or more, or -1 for any)", function,
                                vnc));
  }
  if (vnc_count != -1 && vnc_count != 1) {
    return Fail(NRT_INVALID,
                absl::StrFormat("%s: vnc_count %d is not supported (pass -1)", function, vnc_count));
  }
  return NRT_SUCCESS;
}

NRT_STATUS LoadOn(const char* function, const void* neff_bytes, size_t size, int32_t vnc,
                  int32_t vnc_count, nrt_model_t** model, const runtime::ExecuteOptions& options) {
  if (neff_bytes == nullptr || model == nullptr) {
    return Fail(NRT_INVALID, absl::StrFormat("%s: null NEFF or model pointer", function));
  }
  if (NRT_STATUS s = CheckLoadCores(function, vnc, vnc_count); s != NRT_SUCCESS) return s;
  RuntimeRef rt(function);
  if (!rt.ok()) return rt.status();
  int core = -1;
  if (vnc >= 0) {
    if (NRT_STATUS s = CoreOfVnc(function, *rt, vnc, &core); s != NRT_SUCCESS) return s;
  }
  {
    std::lock_guard<std::mutex> lock(g_load_mu);
    if (core < 0) {
      // The first held core without a model, else the first held core.
      core = rt->cores().front();
      for (int c : rt->cores()) {
        if (!g_cores_with_models.count(c)) {
          core = c;
          break;
        }
      }
    }
    g_cores_with_models.insert(core);
  }
  runtime::LoadOptions load_options;
  std::tie(load_options.display_name, load_options.source_path) = TakeLoadName();
  absl::StatusOr<std::unique_ptr<runtime::Model>> loaded = rt->LoadBytes(
      std::string_view(static_cast<const char*>(neff_bytes), size), core, load_options);
  if (!loaded.ok()) {
    std::lock_guard<std::mutex> lock(g_load_mu);
    g_cores_with_models.erase(g_cores_with_models.find(core));
    return Fail(function, loaded.status());
  }
  auto* m = new nrt_model;
  m->model = std::move(*loaded);
  m->id = g_next_model_id.fetch_add(1);
  m->core = core;
  m->options = options;
  TrackModel(m);
  *model = m;
  return NRT_SUCCESS;
}

}  // namespace

RuntimeLock& RuntimeMutex() { return g_runtime_mu; }
runtime::Runtime* CurrentRuntimeLocked() { return g_runtime.get(); }
bool WasClosed() { return g_closed; }

// Defined in api_collectives.cc: the collectives context of a NEFF loaded
// with nrt_load_collectives.
absl::StatusOr<runtime::ExecuteOptions> CollectivesForLoad(int vnc, uint32_t ctx_device_id,
                                                           uint32_t ctx_device_count);

}  // namespace neuron::nrt_api

using namespace neuron::nrt_api;  // NOLINT: the C API is this file's whole job

extern "C" {

NRT_STATUS nrt_init(nrt_framework_type_t framework, const char* fw_version,
                    const char* fal_version) {
  std::unique_lock<RuntimeLock> lock(g_runtime_mu);
  if (g_runtime != nullptr) {
    return Fail(NRT_INVALID, "nrt_init: the runtime is already initialized (call nrt_close first)");
  }
  if (framework <= NRT_FRAMEWORK_TYPE_INVALID || framework > NRT_FRAMEWORK_TYPE_PRECHECK) {
    return Fail(NRT_INVALID, absl::StrFormat("nrt_init: invalid framework type %d", framework));
  }
  absl::StatusOr<std::unique_ptr<neuron::runtime::Runtime>> rt =
      neuron::runtime::Runtime::Init({});
  if (!rt.ok()) return Fail("nrt_init", rt.status());
  g_runtime = std::move(*rt);
  g_closed = false;
  std::lock_guard<std::mutex> load_lock(g_load_mu);
  g_cores_with_models.clear();
  return NRT_SUCCESS;
}

void nrt_close(void) {
  // Workers and proxies first, while no call holds the runtime: they may
  // themselves be waiting in a call that needs it.
  ShutdownAsync();
  ShutdownSendRecv();
  ShutdownProfiling();
  std::unique_lock<RuntimeLock> lock(g_runtime_mu);
  if (g_runtime == nullptr) return;
  ShutdownCollectives();
  ReleaseAllHandles();
  g_runtime.reset();
  g_closed = true;
  std::lock_guard<std::mutex> load_lock(g_load_mu);
  g_cores_with_models.clear();
}

NRT_STATUS nrt_load(const void* neff_bytes, size_t size, int32_t vnc, int32_t vnc_count,
                    nrt_model_t** model) {
  return LoadOn("nrt_load", neff_bytes, size, vnc, vnc_count, model, {});
}

NRT_STATUS nrt_load_collectives(const void* neff_bytes, size_t size, int32_t vnc,
                                int32_t vnc_count, uint32_t ctx_device_id,
                                uint32_t ctx_device_count, nrt_model_t** model) {
  if (NRT_STATUS s = CheckLoadCores("nrt_load_collectives", vnc, vnc_count); s != NRT_SUCCESS) {
    return s;
  }
  if (ctx_device_count == 0 || ctx_device_id >= ctx_device_count) {
    return Fail(NRT_INVALID,
                absl::StrFormat("nrt_load_collectives: device id %u is not within a count of %u",
                                ctx_device_id, ctx_device_count));
  }
  absl::StatusOr<neuron::runtime::ExecuteOptions> options =
      CollectivesForLoad(vnc, ctx_device_id, ctx_device_count);
  if (!options.ok()) return Fail("nrt_load_collectives", options.status());
  return LoadOn("nrt_load_collectives", neff_bytes, size, vnc, vnc_count, model, *options);
}

NRT_STATUS nrt_unload(nrt_model_t* model) {
  if (model == nullptr) return Fail(NRT_INVALID_HANDLE, "nrt_unload: null model");
  UntrackModel(model);
  {
    std::lock_guard<std::mutex> lock(g_load_mu);
    auto it = g_cores_with_models.find(model->core);
    if (model->model != nullptr && it != g_cores_with_models.end()) g_cores_with_models.erase(it);
  }
  {
    // Unloading frees device memory: the runtime must still be there.
    std::shared_lock<RuntimeLock> lock(g_runtime_mu);
    delete model;
  }
  return NRT_SUCCESS;
}

NRT_STATUS nrt_get_model_nc_count(const nrt_model_t* model, uint32_t* vnc_count) {
  return nrt_get_model_vnc_count(model, vnc_count);
}

NRT_STATUS nrt_get_model_vnc_count(const nrt_model_t* model, uint32_t* vnc_count) {
  if (model == nullptr) return Fail(NRT_INVALID_HANDLE, "nrt_get_model_vnc_count: null model");
  if (vnc_count == nullptr) return Fail(NRT_INVALID, "nrt_get_model_vnc_count: null count pointer");
  *vnc_count = 1;  // a NEFF runs on one logical core here
  return NRT_SUCCESS;
}

NRT_STATUS nrt_get_total_nc_count(uint32_t* vnc_count) {
  return CountCores("nrt_get_total_nc_count", vnc_count, /*visible=*/false);
}
NRT_STATUS nrt_get_total_vnc_count(uint32_t* vnc_count) {
  return CountCores("nrt_get_total_vnc_count", vnc_count, /*visible=*/false);
}
NRT_STATUS nrt_get_visible_nc_count(uint32_t* vnc_count) {
  return CountCores("nrt_get_visible_nc_count", vnc_count, /*visible=*/true);
}
NRT_STATUS nrt_get_visible_vnc_count(uint32_t* vnc_count) {
  return CountCores("nrt_get_visible_vnc_count", vnc_count, /*visible=*/true);
}

NRT_STATUS nrt_get_instance_info(nrt_instance_info_t* info, size_t instance_info_len) {
  if (info == nullptr) return Fail(NRT_INVALID, "nrt_get_instance_info: null info pointer");
  absl::StatusOr<const neuron::device::InstanceType*> instance =
      neuron::device::SelectInstanceType(neuron::config::ProcessEnv());
  if (!instance.ok()) return Fail(NRT_INVALID, std::string(instance.status().message()));
  nrt_instance_info_t full{};
  full.family = InstanceFamily((*instance)->arch);
  full.size = InstanceSize((*instance)->name);
  std::snprintf(full.arch_name, sizeof(full.arch_name), "%s", (*instance)->device_name.c_str());
  std::snprintf(full.device_revision, sizeof(full.device_revision), "%s",
                (*instance)->arch_type.c_str());
  CopySized(full, info, instance_info_len, nullptr);
  return NRT_SUCCESS;
}

NRT_STATUS nrt_get_version(nrt_version_t* ver, size_t size) {
  if (ver == nullptr) return Fail(NRT_INVALID, "nrt_get_version: null version pointer");
  nrt_version_t full{};
  full.rt_major = NRT_MAJOR_VERSION;
  full.rt_minor = NRT_MINOR_VERSION;
  std::snprintf(full.rt_detail, sizeof(full.rt_detail), "neuron-tools %s (simulated device)",
                NEURON_TOOLS_VERSION);
  std::snprintf(full.git_hash, sizeof(full.git_hash), "neuron-tools-%s", NEURON_TOOLS_VERSION);
  CopySized(full, ver, size, nullptr);
  return NRT_SUCCESS;
}

NRT_STATUS nrt_get_vnc_memory_stats(uint32_t vnc, nrt_vnc_memory_stats_t* stats,
                                    size_t stats_size_in, size_t* stats_size_out) {
  if (stats == nullptr) return Fail(NRT_INVALID, "nrt_get_vnc_memory_stats: null stats pointer");
  RuntimeRef rt("nrt_get_vnc_memory_stats");
  if (!rt.ok()) return rt.status();
  int id = 0;
  if (NRT_STATUS s = CoreOfVnc("nrt_get_vnc_memory_stats", *rt, vnc, &id); s != NRT_SUCCESS) {
    return s;
  }
  absl::StatusOr<neuron::runtime::Core*> core = rt->GetCore(id);
  if (!core.ok()) return Fail("nrt_get_vnc_memory_stats", core.status());
  nrt_vnc_memory_stats_t full{};
  full.bytes_used = (*core)->arena().used();
  full.bytes_limit = (*core)->arena().capacity();
  CopySized(full, stats, stats_size_in, stats_size_out);
  return NRT_SUCCESS;
}

NRT_STATUS nrt_get_model_info(const nrt_model_t* model, nrt_model_info_t* info,
                              size_t info_size_in, size_t* info_size_out) {
  if (model == nullptr) return Fail(NRT_INVALID_HANDLE, "nrt_get_model_info: null model");
  if (info == nullptr) return Fail(NRT_INVALID, "nrt_get_model_info: null info pointer");
  RuntimeRef rt("nrt_get_model_info");
  if (!rt.ok()) return rt.status();
  nrt_model_info_t full{};
  full.vnc = static_cast<uint32_t>(VncOfCore(*rt, model->core));
  CopySized(full, info, info_size_in, info_size_out);
  return NRT_SUCCESS;
}

NRT_STATUS nrt_get_model_instance_count(nrt_model_t* model, uint32_t* instance_count) {
  if (model == nullptr) return Fail(NRT_INVALID_HANDLE, "nrt_get_model_instance_count: null model");
  if (instance_count == nullptr) {
    return Fail(NRT_INVALID, "nrt_get_model_instance_count: null count pointer");
  }
  *instance_count = 1;  // a core runs one execution at a time
  return NRT_SUCCESS;
}

NRT_STATUS nrt_get_model_tensor_info(nrt_model_t* model, nrt_tensor_info_array_t** tensor_info) {
  if (model == nullptr || model->model == nullptr) {
    return Fail(NRT_INVALID_HANDLE, "nrt_get_model_tensor_info: null or unloaded model");
  }
  if (tensor_info == nullptr) {
    return Fail(NRT_INVALID, "nrt_get_model_tensor_info: null result pointer");
  }
  const neuron::runtime::Model& m = *model->model;
  const size_t n = m.inputs().size() + m.outputs().size();
  auto* array = static_cast<nrt_tensor_info_array_t*>(
      std::calloc(1, sizeof(nrt_tensor_info_array_t) + n * sizeof(nrt_tensor_info_t)));
  if (array == nullptr) return Fail(NRT_RESOURCE, "nrt_get_model_tensor_info: out of host memory");
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

NRT_STATUS nrt_execute(nrt_model_t* model, const nrt_tensor_set_t* input_set,
                       nrt_tensor_set_t* output_set) {
  return nrt_execute_repeat(model, input_set, output_set, 1);
}

NRT_STATUS nrt_execute_repeat(nrt_model_t* model, const nrt_tensor_set_t* input_set,
                              nrt_tensor_set_t* output_set, int repeat_count) {
  if (input_set == nullptr || output_set == nullptr) {
    return Fail(NRT_INVALID, "nrt_execute: null tensor set");
  }
  if (repeat_count < 1) {
    return Fail(NRT_INVALID, absl::StrFormat("nrt_execute_repeat: repeat_count %d is below 1",
                                             repeat_count));
  }
  RuntimeRef rt("nrt_execute");
  if (!rt.ok()) return rt.status();
  const auto& ins = *static_cast<const TensorSet*>(input_set);
  auto& outs = *static_cast<TensorSet*>(output_set);
  NRT_STATUS last = NRT_SUCCESS;
  for (int r = 0; r < repeat_count; ++r) {
    NRT_STATUS s = ExecuteModel(model, ins, outs, "nrt_execute");
    if (s != NRT_SUCCESS && s != NRT_EXEC_COMPLETED_WITH_NUM_ERR) return s;
    if (s != NRT_SUCCESS) last = s;
  }
  return last;
}

const char* nrt_get_last_error(void) {
  // The thread's own string; valid until its next failing call.
  return LastError().c_str();
}

}  // extern "C"
