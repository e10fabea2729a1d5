// Runtime profile capture, driven by the NEURON_RT_INSPECT_* and
// NEURON_RT_PROFILE_BUF_* variables (already resolved in RuntimeConfig):
//
//  - device profile (INSPECT_DEVICE_PROFILE): per-instruction spans named
//    after their HLO instructions on per-core tracks (compute, dma,
//    collectives, host<->device transfers), args bytes and flops. `model`
//    mode writes one trace per unique NEFF (its first execution after
//    NUM_WARMUP); `session` mode one trace for the whole session.
//  - DMA (lib/profile/dma.h): host<->device spans carry the queue and the
//    packets of DBG_DMA_PACKETIZATION_SIZE; session profiles also get the
//    copies outside executions (tensor reads and writes, weights at load).
//    With ENABLE_DGE_NOTIFICATIONS, DGE instructions (gather, scatter,
//    dynamic slices) add a notification on the core's "dge" track.
//  - metadata (names, args) is built once per NEFF; INSPECT_PRECACHE_ENABLE
//    builds it on the warmup executions so the profiled one finds it
//    cached (otherData.metadata says which, with its cache hits).
//  - ON_FAIL: every execution is captured in memory; a trace is written
//    only for a failing one (the first per NEFF).
//  - system profile (INSPECT_SYSTEM_PROFILE): the API and runtime timeline
//    (nrt_execute, the run, tensors) per host thread, with CPU
//    (INSPECT_CPU_UTIL) and host-memory (INSPECT_HOST_MEMORY) counters.
//  - event filters by core and type; bounded events: each category's
//    PROFILE_BUF_*_MB holds MiB / kNotificationBytes notifications per
//    execution, SYS_TRACE_MAX_EVENTS_PER_NC bounds system events per core;
//    what does not fit is dropped and reported as truncation (a warning
//    and otherData.truncated in the trace).
//
// Files (open in ui.perfetto.dev), in INSPECT_OUTPUT_DIR (default: the
// current directory), ending in .json (Trace Event JSON, also for
// chrome://tracing) or .pftrace (Perfetto's protobuf trace) as
// NEURON_SIM_PROFILE_FORMAT says:
//   device_profile_model_<model>_<uuid8>_pid<pid>.json
//   device_profile_session_pid<pid>.json
//   system_profile_pid<pid>.json
#ifndef NEURON_LIB_PROFILE_PROFILER_H_
#define NEURON_LIB_PROFILE_PROFILER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/config/config.h"
#include "lib/hlo/module.h"
#include "lib/kernels/executable.h"
#include "lib/profile/dma.h"
#include "lib/profile/host_sampler.h"
#include "lib/profile/instruction_costs.h"
#include "lib/profile/sys_trace.h"
#include "lib/profile/trace.h"

namespace neuron::profile {

// The size of one device notification record: buffers hold MiB / this.
inline constexpr uint64_t kNotificationBytes = 64;

// Notification buffers, in the order of RuntimeConfig::profile_buf_mib.
enum class Buffer { kCcCoreEvent, kCcCoreInstruction, kDma, kEvent, kH2dDma, kInstruction,
                    kThrottle };
const char* BufferVariable(Buffer buffer);  // "NEURON_RT_PROFILE_BUF_DMA_MB"

struct ExecutionInfo {
  std::string model;
  std::string neff_uuid;  // what makes a NEFF unique
  int device = 0;
  int core = 0;           // logical core
  const hlo::Module* module = nullptr;
  std::vector<std::pair<std::string, uint64_t>> inputs, outputs;  // name, bytes
  const void* model_key = nullptr;  // the loaded model (per-model profiles)
};

// A device allocation or free (nrt_trace_start(trace_mem)).
struct MemoryEvent {
  int device = 0;
  int core = 0;
  std::string name;
  uint64_t bytes = 0;
  bool alloc = true;
  int64_t at_ns = 0;
};

// Profilers started at run time (the C API), beside the environment's:
// what they keep and when they write.
struct ProfilerOptions {
  const void* model = nullptr;   // only this model's executions (nullptr: all)
  bool latest_per_core = false;  // keep only each core's latest execution
  bool memory = false;           // device allocations too
  bool write_on_flush = true;    // false: only WriteDeviceTrace/WriteLatest write
};

class Capture;

class Profiler {
 public:
  explicit Profiler(const config::RuntimeConfig& config, ProfilerOptions options = {});
  ~Profiler();  // writes the session traces
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // Whether the configuration captures anything at all.
  static bool Enabled(const config::RuntimeConfig& config);

  // One profiler per configuration in the process (nullptr when profiling
  // is off). A configuration that differs from the previous one's replaces
  // it (after writing its session traces).
  static Profiler* ForConfig(const config::RuntimeConfig& config);
  // Writes every profiler's session traces (at unload and exit).
  static void FlushAll();

