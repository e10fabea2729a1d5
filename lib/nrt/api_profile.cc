// Profiling and inspect sessions (nrt/nrt_profile.h, nrt_trace_*).
//
// Every capture here is a lib/profile Profiler fed by the runtime's
// execution hooks (lib/runtime/observe): this file only starts, stops and
// writes them.
//
//  - nrt_profile_start/stop: a profiler attached for one model's
//    executions; stop writes all of them as one device trace.
//  - continuous profiling: a profiler attached for every execution that
//    keeps each core's latest one; save writes it.
//  - nrt_trace_start/stop: a profiler attached for every execution (and
//    device allocations with trace_mem); stop writes it.
//  - inspect sessions: a profiler used instead of the environment's one
//    (NEURON_RT_INSPECT_* at init) until nrt_inspect_stop, plus a system
//    trace recorder whose events go into the system profile.
//
// Profiles are written as Trace Event JSON (open in ui.perfetto.dev or
// chrome://tracing) or, with NEURON_SIM_PROFILE_FORMAT=pftrace, Perfetto's
// protobuf trace; not as the SDK's binary NTFF: the simulated device has
// no notification queues to serialize. A file named by the caller
// (nrt_profile_start) is written in that format whatever its name.
// Every file appears whole or not at all (temporary file + rename).
//
// nrt_close (ShutdownProfiling) ends what is running: an inspect session is
// flushed like nrt_inspect_stop; an nrt_profile_start profile is written to
// the file named at start (when one was named); continuous profiling and
// nrt_trace_start captures are discarded (stop does not save / no file is
// known); the system trace is stopped and unfetched events dropped.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/config/inspect_events.h"
#include "lib/log/log.h"
#include "lib/nrt/api_state.h"
#include "lib/profile/profiler.h"
#include "lib/profile/sys_trace.h"
#include "lib/runtime/observe.h"
#include "nrt/nrt_profile.h"
#include "nrt/nrt_sys_trace.h"

// Continuous profiling options (nrt_profile_continuous_options_*).
struct nrt_profile_continuous_options {
  std::string output_dir = "./output";
};

// Options of nrt_inspect_begin_with_options; defaults as nrt_profile.h
// documents them (not influenced by the environment).
struct nrt_inspect_config {
  int session_id = 1;
  std::string output_dir = "./output";
  uint64_t sys_trace_max_events_per_nc = 0;  // 0: unbounded, as the variable
  std::set<uint32_t> disabled_nc;
  std::set<std::string> disabled_event_types;
  std::set<std::string> activities;  // enabled activity types
  bool enable_inspect = false;
  bool enable_inspect_on_fail = false;
};

