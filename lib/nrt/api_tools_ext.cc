// neuron-tools' extras (nrt/nrt_tools_ext.h), not part of the SDK: what the
// project's tools show beyond the SDK's functions. Descriptions travel as
// JSON so that a field can be added without changing the ABI.
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "lib/nrt/api_state.h"
#include "lib/program/dtype.h"
#include "lib/runtime/core.h"
#include "lib/runtime/memory_metrics.h"
#include "lib/support/progress.h"
#include "nlohmann/json.hpp"
#include "nrt/nrt_tools_ext.h"

namespace neuron::nrt_api {
namespace {

using nlohmann::json;

thread_local std::string t_load_name;
thread_local std::string t_load_path;

json TensorJson(const runtime::TensorInfo& t) {
  return json{{"position", t.position},
              {"name", t.name},
              {"dtype", program::DtypeName(t.shape.type)},
              {"shape", t.shape.dims},
              {"bytes", t.bytes},
              {"path", t.path},
              {"aliased_input", t.aliased_input}};
}

// A malloc'd copy for the caller (nrt_tools_free).
NRT_STATUS HandOut(const char* function, const json& doc, char** out) {
  const std::string text = doc.dump();
  char* copy = static_cast<char*>(std::malloc(text.size() + 1));
  if (copy == nullptr) return Fail(NRT_RESOURCE, absl::StrFormat("%s: out of host memory", function));
  std::memcpy(copy, text.c_str(), text.size() + 1);
  *out = copy;
  return NRT_SUCCESS;
}

// nrt_tools_feed_t as the executor's HostFeed.
class CallbackFeed : public kernels::HostFeed {
 public:
  explicit CallbackFeed(const nrt_tools_feed_t& feed) : feed_(feed) {}
  absl::Status Infeed(const std::string& instruction, const hlo::Shape& shape, uint8_t* out,
                      size_t bytes) override {
    if (feed_.infeed == nullptr) return absl::FailedPreconditionError("the host feed takes no infeed");
    char error[512] = "";
    const std::string dtype = program::DtypeName(shape.type);
    if (feed_.infeed(feed_.context, instruction.c_str(), dtype.c_str(), shape.dims.data(),
                     shape.dims.size(), out, bytes, error, sizeof error) != 0) {
      return absl::InvalidArgumentError(error[0] != '\0' ? error : "infeed refused");
    }
    return absl::OkStatus();
  }
  absl::Status Outfeed(const std::string& instruction, const hlo::Shape& shape, const uint8_t* data,
                       size_t bytes) override {
    if (feed_.outfeed == nullptr) return absl::FailedPreconditionError("the host feed takes no outfeed");
    char error[512] = "";
    const std::string dtype = program::DtypeName(shape.type);
    if (feed_.outfeed(feed_.context, instruction.c_str(), dtype.c_str(), shape.dims.data(),
                      shape.dims.size(), data, bytes, error, sizeof error) != 0) {
      return absl::InvalidArgumentError(error[0] != '\0' ? error : "outfeed refused");
    }
    return absl::OkStatus();
  }

 private:
  nrt_tools_feed_t feed_;
};

}  // namespace

std::pair<std::string, std::string> TakeLoadName() {
  return {std::exchange(t_load_name, std::string()), std::exchange(t_load_path, std::string())};
}

}  // namespace neuron::nrt_api

using namespace neuron::nrt_api;  // NOLINT: the C API is this file's whole job