  // An inspect session started at run time (nrt_inspect_begin*): while it
  // is set, executions go to it instead of the environment's profiler.
  // EndSession hands it back (nullptr when none) for the caller to flush.
  static absl::Status BeginSession(std::shared_ptr<Profiler> session);
  static std::shared_ptr<Profiler> EndSession();
  static bool SessionActive();
  // Profilers that see executions besides the session or environment one
  // (nrt_profile_start, continuous profiling, nrt_trace_start).
  static void Attach(std::shared_ptr<Profiler> profiler);
  static void Detach(const Profiler* profiler);
  // Every profiler an execution under `config` goes to.
  static std::vector<std::shared_ptr<Profiler>> ForExecution(const config::RuntimeConfig& config);
  // Gives a device allocation to the attached profilers that want them.
  static void RecordMemoryAll(const MemoryEvent& event);
  // Whether a copy outside an execution could be recorded (cheap: no lock).
  static bool DmaWanted(const config::RuntimeConfig& config);
  // Gives such a copy to every profiler with a session device trace.
  static void RecordDmaAll(const config::RuntimeConfig& config, const DmaTransfer& transfer);

  // Starts an execution; nullptr when nothing of it is captured.
  std::unique_ptr<Capture> Begin(const ExecutionInfo& info);
  // Ends it. `failed`: the execution failed (ON_FAIL writes only then).
  // Returns the files written now.
  std::vector<std::string> End(std::unique_ptr<Capture> capture, bool failed,
                               std::string_view status_text);
  // Writes the session traces that changed; returns the files written.
  std::vector<std::string> Flush();

  // The device trace of every execution captured so far (session mode),
  // written whole to `path` (temporary file + rename).
  absl::Status WriteDeviceTrace(const std::string& path);
  // The latest execution of `core` (latest_per_core); NotFound when none.
  absl::Status WriteLatest(int core, const std::string& path);
  // System-trace events (loads, transfers, ...) for the system profile.
  void AddSystemEvents(const std::vector<SysEvent>& events);
  void RecordMemory(const MemoryEvent& event);
  void RecordDma(const DmaTransfer& transfer);

  const std::string& output_dir() const { return dir_; }
  const config::RuntimeConfig& config() const { return config_; }
  const ProfilerOptions& options() const { return options_; }

 private:
  struct NeffState {
    uint64_t executions = 0;
    bool written = false;
    std::shared_ptr<const CostTable> costs;
  };
  // The session device trace, created with `core`'s tracks named. mu_ held.
  Trace& SessionTraceFor(int device, int core);
  bool CoreSelected(int core) const;
  bool TypeSelected(std::string_view type) const;
  std::string PathFor(std::string_view file) const;
  // Returns the spans whose metadata came from the cache.
  uint64_t AddDevice(Trace& trace, Capture& c, bool name_tracks);
  void AddSystem(Trace& trace, Capture& c);

  void NameDeviceTracks(Trace& trace, int device, int core);

  const config::RuntimeConfig config_;
  const ProfilerOptions options_;
  const std::string dir_;
  std::mutex mu_;
  std::map<std::string, NeffState> neffs_;
  std::unique_ptr<Trace> session_device_, system_;
  bool session_dirty_ = false, system_dirty_ = false;
  std::map<int, bool> session_named_cores_;
  uint64_t session_metadata_hits_ = 0;
  std::map<int, std::unique_ptr<Trace>> latest_;  // latest_per_core
  std::map<int, uint64_t> memory_in_use_;         // per core
  std::map<int, uint64_t> system_events_per_core_;
  uint64_t system_dropped_ = 0, system_dropped_reported_ = 0;
};

// One execution being captured: the step observer the executor calls.
class Capture : public kernels::StepObserver {
 public:
  void StepBegin(const std::string& instruction) override;
  void StepEnd(const std::string& instruction) override;
  // The executor's run, inside the API call.
  void RunBegin();
  void RunEnd();

 private:
  friend class Profiler;
  struct Span {
    const std::string* name;
    const InstructionCost* cost;
    int64_t begin_ns, end_ns;
    Buffer buffer;
  };
  bool Admit(Buffer buffer);

  ExecutionInfo info_;
  bool device_ = false, system_ = false, on_fail_ = false;
  std::shared_ptr<const CostTable> costs_;
  bool metadata_cached_ = false;    // costs_ was built before this execution
  int64_t metadata_build_ns_ = 0;   // building it, inside this execution
  uint64_t capacity_[7] = {};
  uint64_t used_[7] = {}, dropped_[7] = {};
  bool want_compute_ = true, want_dma_ = true, want_cc_ = true, want_cc_pending_ = true;
  // Collectives issued (cc_pending events: name, time), kept in the
  // CC_CORE_EVENT buffer whether or not their span is.
  std::vector<std::pair<const std::string*, int64_t>> cc_issued_;
  int64_t api_begin_ = 0, api_end_ = 0, run_begin_ = 0, run_end_ = 0;
  uint64_t thread_id_ = 0;
  std::vector<Span> spans_;
  std::vector<int64_t> open_;  // indices into spans_, -1 for a dropped span
  HostSample host_begin_, host_end_;
};

// Nanoseconds since the process's profiling epoch (steady clock).
int64_t NowNs();

}  // namespace neuron::profile

#endif  // NEURON_LIB_PROFILE_PROFILER_H_
