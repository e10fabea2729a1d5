// Runtime configuration: every NEURON_RT_* / NEURON_* variable of the Neuron
// Runtime environment-variable reference, parsed, validated and resolved
// with the interactions the reference states. Read once at runtime init and
// handed down; neuron-ls --env prints the resolution.
//
// CONTRACT (shared with lib/device, tools/neuron-ls, lib/runtime): the names
// declared here are used by other parts of the tree; extend, don't rename.
#ifndef NEURON_LIB_CONFIG_CONFIG_H_
#define NEURON_LIB_CONFIG_CONFIG_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "neuron/nrt_status.h"

namespace neuron::config {

// Where an effective value came from.
enum class Source {
  kDefault,  // the reference's default (possibly arch-dependent)
  kEnv,      // the process environment, as given
  kDerived,  // computed from other variables (e.g. forced by an interaction)
};
const char* SourceName(Source source);  // "default", "env", "derived"

enum class Severity { kInfo, kWarning, kError };
const char* SeverityName(Severity severity);  // "info", "warning", "error"

// A message produced while resolving, e.g. a clamp, a deprecation, a
// malformed value kept at its default.
struct Diagnostic {
  Severity severity = Severity::kWarning;
  std::string variable;  // the variable the message is about
  std::string message;   // one line, names the variable and the value
};

// Facts about the platform that defaults and validation depend on
// (provided by lib/device from the instance catalog).
struct PlatformFacts {
  std::string arch = "trn1";           // trn1, trn1n, trn2, trn3, inf2
  std::string instance_type;           // e.g. "trn1.2xlarge"
  int devices = 1;                     // Neuron devices on the instance
  int physical_cores_per_device = 2;   // NeuronCores per device
  int host_cpus = 2;                   // CPUs of the host (affinity lists)
  // What the (simulated) driver offers; both true for the simulator's
  // driver, false only to model an older real driver.
  bool driver_has_dmabuf_v2 = true;          // else P2P is forced on
  bool driver_has_h2d_dma_notifications = true;  // else H2D DMA profiling off
  // Family helpers.
  bool IsTrn2Family() const { return arch == "trn2" || arch == "trn3"; }
  // NeuronCore-v2 parts (trn1, trn1n, inf2): LNC 1 by default.
  bool IsTrn1Family() const {
    return arch == "trn1" || arch == "trn1n" || arch == "inf2";
  }
};

// The variable types of the reference.
enum class ValueType {
  kBool,
  kUnsigned,      // unsigned integer (seconds, counts, MiB, ...)
  kSigned,        // signed integer
  kByteCount,     // bytes, with optional unit
  kRangeList,     // 0-3 / 0,2,4
  kEnum,          // one of a fixed set of words
  kString,        // free text: paths, host:port, S3 URIs, token lists
};

// One row of the table: every variable of the reference has one.
struct VariableSpec {
  std::string name;         // e.g. "NEURON_RT_EXEC_TIMEOUT"
  ValueType type;
  std::string default_text; // the default as printed ("30", "unset", ...)
  std::string section;      // Functional, Performance tuning, Observability,
                            // Profiling, Debugging, Deprecated
  std::string subsystem;    // e.g. "DMA & execution"
  std::string description;  // one line
  bool deprecated = false;
};

// Every variable, in the reference's order (per-submodule log variables
// expanded, one row per submodule).
const std::vector<VariableSpec>& AllVariables();
const VariableSpec* FindVariable(std::string_view name);
const char* ValueTypeName(ValueType type);  // "boolean", "range list", ...

enum class LogLevel { kError, kWarn, kInfo, kDebug, kTrace, kQuiet };
enum class NumericalVerbosity { kNone, kCritical, kDebug, kVerbose };
enum class DeviceProfileMode { kDisabled, kModel, kSession };
enum class HbmInit { kOff, kFp32Nan, kBf16Nan, kPattern };
// The file format of profiles (NEURON_SIM_PROFILE_FORMAT).
enum class ProfileFormat { kJson, kPftrace };

// Log destinations for one submodule.
struct LogSink {
  LogLevel level = LogLevel::kWarn;
  bool console = true;
  bool syslog = true;
};

// Submodules with their own NEURON_RT_LOG_LEVEL_<X> / _LOCATION_<X>.
inline constexpr const char* kLogSubmodules[] = {
    "ENC", "ENCD", "HAL", "NDBG", "NEFF", "NLOG",
    "NMGR", "NRT", "RUST", "TDRV", "TEST", "UTIL"};
inline constexpr int kNumLogSubmodules = 12;

// Typed effective configuration.
struct RuntimeConfig {
  // Core allocation & topology.
  int logical_nc_config = 1;            // LNC size
  std::vector<int> visible_cores;       // logical core ids, sorted
  int num_cores = 0;                    // not read directly: folded into visible_cores (deprecated NEURON_RT_NUM_CORES, 0 = all)
  // Networking & barriers, collectives.
  std::string root_comm_id;             // "" when unset
  uint64_t exec_timeout_s = 30;
  uint64_t cc_chunk_size = 2u << 20;
  uint64_t cc_channel_buffer_n = 8;
  uint32_t cc_stream_split_w0 = 3, cc_stream_split_w1 = 1;
  bool enable_rg_validation = false;
  uint64_t async_sendrecv_bootstrap_port = 0;
  bool async_sendrecv_experimental = false;
  bool enable_p2p = false;              // false: dma-buf registration
  bool disable_execution_barrier = false;
  bool enable_hw_execution_barrier = false;
  std::vector<int> low_latency_tasks_cpu_affinity;  // empty when unset
  bool one_thread_per_core = false;
  uint64_t ranks_per_network_proxy = 1;
  bool register_hbm_mr = true;
  bool map_hbm = true;
  // Loading.
  uint64_t allow_legacy_neff = 0;
  bool validate_hash = false;
  bool disable_debug_info = false;
  // DMA & execution.
  uint64_t dma_packetization_size = 4096;
  uint64_t xu_max_queued_requests = 8;
  // Memory & scratchpad.
  bool contiguous_scratchpad = true;
  uint64_t scratchpad_page_size_mib = 512;  // as configured
  // The page size actually used: contiguous scratchpad forces 64 MiB pages.
  uint64_t ScratchpadPageMibInEffect() const {
    return contiguous_scratchpad ? 64 : scratchpad_page_size_mib;
  }
  HbmInit hbm_init = HbmInit::kPattern;
  uint32_t hbm_init_pattern = 0;
  // Numerics.
  bool fail_on_nan = false;
  NumericalVerbosity numerical_errors_verbosity = NumericalVerbosity::kNone;
  bool stochastic_rounding_en = false;
  uint64_t stochastic_rounding_seed = 0;
  // Logging.
  LogSink log[kNumLogSubmodules];
  // Observability / debugging.
  uint64_t gpsimd_stdout_queue_size = 0;
  bool dbg_verbose_dev_mem = false;
  uint64_t debug_memlog_max_size = 1u << 20;
  bool enable_device_memory_oom_log = true;
  bool enable_memory_metrics = true;
  uint64_t min_mem_error_interval_s = 3600;
  std::string oom_dump_directory = "/tmp";
  uint64_t debug_stream_buffer_size = 262144;
  int64_t dbg_dump_inputs_on_err = 0;
  std::string dbg_input_dump_directory = "/tmp/neuron-input-dump";
  std::string local_core_dump_directory = "/tmp/neuron-core-dump/dt-%d-cid-%c";
  std::optional<std::string> s3_core_dump_prefix;
  // False only when both dump locations are explicitly set to "".
  bool core_dump_enabled = true;
  // Profiling.
  bool inspect_enable = false;
  bool inspect_cpu_util = false;
  DeviceProfileMode inspect_device_profile = DeviceProfileMode::kDisabled;
  uint64_t inspect_num_warmup = 0;
  std::vector<int> inspect_event_filter_nc;     // empty = all visible
  std::vector<std::string> inspect_event_types; // resolved event names
  bool inspect_host_memory = false;
  bool inspect_on_fail = false;
  std::string inspect_output_dir;               // "" = cwd
  bool inspect_precache_enable = false;
  bool inspect_system_profile = true;
  uint64_t inspect_sys_trace_max_events_per_nc = 0;
  uint64_t profile_buf_mib[8] = {};  // CC_CORE_EVENT, CC_CORE_INSTRUCTION,
                                     // DMA, EVENT, H2D_DMA, INSTRUCTION,
                                     // THROTTLE, (unused)
  bool enable_dge_notifications = false;
  // Simulator.
  std::string sim_instance_type = "trn1.2xlarge";  // not read directly: lib/device reads the variable before resolution
  std::string sim_root;  // not read directly: lib/device reads the variable before resolution ("" = its default)
  ProfileFormat sim_profile_format = ProfileFormat::kJson;
};

// Result of resolving the environment.
struct Resolution {
  RuntimeConfig config;
  // Every variable of AllVariables(), in that order, with its effective
  // value as a string ("" for unset) and where it came from.
  struct Value {
    std::string name;
    std::string value;
    Source source = Source::kDefault;
  };
  std::vector<Value> values;
  std::vector<Diagnostic> diagnostics;
  // NRT_SUCCESS unless the configuration must fail nrt_init(); then
  // init_error is one line naming the variable, the value and the rule.
  NRT_STATUS init_status = NRT_SUCCESS;
  std::string init_error;
  bool ok() const { return init_status == NRT_SUCCESS; }
};

// Looks a variable up; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;

// The process environment (getenv).
EnvLookup ProcessEnv();

// Resolves every variable against the platform.
Resolution Resolve(const EnvLookup& env, const PlatformFacts& platform);

}  // namespace neuron::config

#endif  // NEURON_LIB_CONFIG_CONFIG_H_