extern "C" {

void nrt_tools_quiet_api_errors(bool quiet) { SetQuietApiErrors(quiet); }

void nrt_tools_enable_progress(const char* tool, bool quiet) {
  neuron::Progress::EnableForTool(tool != nullptr ? tool : "", quiet);
}

void nrt_tools_set_load_name(const char* name, const char* path) {
  t_load_name = name != nullptr ? name : "";
  t_load_path = path != nullptr ? path : "";
}

NRT_STATUS nrt_tools_last_loop_trips(const nrt_model_t* model, uint64_t* trips, uint64_t* loop_ns) {
  const char* kFn = "nrt_tools_last_loop_trips";
  if (model == nullptr || model->model == nullptr) {
    return Fail(NRT_INVALID_HANDLE, absl::StrFormat("%s: null or unloaded model", kFn));
  }
  if (trips == nullptr) return Fail(NRT_INVALID, absl::StrFormat("%s: null result pointer", kFn));
  *trips = static_cast<uint64_t>(model->last_loop_trips.load(std::memory_order_relaxed));
  if (loop_ns != nullptr) *loop_ns = static_cast<uint64_t>(model->last_loop_ns.load(std::memory_order_relaxed));
  return NRT_SUCCESS;
}

NRT_STATUS nrt_tools_describe_model(const nrt_model_t* model, char** out) {
  const char* kFn = "nrt_tools_describe_model";
  if (model == nullptr || model->model == nullptr) {
    return Fail(NRT_INVALID_HANDLE, absl::StrFormat("%s: null or unloaded model", kFn));
  }
  if (out == nullptr) return Fail(NRT_INVALID, absl::StrFormat("%s: null result pointer", kFn));
  RuntimeRef rt(kFn);
  if (!rt.ok()) return rt.status();
  const neuron::runtime::Model& m = *model->model;
  json inputs = json::array(), outputs = json::array();
  for (const auto& t : m.inputs()) inputs.push_back(TensorJson(t));
  for (const auto& t : m.outputs()) outputs.push_back(TensorJson(t));
  const neuron::runtime::LoadCost& c = m.cost();
  const neuron::runtime::LoadTimings& t = m.timings();
  const std::optional<size_t> debug_entries = m.debug_info_entries();
  json doc = {
      {"name", m.name()},
      {"target", m.target()},
      {"core", model->core},
      {"inputs", inputs},
      {"outputs", outputs},
      {"plan",
       {{"inputs", c.plan.inputs},
        {"outputs", c.plan.outputs},
        {"aliased", c.plan.aliased},
        {"scratch", c.plan.scratch_peak},
        {"constants", c.plan.constants},
        {"total", c.plan.total},
        {"workspace", c.workspace}}},
      {"cost",
       {{"weights", c.weights},
        {"model_code", c.model_code},
        {"scratchpad", c.scratchpad},
        {"scratchpad_page", c.scratchpad_page},
        {"largest_variable", c.largest_variable},
        {"intermediates", c.intermediates},
        {"planned_intermediates", c.planned_intermediates},
        {"io_tensors", c.io_tensors},
        {"peak", c.peak}}},
      {"load_ms",
       {{"read", t.read_ms},
        {"hash", t.hash_ms},
        {"decompress", t.decompress_ms},
        {"deserialize", t.deserialize_ms},
        {"build", t.build_ms},
        {"place", t.place_ms},
        {"debug_info", t.debug_info_ms},
        {"total", t.total_ms}}},
      {"debug_info_entries", debug_entries.has_value() ? json(*debug_entries) : json(nullptr)},
  };
  return HandOut(kFn, doc, out);
}

NRT_STATUS nrt_tools_describe_core_memory(uint32_t vnc, char** out) {
  const char* kFn = "nrt_tools_describe_core_memory";
  if (out == nullptr) return Fail(NRT_INVALID, absl::StrFormat("%s: null result pointer", kFn));
  RuntimeRef rt(kFn);
  if (!rt.ok()) return rt.status();
  int id = 0;
  if (NRT_STATUS s = CoreOfVnc(kFn, *rt, vnc, &id); s != NRT_SUCCESS) return s;
  absl::StatusOr<neuron::runtime::Core*> core = rt->GetCore(id);
  if (!core.ok()) return Fail(kFn, core.status());
  const neuron::runtime::MemoryMetricsSnapshot metrics = (*core)->memory_metrics();
  json categories = json::object();
  for (neuron::device::MemoryCategory category : neuron::device::AllMemoryCategories()) {
    const neuron::runtime::CategoryMetrics& m = metrics[static_cast<int>(category)];
    if (m.allocs == 0) continue;
    categories[neuron::device::MemoryCategoryName(category)] =
        json{{"in_use", m.in_use}, {"peak", m.peak}, {"allocs", m.allocs}, {"frees", m.frees}};
  }
  json doc = {{"enabled", rt->config().enable_memory_metrics},
              {"core", id},
              {"summary", neuron::runtime::FormatMemoryMetrics(metrics)},
              {"categories", categories}};
  return HandOut(kFn, doc, out);
}

NRT_STATUS nrt_tools_set_model_feed(nrt_model_t* model, const nrt_tools_feed_t* feed) {
  if (model == nullptr || model->model == nullptr) {
    return Fail(NRT_INVALID_HANDLE, "nrt_tools_set_model_feed: null or unloaded model");
  }
  if (feed == nullptr) {
    model->options.feed = nullptr;
    model->feed.reset();
    return NRT_SUCCESS;
  }
  model->feed = std::make_unique<CallbackFeed>(*feed);
  model->options.feed = model->feed.get();
  return NRT_SUCCESS;
}

void nrt_tools_set_bootstrap_listener(int fd) { SetBootstrapListener(fd); }

void nrt_tools_free(char* json) { std::free(json); }

}  // extern "C"
