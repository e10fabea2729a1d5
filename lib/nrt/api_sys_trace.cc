// System trace (nrt/nrt_sys_trace.h): a lib/profile SysTrace recorder,
// open between nrt_sys_trace_start and nrt_sys_trace_stop, that the
// runtime's hooks (lib/runtime/observe) fill with loads, unloads,
// executions, device tensor transfers, device memory and collectives; the
// program moves events out as JSON with nrt_sys_trace_fetch_events.
//
// Event types are those of nrt_sys_trace_get_event_types(): "load",
// "unload", "exec", "tensor", "memory", "cc_running" (the words
// NEURON_RT_INSPECT_EVENT_FILTER_TYPE uses for them). Each event has one
// begin and one end time (nanoseconds on the runtime's steady clock), so an
// execution's start and end are one "exec" event.
//
// The capture does not need nrt_init (loads are captured from the first);
// nrt_close stops it and drops what was not fetched, as
// nrt_sys_trace_stop does.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/nrt/api_state.h"
#include "lib/profile/sys_trace.h"
#include "nrt/nrt_sys_trace.h"

namespace {

// Ring capacity per core unless set: bounded, so a program that never
// fetches does not grow without limit (about 1M events).
constexpr uint64_t kDefaultMaxEventsPerNc = uint64_t{1} << 20;

}  // namespace

struct nrt_sys_trace_config {
  uint64_t max_events_per_nc = kDefaultMaxEventsPerNc;
  std::set<int> disabled_nc;
  std::set<std::string> disabled_types;
};

struct nrt_sys_trace_fetch_options {
  uint64_t max_events_per_nc = 0;  // 0: all
  std::optional<int> nc_idx;       // unset: every core
};

namespace neuron::nrt_api {

namespace {

std::mutex g_mu;
std::unique_ptr<profile::SysTrace> g_trace;  // guarded by g_mu; set while started

}  // namespace

void ShutdownSysTrace() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_trace.reset();  // closes it; unfetched events are dropped
}

}  // namespace neuron::nrt_api

using namespace neuron::nrt_api;  // NOLINT: the C API is this file's whole job

extern "C" {

NRT_STATUS nrt_sys_trace_config_allocate(nrt_sys_trace_config_t** options) {
  if (options == nullptr)
    return Fail(NRT_INVALID, "nrt_sys_trace_config_allocate: null result pointer");
  *options = new nrt_sys_trace_config;
  return NRT_SUCCESS;
}

void nrt_sys_trace_config_set_defaults(nrt_sys_trace_config_t* options) {
  if (options != nullptr) *options = nrt_sys_trace_config();
}

void nrt_sys_trace_config_free(nrt_sys_trace_config_t* options) { delete options; }

void nrt_sys_trace_config_set_max_events_per_nc(nrt_sys_trace_config_t* options,
                                                uint64_t max_events_per_nc) {
  if (options != nullptr) options->max_events_per_nc = max_events_per_nc;
}

void nrt_sys_trace_config_set_capture_enabled_for_nc(nrt_sys_trace_config_t* options,
                                                     uint32_t nc_idx, bool enabled) {
  if (options == nullptr) return;
  if (enabled) {
    options->disabled_nc.erase(static_cast<int>(nc_idx));
  } else {
    options->disabled_nc.insert(static_cast<int>(nc_idx));
  }
}

NRT_STATUS nrt_sys_trace_config_set_capture_enabled_for_event_type(nrt_sys_trace_config_t* options,
                                                                   const char* event_type,
                                                                   bool enabled) {
  const char* function = "nrt_sys_trace_config_set_capture_enabled_for_event_type";
  if (options == nullptr) return Fail(NRT_INVALID, absl::StrFormat("%s: null options", function));
  return SetEventTypeCaptured(function, event_type, enabled, &options->disabled_types);
}

NRT_STATUS nrt_sys_trace_get_event_types(const char*** event_types, size_t* count) {
  return AllocateNameArray("nrt_sys_trace_get_event_types", neuron::profile::SysTraceEventTypes(),
                           event_types, count);
}

void nrt_sys_trace_free_event_types(const char** event_types, size_t count) {
  FreeNameArray(event_types, count);
}

NRT_STATUS nrt_sys_trace_config_get_enabled_event_types(nrt_sys_trace_config_t* options,
                                                        const char*** event_types, size_t* count) {
  if (options == nullptr) {
    return Fail(NRT_INVALID, "nrt_sys_trace_config_get_enabled_event_types: null options");
  }
  std::vector<std::string> names;
  for (const std::string& t : neuron::profile::SysTraceEventTypes())
    if (!options->disabled_types.count(t)) names.push_back(t);
  return AllocateNameArray("nrt_sys_trace_config_get_enabled_event_types", names, event_types,
                           count);
}

NRT_STATUS nrt_sys_trace_start(nrt_sys_trace_config_t* options) {
  const nrt_sys_trace_config o = options != nullptr ? *options : nrt_sys_trace_config();
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_trace != nullptr) {
    return Fail(NRT_INVALID, "nrt_sys_trace_start: the system trace is already started");
  }
  neuron::profile::SysTraceOptions so;
  so.max_events_per_nc = o.max_events_per_nc;
  so.disabled_cores = o.disabled_nc;
  so.disabled_types = o.disabled_types;
  g_trace = std::make_unique<neuron::profile::SysTrace>(std::move(so));
  g_trace->Open();
  return NRT_SUCCESS;
}