namespace neuron::nrt_api {

void ShutdownSysTrace();  // api_sys_trace.cc

namespace {

using profile::Profiler;
using profile::ProfilerOptions;

const char* const kActivityTypes[] = {"system_profile", "device_profile", "host_memory",
                                      "cpu_util"};

std::mutex g_mu;  // guards everything below
struct ModelProfile {
  std::shared_ptr<Profiler> profiler;
  std::string filename;  // given to nrt_profile_start; may be empty
  std::string model;
};
std::unique_ptr<ModelProfile> g_model_profile;
std::shared_ptr<Profiler> g_continuous;
std::shared_ptr<Profiler> g_trace;
// The inspect session's system trace (its profiler is Profiler's session).
std::unique_ptr<profile::SysTrace> g_inspect_events;
std::atomic<uint64_t> g_continuous_files{0};

// A device capture of every execution (session mode), with the runtime's
// buffer sizes and no filter; no host activity.
config::RuntimeConfig CaptureConfig(const config::RuntimeConfig& runtime) {
  config::RuntimeConfig c = runtime;
  c.inspect_enable = true;
  c.inspect_device_profile = config::DeviceProfileMode::kSession;
  c.inspect_num_warmup = 0;
  c.inspect_on_fail = false;
  c.inspect_system_profile = false;
  c.inspect_cpu_util = false;
  c.inspect_host_memory = false;
  c.inspect_event_filter_nc.clear();
  c.inspect_event_types = config::AllInspectEventNames();
  return c;
}

NRT_STATUS WriteTrace(const char* function, Profiler& profiler, const std::string& path) {
  if (absl::Status s = profiler.WriteDeviceTrace(path); !s.ok()) {
    return Fail(NRT_FAILURE, absl::StrFormat("%s: %s", function, s.message()));
  }
  NEURON_LOG(NRT, kInfo, "%s: profile written to %s", function, path);
  return NRT_SUCCESS;
}

bool FileExists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

// Starts an inspect session under `config` (the variables' or the options'
// inspect settings over the runtime's configuration). Caller holds g_mu.
NRT_STATUS BeginInspectLocked(const char* function, const config::RuntimeConfig& config,
                              int core_count) {
  auto session = std::make_shared<Profiler>(config);
  if (absl::Status s = Profiler::BeginSession(session); !s.ok()) {
    return Fail(NRT_INVALID,
                absl::StrFormat("%s: %s (call nrt_inspect_stop first)", function, s.message()));
  }
  // The session's system profile also gets the runtime's events (loads,
  // transfers, memory), filtered as the profile is.
  if (config.inspect_enable && config.inspect_system_profile) {
    profile::SysTraceOptions o;
    o.max_events_per_nc = config.inspect_sys_trace_max_events_per_nc;
    if (!config.inspect_event_filter_nc.empty()) {
      std::set<int> wanted(config.inspect_event_filter_nc.begin(),
                           config.inspect_event_filter_nc.end());
      for (int c = 0; c < core_count; ++c)
        if (!wanted.count(c)) o.disabled_cores.insert(c);
    }
    const std::set<std::string> types(config.inspect_event_types.begin(),
                                      config.inspect_event_types.end());
    for (const std::string& t : profile::SysTraceEventTypes())
      if (!types.count(t)) o.disabled_types.insert(t);
    // Executions are already in the profile (its "exec" spans).
    o.disabled_types.insert("exec");
    g_inspect_events = std::make_unique<profile::SysTrace>(std::move(o));
    g_inspect_events->Open();
  }
  NEURON_LOG(NRT, kInfo, "%s: inspect session started, output in %s", function,
             session->output_dir());
  return NRT_SUCCESS;
}

// Ends the inspect session, writing what it captured; false when none.
bool StopInspectLocked() {
  std::shared_ptr<Profiler> session = Profiler::EndSession();
  std::unique_ptr<profile::SysTrace> events = std::move(g_inspect_events);
  if (events != nullptr) events->Close();
  if (session == nullptr) return false;
  if (events != nullptr) session->AddSystemEvents(events->Take(std::nullopt, 0));
  for (const std::string& path : session->Flush())
    NEURON_LOG(NRT, kInfo, "inspect profile written to %s", path);
  return true;
}

}  // namespace

NRT_STATUS AllocateNameArray(const char* function, const std::vector<std::string>& names,
                             const char*** out, size_t* count) {
  if (out == nullptr || count == nullptr) {
    return Fail(NRT_INVALID, absl::StrFormat("%s: null result pointer", function));
  }
  auto** array = static_cast<const char**>(std::calloc(names.size() + 1, sizeof(char*)));
  if (array == nullptr)
    return Fail(NRT_RESOURCE, absl::StrFormat("%s: out of host memory", function));
  for (size_t i = 0; i < names.size(); ++i) {
    array[i] = strdup(names[i].c_str());
    if (array[i] == nullptr) {
      for (size_t j = 0; j < i; ++j) std::free(const_cast<char*>(array[j]));
      std::free(array);
      return Fail(NRT_RESOURCE, absl::StrFormat("%s: out of host memory", function));
    }
  }
  *out = array;
  *count = names.size();
  return NRT_SUCCESS;
}

void FreeNameArray(const char** names, size_t count) {
  if (names == nullptr) return;
  for (size_t i = 0; i < count; ++i) std::free(const_cast<char*>(names[i]));
  std::free(names);
}

NRT_STATUS SetEventTypeCaptured(const char* function, const char* event_type, bool enabled,
                                std::set<std::string>* disabled) {
  if (event_type == nullptr || !profile::IsSysTraceEventType(event_type)) {
    return Fail(NRT_INVALID, absl::StrFormat("%s: unknown event type '%s' (valid: %s)", function,
                                             event_type != nullptr ? event_type : "(null)",
                                             absl::StrJoin(profile::SysTraceEventTypes(), ", ")));
  }
  if (enabled) {
    disabled->erase(event_type);
  } else {
    disabled->insert(event_type);
  }
  return NRT_SUCCESS;
}

void ShutdownProfiling() {
  std::lock_guard<std::mutex> lock(g_mu);
  StopInspectLocked();
  if (g_model_profile != nullptr) {
    Profiler::Detach(g_model_profile->profiler.get());
    if (!g_model_profile->filename.empty()) {
      WriteTrace("nrt_close", *g_model_profile->profiler, g_model_profile->filename);
    }
    g_model_profile.reset();
  }
  if (g_continuous != nullptr) Profiler::Detach(g_continuous.get());
  g_continuous.reset();
  if (g_trace != nullptr) Profiler::Detach(g_trace.get());
  g_trace.reset();
  ShutdownSysTrace();
}

}  // namespace neuron::nrt_api

using namespace neuron::nrt_api;  // NOLINT: the C API is this file's whole job
using neuron::profile::Profiler;
using neuron::profile::ProfilerOptions;

extern "C" {

NRT_STATUS nrt_profile_start(nrt_model_t* model, const char* filename) {
  if (model == nullptr || model->model == nullptr) {
    return Fail(NRT_INVALID_HANDLE, "nrt_profile_start: null or unloaded model");
  }
  RuntimeRef rt("nrt_profile_start");
  if (!rt.ok()) return rt.status();
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_model_profile != nullptr) {
    return Fail(NRT_INVALID,
                absl::StrFormat("nrt_profile_start: model '%s' is already being profiled (call "
                                "nrt_profile_stop first)",
                                g_model_profile->model));
  }
  ProfilerOptions options;
  options.model = neuron::runtime::ProfileKey(*model->model);
  options.write_on_flush = false;
  auto p = std::make_unique<ModelProfile>();
  p->profiler = std::make_shared<Profiler>(CaptureConfig(rt->config()), options);
  p->filename = filename != nullptr ? filename : "";
  p->model = model->model->name();
  Profiler::Attach(p->profiler);
  g_model_profile = std::move(p);
  return NRT_SUCCESS;
}

NRT_STATUS nrt_profile_stop(const char* filename) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_model_profile == nullptr) {
    return Fail(NRT_INVALID, "nrt_profile_stop: no profile was started (nrt_profile_start)");
  }
  const std::string path =
      filename != nullptr && *filename != '\0' ? filename : g_model_profile->filename;
  if (path.empty()) {
    return Fail(NRT_INVALID, "nrt_profile_stop: no file name given here or to nrt_profile_start");
  }
  std::unique_ptr<ModelProfile> p = std::move(g_model_profile);
  Profiler::Detach(p->profiler.get());
  return WriteTrace("nrt_profile_stop", *p->profiler, path);
}