NRT_STATUS nrt_sys_trace_stop(void) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_trace == nullptr) {
    return Fail(NRT_INVALID, "nrt_sys_trace_stop: the system trace is not started");
  }
  g_trace.reset();
  return NRT_SUCCESS;
}

NRT_STATUS nrt_sys_trace_fetch_options_allocate(nrt_sys_trace_fetch_options_t** options) {
  if (options == nullptr) {
    return Fail(NRT_INVALID, "nrt_sys_trace_fetch_options_allocate: null result pointer");
  }
  *options = new nrt_sys_trace_fetch_options;
  return NRT_SUCCESS;
}

void nrt_sys_trace_fetch_options_set_defaults(nrt_sys_trace_fetch_options_t* options) {
  if (options != nullptr) *options = nrt_sys_trace_fetch_options();
}

void nrt_sys_trace_fetch_options_free(nrt_sys_trace_fetch_options_t* options) { delete options; }

void nrt_sys_trace_fetch_options_set_max_events_per_nc(nrt_sys_trace_fetch_options_t* options,
                                                       uint64_t max_events_per_nc) {
  if (options != nullptr) options->max_events_per_nc = max_events_per_nc;
}

void nrt_sys_trace_fetch_options_set_nc_idx(nrt_sys_trace_fetch_options_t* options,
                                            uint64_t nc_idx) {
  if (options != nullptr) options->nc_idx = static_cast<int>(nc_idx);
}

NRT_STATUS nrt_sys_trace_fetch_events(char** buffer, size_t* written_size,
                                      const nrt_sys_trace_fetch_options_t* options) {
  if (buffer == nullptr || written_size == nullptr) {
    return Fail(NRT_INVALID, "nrt_sys_trace_fetch_events: null buffer or size pointer");
  }
  const nrt_sys_trace_fetch_options o =
      options != nullptr ? *options : nrt_sys_trace_fetch_options();
  std::string text;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_trace == nullptr) {
      return Fail(
          NRT_INVALID,
          "nrt_sys_trace_fetch_events: the system trace is not started (nrt_sys_trace_start)");
    }
    text = neuron::profile::SysEventsJson(g_trace->Take(o.nc_idx, o.max_events_per_nc),
                                          g_trace->Dropped());
  }
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out == nullptr) {
    return Fail(NRT_RESOURCE, absl::StrFormat("nrt_sys_trace_fetch_events: no host memory for %d "
                                              "bytes of events",
                                              text.size() + 1));
  }
  std::memcpy(out, text.c_str(), text.size() + 1);
  *buffer = out;
  *written_size = text.size();
  return NRT_SUCCESS;
}

void nrt_sys_trace_buffer_free(char* buffer) { std::free(buffer); }

}  // extern "C"