NRT_STATUS nrt_profile_continuous_options_allocate(nrt_profile_continuous_options_t** options) {
  if (options == nullptr) {
    return Fail(NRT_INVALID, "nrt_profile_continuous_options_allocate: null result pointer");
  }
  *options = new nrt_profile_continuous_options;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_profile_continuous_options_free(nrt_profile_continuous_options_t* options) {
  delete options;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_profile_continuous_options_set_output_dir(nrt_profile_continuous_options_t* options,
                                                         const char* output_dir) {
  if (options == nullptr) {
    return Fail(NRT_INVALID, "nrt_profile_continuous_options_set_output_dir: null options");
  }
  if (output_dir == nullptr || *output_dir == '\0') {
    return Fail(NRT_INVALID,
                "nrt_profile_continuous_options_set_output_dir: empty output directory");
  }
  options->output_dir = output_dir;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_profile_continuous_start(nrt_profile_continuous_options_t* options) {
  (void)options;  // only the output directory, which save takes
  RuntimeRef rt("nrt_profile_continuous_start");
  if (!rt.ok()) return rt.status();
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_continuous != nullptr) {
    return Fail(NRT_INVALID,
                "nrt_profile_continuous_start: continuous profiling is already started");
  }
  // As the SDK documents: not while inspect device profiling is on.
  const neuron::config::RuntimeConfig& cfg = rt->config();
  if (Profiler::SessionActive() ||
      (cfg.inspect_enable &&
       cfg.inspect_device_profile != neuron::config::DeviceProfileMode::kDisabled)) {
    return Fail(NRT_INVALID,
                "nrt_profile_continuous_start: an inspect session is active (nrt_inspect_begin or "
                "NEURON_RT_INSPECT_*); stop it first");
  }
  ProfilerOptions o;
  o.latest_per_core = true;
  o.write_on_flush = false;
  g_continuous = std::make_shared<Profiler>(CaptureConfig(cfg), o);
  Profiler::Attach(g_continuous);
  return NRT_SUCCESS;
}

NRT_STATUS nrt_profile_continuous_save(uint32_t vnc, nrt_profile_continuous_options_t* options) {
  const std::string dir = options != nullptr ? options->output_dir : "./output";
  int core = 0;
  {
    RuntimeRef rt("nrt_profile_continuous_save");
    if (!rt.ok()) return rt.status();
    if (NRT_STATUS s = CoreOfVnc("nrt_profile_continuous_save", *rt, vnc, &core);
        s != NRT_SUCCESS) {
      return s;
    }
  }
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_continuous == nullptr) {
    return Fail(NRT_INVALID,
                "nrt_profile_continuous_save: continuous profiling is not started "
                "(nrt_profile_continuous_start)");
  }
  // pid + counter, skipping names already there (an earlier process with
  // the same pid): a save never overwrites a profile.
  std::string path;
  do {
    path = absl::StrFormat("%s/continuous_profile_nc%d_pid%d_%d%s", dir, vnc, getpid(),
                           g_continuous_files.fetch_add(1),
                           neuron::profile::ProfileFileExtension(
                               g_continuous->config().sim_profile_format));
  } while (FileExists(path));
  if (absl::Status s = g_continuous->WriteLatest(core, path); !s.ok()) {
    return Fail(s.code() == absl::StatusCode::kNotFound ? NRT_INVALID : NRT_FAILURE,
                absl::StrFormat("nrt_profile_continuous_save: %s", s.message()));
  }
  NEURON_LOG(NRT, kInfo, "nrt_profile_continuous_save: nc%d profile written to %s", vnc, path);
  return NRT_SUCCESS;
}

NRT_STATUS nrt_profile_continuous_stop(void) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_continuous == nullptr) {
    return Fail(NRT_INVALID, "nrt_profile_continuous_stop: continuous profiling is not started");
  }
  Profiler::Detach(g_continuous.get());
  g_continuous.reset();  // stop does not save
  return NRT_SUCCESS;
}

NRT_STATUS nrt_inspect_begin(void) {
  RuntimeRef rt("nrt_inspect_begin");
  if (!rt.ok()) return rt.status();
  // The variables as nrt_init resolves them, read again now.
  const neuron::config::Resolution r = neuron::config::Resolve(
      neuron::config::ProcessEnv(), neuron::device::PlatformFactsFor(rt->instance()));
  if (!r.ok()) return Fail(r.init_status, absl::StrFormat("nrt_inspect_begin: %s", r.init_error));
  neuron::config::RuntimeConfig c = rt->config();
  const neuron::config::RuntimeConfig& e = r.config;
  // Calling nrt_inspect_begin is the master switch NEURON_RT_INSPECT_ENABLE is at init.
  c.inspect_enable = true;
  c.inspect_cpu_util = e.inspect_cpu_util;
  c.inspect_device_profile = e.inspect_device_profile;
  c.inspect_num_warmup = e.inspect_num_warmup;
  c.inspect_event_filter_nc = e.inspect_event_filter_nc;
  c.inspect_event_types = e.inspect_event_types;
  c.inspect_host_memory = e.inspect_host_memory;
  c.inspect_on_fail = e.inspect_on_fail;
  c.inspect_output_dir = e.inspect_output_dir;
  c.inspect_precache_enable = e.inspect_precache_enable;
  c.inspect_system_profile = e.inspect_system_profile;
  c.inspect_sys_trace_max_events_per_nc = e.inspect_sys_trace_max_events_per_nc;
  std::copy(std::begin(e.profile_buf_mib), std::end(e.profile_buf_mib), c.profile_buf_mib);
  if (!Profiler::Enabled(c)) {
    return Fail(NRT_INVALID,
                "nrt_inspect_begin: NEURON_RT_INSPECT_SYSTEM_PROFILE, _DEVICE_PROFILE, _CPU_UTIL "
                "and _HOST_MEMORY leave nothing to capture");
  }
  std::lock_guard<std::mutex> lock(g_mu);
  return BeginInspectLocked("nrt_inspect_begin", c, static_cast<int>(rt->core_map().count()));
}

NRT_STATUS nrt_inspect_stop(void) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!StopInspectLocked()) {
    return Fail(NRT_INVALID, "nrt_inspect_stop: no inspect session is active (nrt_inspect_begin)");
  }
  return NRT_SUCCESS;
}

NRT_STATUS nrt_inspect_config_allocate(nrt_inspect_config_t** options) {
  if (options == nullptr)
    return Fail(NRT_INVALID, "nrt_inspect_config_allocate: null result pointer");
  *options = new nrt_inspect_config;
  nrt_inspect_config_set_defaults(*options);
  return NRT_SUCCESS;
}

NRT_STATUS nrt_inspect_config_set_defaults(nrt_inspect_config_t* options) {
  if (options == nullptr) return Fail(NRT_INVALID, "nrt_inspect_config_set_defaults: null options");
  *options = nrt_inspect_config();
  options->activities.insert(std::begin(kActivityTypes), std::end(kActivityTypes));
  return NRT_SUCCESS;
}

NRT_STATUS nrt_inspect_config_free(nrt_inspect_config_t* options) {
  delete options;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_inspect_config_set_session_id(nrt_inspect_config_t* options, int session_id) {
  if (options == nullptr)
    return Fail(NRT_INVALID, "nrt_inspect_config_set_session_id: null options");
  options->session_id = session_id;  // kept for the SDK's API; files are named by pid
  return NRT_SUCCESS;
}

NRT_STATUS nrt_inspect_config_set_output_dir(nrt_inspect_config_t* options,
                                             const char* output_dir) {
  if (options == nullptr)
    return Fail(NRT_INVALID, "nrt_inspect_config_set_output_dir: null options");
  if (output_dir == nullptr || *output_dir == '\0') {
    return Fail(NRT_INVALID, "nrt_inspect_config_set_output_dir: empty output directory");
  }
  options->output_dir = output_dir;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_inspect_config_set_sys_trace_max_events_per_nc(
    nrt_inspect_config_t* options, uint64_t sys_trace_max_events_per_nc) {
  if (options == nullptr) {
    return Fail(NRT_INVALID, "nrt_inspect_config_set_sys_trace_max_events_per_nc: null options");
  }
  options->sys_trace_max_events_per_nc = sys_trace_max_events_per_nc;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_inspect_config_set_capture_enabled_for_nc(nrt_inspect_config_t* options,
                                                         uint32_t nc_idx, bool enabled) {
  if (options == nullptr) {
    return Fail(NRT_INVALID, "nrt_inspect_config_set_capture_enabled_for_nc: null options");
  }
  if (enabled) {
    options->disabled_nc.erase(nc_idx);
  } else {
    options->disabled_nc.insert(nc_idx);
  }
  return NRT_SUCCESS;
}

NRT_STATUS nrt_inspect_config_set_capture_enabled_for_event_type_string(
    nrt_inspect_config_t* options, const char* event_type, bool enabled) {
  const char* function = "nrt_inspect_config_set_capture_enabled_for_event_type_string";
  if (options == nullptr) return Fail(NRT_INVALID, absl::StrFormat("%s: null options", function));
  return SetEventTypeCaptured(function, event_type, enabled, &options->disabled_event_types);
}

NRT_STATUS nrt_inspect_config_set_enable_inspect(nrt_inspect_config_t* options,
                                                 bool enable_inspect) {
  if (options == nullptr)
    return Fail(NRT_INVALID, "nrt_inspect_config_set_enable_inspect: null options");
  options->enable_inspect = enable_inspect;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_inspect_config_set_enable_inspect_on_fail(nrt_inspect_config_t* options,
                                                         bool enable_inspect_on_fail) {
  if (options == nullptr) {
    return Fail(NRT_INVALID, "nrt_inspect_config_set_enable_inspect_on_fail: null options");
  }
  options->enable_inspect_on_fail = enable_inspect_on_fail;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_inspect_begin_with_options(nrt_inspect_config_t* options) {
  RuntimeRef rt("nrt_inspect_begin_with_options");
  if (!rt.ok()) return rt.status();
  nrt_inspect_config defaults;
  nrt_inspect_config_set_defaults(&defaults);
  const nrt_inspect_config& o = options != nullptr ? *options : defaults;
  const int core_count = static_cast<int>(rt->core_map().count());
  // The options replace every NEURON_RT_INSPECT_* setting; NEURON_RT_PROFILE_BUF_* stay.
  neuron::config::RuntimeConfig c = rt->config();
  using neuron::config::DeviceProfileMode;
  auto on = [&](const char* activity) { return o.activities.count(activity) > 0; };
  c.inspect_enable = o.enable_inspect || o.enable_inspect_on_fail;
  c.inspect_num_warmup = 0;
  c.inspect_precache_enable = false;
  c.inspect_on_fail = o.enable_inspect_on_fail;
  if (o.enable_inspect_on_fail) {
    // As NEURON_RT_INSPECT_ON_FAIL: device profiles of failures only.
    c.inspect_device_profile = DeviceProfileMode::kModel;
    c.inspect_system_profile = c.inspect_cpu_util = c.inspect_host_memory = false;
  } else if (o.enable_inspect) {
    c.inspect_device_profile =
        on("device_profile") ? DeviceProfileMode::kModel : DeviceProfileMode::kDisabled;
    c.inspect_system_profile = on("system_profile");
    c.inspect_cpu_util = on("cpu_util");
    c.inspect_host_memory = on("host_memory");
  } else {
    // Neither inspect nor inspect-on-fail: a session that captures nothing.
    c.inspect_device_profile = DeviceProfileMode::kDisabled;
    c.inspect_system_profile = c.inspect_cpu_util = c.inspect_host_memory = false;
  }
  c.inspect_output_dir = o.output_dir;
  c.inspect_sys_trace_max_events_per_nc = o.sys_trace_max_events_per_nc;
  c.inspect_event_filter_nc.clear();
  if (!o.disabled_nc.empty()) {
    for (int nc = 0; nc < core_count; ++nc)
      if (!o.disabled_nc.count(static_cast<uint32_t>(nc))) c.inspect_event_filter_nc.push_back(nc);
    if (c.inspect_event_filter_nc.empty()) c.inspect_event_filter_nc.push_back(-1);  // none
  }
  c.inspect_event_types.clear();
  for (const std::string& t : neuron::config::AllInspectEventNames())
    if (!o.disabled_event_types.count(t)) c.inspect_event_types.push_back(t);
  std::lock_guard<std::mutex> lock(g_mu);
  return BeginInspectLocked("nrt_inspect_begin_with_options", c, core_count);
}

NRT_STATUS nrt_inspect_config_get_all_activity_types(const char*** activity_types, size_t* count) {
  return AllocateNameArray(
      "nrt_inspect_config_get_all_activity_types",
      std::vector<std::string>(std::begin(kActivityTypes), std::end(kActivityTypes)),
      activity_types, count);
}

NRT_STATUS nrt_inspect_config_get_enabled_activity_types(nrt_inspect_config_t* options,
                                                         const char*** activity_types,
                                                         size_t* count) {
  if (options == nullptr) {
    return Fail(NRT_INVALID, "nrt_inspect_config_get_enabled_activity_types: null options");
  }
  std::vector<std::string> names;
  for (const char* a : kActivityTypes)
    if (options->activities.count(a)) names.push_back(a);
  return AllocateNameArray("nrt_inspect_config_get_enabled_activity_types", names, activity_types,
                           count);
}

void nrt_inspect_config_free_activity_types(const char** activity_types, size_t count) {
  FreeNameArray(activity_types, count);
}

NRT_STATUS nrt_inspect_config_set_activity(nrt_inspect_config_t* options, const char* activity_type,
                                           bool enabled) {
  if (options == nullptr) return Fail(NRT_INVALID, "nrt_inspect_config_set_activity: null options");
  const std::string type = activity_type != nullptr ? activity_type : "";
  std::vector<std::string> targets;
  if (type == "all") {
    targets.assign(std::begin(kActivityTypes), std::end(kActivityTypes));
  } else if (std::find(std::begin(kActivityTypes), std::end(kActivityTypes), type) !=
             std::end(kActivityTypes)) {
    targets.push_back(type);
  } else {
    return Fail(
        NRT_INVALID,
        absl::StrFormat("nrt_inspect_config_set_activity: unknown activity type '%s' "
                        "(valid: system_profile, device_profile, host_memory, cpu_util, all)",
                        type));
  }
  for (const std::string& t : targets) {
    if (enabled) {
      options->activities.insert(t);
    } else {
      options->activities.erase(t);
    }
  }
  return NRT_SUCCESS;
}

NRT_STATUS nrt_trace_start(bool trace_mem) {
  RuntimeRef rt("nrt_trace_start");
  if (!rt.ok()) return rt.status();
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_trace != nullptr) {
    return Fail(NRT_INVALID,
                "nrt_trace_start: a trace is already being recorded (call nrt_trace_stop)");
  }
  ProfilerOptions o;
  o.memory = trace_mem;
  o.write_on_flush = false;
  g_trace = std::make_shared<Profiler>(CaptureConfig(rt->config()), o);
  Profiler::Attach(g_trace);
  return NRT_SUCCESS;
}

NRT_STATUS nrt_trace_stop(const char* filename) {
  if (filename == nullptr || *filename == '\0') {
    return Fail(NRT_INVALID, "nrt_trace_stop: null or empty file name");
  }
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_trace == nullptr) {
    return Fail(NRT_INVALID, "nrt_trace_stop: no trace was started (nrt_trace_start)");
  }
  std::shared_ptr<Profiler> trace = std::move(g_trace);
  Profiler::Detach(trace.get());
  return WriteTrace("nrt_trace_stop", *trace, filename);
}

}  // extern "C"
