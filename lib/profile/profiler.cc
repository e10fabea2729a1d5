#include "lib/profile/profiler.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/log/log.h"

namespace neuron::profile {
namespace {

// Device tracks live in their own "process" per Neuron device, far from
// real pids; each core has one track per kind of work.
constexpr int kDevicePidBase = 1 << 30;
enum Track {
  kTrackExec = 0, kTrackCompute = 1, kTrackDma = 2, kTrackCc = 3, kTrackH2d = 4, kTrackMemory = 5,
  kTrackDge = 6
};
constexpr int kTracksPerCore = 8;
const char* const kTrackNames[] = {"exec", "compute", "dma", "collectives", "host<->device",
                                   "memory", "dge"};

int DeviceTid(int core, Track track) { return core * kTracksPerCore + track; }

std::string Sanitize(std::string_view name) {
  std::string out;
  for (char ch : name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.';
    out.push_back(ok ? ch : '_');
  }
  if (out.empty()) out = "model";
  return out.substr(0, 96);
}

Buffer BufferOf(std::string_view event) {
  if (event == "dma") return Buffer::kDma;
  if (event == "cc_running") return Buffer::kCcCoreInstruction;
  return Buffer::kInstruction;
}

Track TrackOf(Buffer buffer) {
  if (buffer == Buffer::kDma) return kTrackDma;
  if (buffer == Buffer::kCcCoreInstruction) return kTrackCc;
  return kTrackCompute;
}

std::string Fingerprint(const config::RuntimeConfig& c) {
  return absl::StrCat(c.inspect_enable, ":", c.inspect_cpu_util, ":",
                      static_cast<int>(c.inspect_device_profile), ":", c.inspect_num_warmup, ":",
                      absl::StrJoin(c.inspect_event_filter_nc, ","), ":",
                      absl::StrJoin(c.inspect_event_types, ","), ":", c.inspect_host_memory, ":",
                      c.inspect_on_fail, ":", c.inspect_output_dir, ":", c.inspect_system_profile,
                      ":", c.inspect_sys_trace_max_events_per_nc, ":",
                      absl::StrJoin(c.profile_buf_mib, ","), ":", c.dma_packetization_size, ":",
                      c.enable_dge_notifications, ":", c.inspect_precache_enable, ":",
                      static_cast<int>(c.sim_profile_format));
}

std::mutex& RegistryMutex() {
  static std::mutex mu;
  return mu;
}
std::unique_ptr<Profiler>& Current() {
  static auto* current = new std::unique_ptr<Profiler>();
  return *current;
}
std::string& CurrentFingerprint() {
  static auto* fp = new std::string();
  return *fp;
}

// Run-time sessions and attached profilers (the C API's).
std::mutex& TapMutex() {
  static std::mutex mu;
  return mu;
}
std::shared_ptr<Profiler>& Session() {
  static auto* session = new std::shared_ptr<Profiler>();
  return *session;
}
std::vector<std::shared_ptr<Profiler>>& Attached() {
  static auto* attached = new std::vector<std::shared_ptr<Profiler>>();
  return *attached;
}
// Sessions plus attached profilers, readable without TapMutex.
std::atomic<int> g_taps{0};

}  // namespace

const char* BufferVariable(Buffer buffer) {
  switch (buffer) {
    case Buffer::kCcCoreEvent: return "NEURON_RT_PROFILE_BUF_CC_CORE_EVENT_MB";
    case Buffer::kCcCoreInstruction: return "NEURON_RT_PROFILE_BUF_CC_CORE_INSTRUCTION_MB";
    case Buffer::kDma: return "NEURON_RT_PROFILE_BUF_DMA_MB";
    case Buffer::kEvent: return "NEURON_RT_PROFILE_BUF_EVENT_MB";
    case Buffer::kH2dDma: return "NEURON_RT_PROFILE_BUF_H2D_DMA_MB";
    case Buffer::kInstruction: return "NEURON_RT_PROFILE_BUF_INSTRUCTION_MB";
    case Buffer::kThrottle: return "NEURON_RT_PROFILE_BUF_THROTTLE_MB";
  }
  return "";
}

int64_t NowNs() {
  static const auto epoch = std::chrono::steady_clock::now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              epoch)
      .count();
}

// ---- Capture ----

bool Capture::Admit(Buffer buffer) {
  const int b = static_cast<int>(buffer);
  if (used_[b] < capacity_[b]) {
    ++used_[b];
    return true;
  }
  ++dropped_[b];
  return false;
}

void Capture::StepBegin(const std::string& instruction) {
  if (!device_) return;
  const InstructionCost* cost = nullptr;
  if (costs_ != nullptr) {
    auto it = costs_->find(instruction);
    if (it != costs_->end()) cost = &it->second;
  }
  const Buffer buffer = BufferOf(cost ? cost->event : "compute");
  if (buffer == Buffer::kCcCoreInstruction && want_cc_pending_ && Admit(Buffer::kCcCoreEvent)) {
    cc_issued_.emplace_back(&instruction, NowNs());
  }
  const bool wanted = buffer == Buffer::kDma ? want_dma_
                      : buffer == Buffer::kCcCoreInstruction ? want_cc_ : want_compute_;
  if (!wanted || !Admit(buffer)) {
    open_.push_back(-1);
    return;
  }
  open_.push_back(static_cast<int64_t>(spans_.size()));
  spans_.push_back({&instruction, cost, NowNs(), 0, buffer});
}

void Capture::StepEnd(const std::string&) {
  if (!device_ || open_.empty()) return;
  const int64_t i = open_.back();
  open_.pop_back();
  if (i >= 0) spans_[i].end_ns = NowNs();
}

void Capture::RunBegin() { run_begin_ = NowNs(); }
void Capture::RunEnd() {
  run_end_ = NowNs();
  // Spans left open by a failure end where the run ended.
  for (int64_t i : open_)
    if (i >= 0 && spans_[i].end_ns == 0) spans_[i].end_ns = run_end_;
  open_.clear();
}

// ---- Profiler ----

bool Profiler::Enabled(const config::RuntimeConfig& c) {
  if (!c.inspect_enable) return false;
  return c.inspect_device_profile != config::DeviceProfileMode::kDisabled ||
         c.inspect_system_profile || c.inspect_cpu_util || c.inspect_host_memory;
}

Profiler* Profiler::ForConfig(const config::RuntimeConfig& config) {
  if (!Enabled(config)) return nullptr;
  std::lock_guard<std::mutex> lock(RegistryMutex());
  const std::string fp = Fingerprint(config);
  std::unique_ptr<Profiler>& current = Current();
  if (current == nullptr || CurrentFingerprint() != fp) {
    static const bool registered = [] {
      std::atexit([] { FlushAll(); });
      return true;
    }();
    (void)registered;
    current = std::make_unique<Profiler>(config);
    CurrentFingerprint() = fp;
  }
  return current.get();
}

void Profiler::FlushAll() {
  std::shared_ptr<Profiler> session;
  {
    std::lock_guard<std::mutex> lock(TapMutex());
    session = Session();
  }
  if (session != nullptr) session->Flush();
  std::lock_guard<std::mutex> lock(RegistryMutex());
  if (Current() != nullptr) Current()->Flush();
}

absl::Status Profiler::BeginSession(std::shared_ptr<Profiler> session) {
  std::lock_guard<std::mutex> lock(TapMutex());
  if (Session() != nullptr) return absl::AlreadyExistsError("an inspect session is already active");
  Session() = std::move(session);
  ++g_taps;
  return absl::OkStatus();
}

std::shared_ptr<Profiler> Profiler::EndSession() {
  std::lock_guard<std::mutex> lock(TapMutex());
  if (Session() != nullptr) --g_taps;
  return std::move(Session());
}

bool Profiler::SessionActive() {
  std::lock_guard<std::mutex> lock(TapMutex());
  return Session() != nullptr;
}

void Profiler::Attach(std::shared_ptr<Profiler> profiler) {
  std::lock_guard<std::mutex> lock(TapMutex());
  Attached().push_back(std::move(profiler));
  ++g_taps;
}

void Profiler::Detach(const Profiler* profiler) {
  std::lock_guard<std::mutex> lock(TapMutex());
  auto& a = Attached();
  const auto gone =
      std::remove_if(a.begin(), a.end(), [&](const auto& p) { return p.get() == profiler; });
  g_taps -= static_cast<int>(a.end() - gone);
  a.erase(gone, a.end());
}

std::vector<std::shared_ptr<Profiler>> Profiler::ForExecution(
    const config::RuntimeConfig& config) {
  std::vector<std::shared_ptr<Profiler>> out;
  bool session = false;
  // Without sessions or attached profilers (nearly always) no lock: two
  // cores executing at once took turns on it.
  if (g_taps.load(std::memory_order_acquire) > 0) {
    std::lock_guard<std::mutex> lock(TapMutex());
    if (Session() != nullptr) {
      out.push_back(Session());
      session = true;
    }
    out.insert(out.end(), Attached().begin(), Attached().end());
  }
  if (!session) {
    // The environment's profiler lives in the registry: not owned here.
    if (Profiler* env = ForConfig(config); env != nullptr)
      out.insert(out.begin(), std::shared_ptr<Profiler>(std::shared_ptr<Profiler>(), env));
  }
  return out;
}

void Profiler::RecordMemoryAll(const MemoryEvent& event) {
  std::vector<std::shared_ptr<Profiler>> targets;
  {
    std::lock_guard<std::mutex> lock(TapMutex());
    for (const auto& p : Attached())
      if (p->options_.memory) targets.push_back(p);
  }
  for (const auto& p : targets) p->RecordMemory(event);
}

bool Profiler::DmaWanted(const config::RuntimeConfig& config) {
  return Enabled(config) || g_taps.load(std::memory_order_relaxed) > 0;
}

void Profiler::RecordDmaAll(const config::RuntimeConfig& config, const DmaTransfer& transfer) {
  if (!DmaWanted(config)) return;
  for (const auto& p : ForExecution(config)) p->RecordDma(transfer);
}

Profiler::Profiler(const config::RuntimeConfig& config, ProfilerOptions options)
    : config_(config),
      options_(options),
      dir_(config.inspect_output_dir.empty() ? "." : config.inspect_output_dir) {}

Profiler::~Profiler() { Flush(); }

bool Profiler::CoreSelected(int core) const {
  const auto& f = config_.inspect_event_filter_nc;
  return f.empty() || std::find(f.begin(), f.end(), core) != f.end();
}

bool Profiler::TypeSelected(std::string_view type) const {
  const auto& t = config_.inspect_event_types;
  return std::find(t.begin(), t.end(), type) != t.end();
}

std::string Profiler::PathFor(std::string_view file) const { return absl::StrCat(dir_, "/", std::string(file)); }

std::unique_ptr<Capture> Profiler::Begin(const ExecutionInfo& info) {
  const int64_t entered = NowNs();  // the API call's time includes the profiler's work
  if (!CoreSelected(info.core)) return nullptr;
  if (options_.model != nullptr && info.model_key != options_.model) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  NeffState& neff = neffs_[info.neff_uuid];
  const uint64_t n = neff.executions++;
  bool device = false;
  switch (config_.inspect_device_profile) {
    case config::DeviceProfileMode::kDisabled: break;
    case config::DeviceProfileMode::kSession: device = true; break;
    case config::DeviceProfileMode::kModel:
      device = config_.inspect_on_fail ? !neff.written
                                       : (!neff.written && n >= config_.inspect_num_warmup);
      break;
  }
  // NEURON_RT_INSPECT_PRECACHE_ENABLE: a warmup builds the metadata the
  // profiled execution would otherwise build inside its own time.
  if (!device && config_.inspect_precache_enable && n < config_.inspect_num_warmup &&
      config_.inspect_device_profile == config::DeviceProfileMode::kModel &&
      !config_.inspect_on_fail && info.module != nullptr && neff.costs == nullptr)
    neff.costs = std::make_shared<const CostTable>(BuildCostTable(*info.module));
  const bool system = !config_.inspect_on_fail &&
                      (config_.inspect_system_profile || config_.inspect_cpu_util ||
                       config_.inspect_host_memory);
  if (!device && !system) return nullptr;
  auto c = std::make_unique<Capture>();
  c->info_ = info;
  c->device_ = device;
  c->system_ = system;
  c->on_fail_ = config_.inspect_on_fail;
  if (device && info.module != nullptr) {
    c->metadata_cached_ = neff.costs != nullptr;
    if (neff.costs == nullptr) {
      const int64_t start = NowNs();
      neff.costs = std::make_shared<const CostTable>(BuildCostTable(*info.module));
      c->metadata_build_ns_ = NowNs() - start;
    }
    c->costs_ = neff.costs;
  }
  for (int b = 0; b < 7; ++b)
    c->capacity_[b] = config_.profile_buf_mib[b] * (uint64_t{1} << 20) / kNotificationBytes;
  c->want_compute_ = TypeSelected("compute");
  c->want_dma_ = TypeSelected("dma");
  c->want_cc_ = TypeSelected("cc_running");
  c->want_cc_pending_ = TypeSelected("cc_pending");
  c->thread_id_ = static_cast<uint64_t>(syscall(SYS_gettid));
  if (config_.inspect_cpu_util || config_.inspect_host_memory) c->host_begin_ = SampleHost();
  c->api_begin_ = entered;
  return c;
}

void Profiler::NameDeviceTracks(Trace& trace, int device, int core) {
  const int pid = kDevicePidBase + device;
  trace.NameProcess(pid, absl::StrFormat("Neuron device nd%d (simulated)", device), 0);
  const int last = options_.memory ? kTrackMemory : kTrackH2d;
  auto name = [&](int t) {
    trace.NameThread(pid, DeviceTid(core, static_cast<Track>(t)),
                     absl::StrFormat("nc%d %s", core, kTrackNames[t]),
                     DeviceTid(core, static_cast<Track>(t)));
  };
  for (int t = kTrackExec; t <= last; ++t) name(t);
  if (config_.enable_dge_notifications) name(kTrackDge);
}

uint64_t Profiler::AddDevice(Trace& trace, Capture& c, bool name_tracks) {
  const int pid = kDevicePidBase + c.info_.device;
  const int core = c.info_.core;
  if (name_tracks) NameDeviceTracks(trace, c.info_.device, core);
  const int64_t run_begin = c.run_begin_ ? c.run_begin_ : c.api_begin_;
  const int64_t run_end = c.run_end_ ? c.run_end_ : c.api_end_;
  if (TypeSelected("nc_exec") && c.Admit(Buffer::kEvent)) {
    trace.Span(pid, DeviceTid(core, kTrackExec), c.info_.model, "nc_exec", run_begin,
               run_end - run_begin, {{"core", core}, {"neff_uuid", c.info_.neff_uuid}});
  }
  const uint64_t packet = config_.dma_packetization_size;
  if (TypeSelected("h2d_dma")) {
    auto copy = [&](const char* queue, const char* direction, const std::string& name,
                    uint64_t bytes, int64_t at) {
      if (!c.Admit(Buffer::kH2dDma)) return;
      nlohmann::json args = DmaArgs(queue, bytes, packet);
      args["direction"] = direction;
      trace.Span(pid, DeviceTid(core, kTrackH2d), absl::StrCat(queue, " ", name), "h2d_dma", at,
                 0, args);
    };
    for (const auto& [name, bytes] : c.info_.inputs)
      copy("h2d", "host_to_device", name, bytes, run_begin);
    for (const auto& [name, bytes] : c.info_.outputs)
      copy("d2h", "device_to_host", name, bytes, run_end);
  }
  const bool dge = config_.enable_dge_notifications && TypeSelected("dge");
  // The core's collectives events: each operation's issue, before it waits
  // for its peers (kept in NEURON_RT_PROFILE_BUF_CC_CORE_EVENT_MB).
  for (const auto& [name, at] : c.cc_issued_) {
    trace.Instant(pid, DeviceTid(core, kTrackCc), absl::StrCat("issued ", *name), "cc_pending", at,
                  {{"hlo", *name}});
  }
  uint64_t cache_hits = 0;
  for (const Capture::Span& s : c.spans_) {
    if (s.cost != nullptr && c.metadata_cached_) ++cache_hits;
    // NEURON_RT_ENABLE_DGE_NOTIFICATIONS: the ring's notification when the
    // instruction's dynamic DMA completes.
    if (dge && s.cost != nullptr && s.cost->dge_ring >= 0 && c.Admit(Buffer::kDma)) {
      const uint64_t bytes = static_cast<uint64_t>(s.cost->dge_bytes);
      trace.Instant(pid, DeviceTid(core, kTrackDge), absl::StrCat("dge ", *s.name), "dge",
                    s.end_ns,
                    {{"queue", absl::StrCat("dge", s.cost->dge_ring)},
                     {"bytes", bytes},
                     {"packets", DmaPackets(bytes, packet)},
                     {"hlo", *s.name},
                     {"opcode", s.cost->opcode}});
    }
    if (s.cost != nullptr) {
      trace.SpanWithArgsText(pid, DeviceTid(core, TrackOf(s.buffer)), *s.name, s.cost->event,
                             s.begin_ns, s.end_ns - s.begin_ns, s.cost->args_json);
    } else {
      trace.Span(pid, DeviceTid(core, TrackOf(s.buffer)), *s.name, "compute", s.begin_ns,
                 s.end_ns - s.begin_ns, {{"hlo", *s.name}});
    }
  }
  return cache_hits;
}

namespace {

// otherData.metadata: whether the profiled execution found its metadata
// cached (NEURON_RT_INSPECT_PRECACHE_ENABLE) or built it in its own time.
nlohmann::json MetadataSummary(bool precache, uint64_t cache_hits, int64_t build_ns) {
  return {{"precache", precache}, {"cache_hits", cache_hits}, {"build_ns", build_ns}};
}

}  // namespace

void Profiler::AddSystem(Trace& trace, Capture& c) {
  const int pid = static_cast<int>(getpid());
  const int tid = static_cast<int>(c.thread_id_);
  const int core = c.info_.core;
  auto admit = [&]() {
    const uint64_t cap = config_.inspect_sys_trace_max_events_per_nc;
    uint64_t& used = system_events_per_core_[core];
    if (cap != 0 && used >= cap) {
      ++system_dropped_;
      return false;
    }
    ++used;
    return true;
  };
  if (config_.inspect_system_profile) {
    if (TypeSelected("api") && admit())
      trace.Span(pid, tid, "nrt_execute", "api", c.api_begin_, c.api_end_ - c.api_begin_,
                 {{"model", c.info_.model}, {"core", core}});
    if (TypeSelected("exec") && c.run_begin_ && admit())
      trace.Span(pid, tid, "run", "exec", c.run_begin_, c.run_end_ - c.run_begin_,
                 {{"model", c.info_.model}, {"core", core}});
    if (TypeSelected("tensor")) {
      for (const auto& [name, bytes] : c.info_.inputs)
        if (admit())
          trace.Instant(pid, tid, absl::StrCat("input ", name), "tensor", c.api_begin_,
                        {{"bytes", bytes}, {"core", core}});
    }
  }
  if (config_.inspect_cpu_util) {
    trace.Counter(pid, "cpu_util", c.api_end_,
                  {{"process_pct", ProcessCpuPercent(c.host_begin_, c.host_end_)},
                   {"host_pct", HostCpuPercent(c.host_begin_, c.host_end_)}});
  }
  if (config_.inspect_host_memory) {
    trace.Counter(pid, "host_memory", c.api_begin_,
                  {{"rss_bytes", c.host_begin_.rss_bytes},
                   {"available_bytes", c.host_begin_.host_available_bytes}});
    trace.Counter(pid, "host_memory", c.api_end_,
                  {{"rss_bytes", c.host_end_.rss_bytes},
                   {"available_bytes", c.host_end_.host_available_bytes}});
  }
}

namespace {

// otherData.truncated, and one warning per truncated buffer.
void ReportTruncation(Trace& trace, const uint64_t dropped[7], const uint64_t mib[8],
                      std::string_view model) {
  for (int b = 0; b < 7; ++b) {
    if (dropped[b] == 0) continue;
    const char* var = BufferVariable(static_cast<Buffer>(b));
    nlohmann::json& t = trace.other_data()["truncated"][var];
    const uint64_t before = t.is_null() ? 0 : t["dropped"].get<uint64_t>();
    t = {{"dropped", before + dropped[b]}, {"buffer_mib", mib[b]},
         {"capacity", mib[b] * (uint64_t{1} << 20) / kNotificationBytes}};
    NEURON_LOG(NRT, kWarn,
               "profile of model '%s' truncated: %d notifications did not fit %s=%d; raise it",
               model, dropped[b], var, mib[b]);
  }
}

}  // namespace

std::vector<std::string> Profiler::End(std::unique_ptr<Capture> capture, bool failed,
                                       std::string_view status_text) {
  std::vector<std::string> written;
  if (capture == nullptr) return written;
  Capture& c = *capture;
  c.api_end_ = NowNs();
  if (c.run_begin_ && !c.run_end_) c.RunEnd();
  if (config_.inspect_cpu_util || config_.inspect_host_memory) c.host_end_ = SampleHost();
  std::lock_guard<std::mutex> lock(mu_);
  if (c.device_) {
    if (options_.latest_per_core) {
      auto trace = std::make_unique<Trace>(config_.sim_profile_format);
      nlohmann::json& od = trace->other_data();
      od["profile"] = "device";
      od["mode"] = "continuous";
      od["model"] = c.info_.model;
      od["neff_uuid"] = c.info_.neff_uuid;
      od["core"] = c.info_.core;
      od["status"] = std::string(status_text);
      od["executions"] = 1;
      od["metadata"] = MetadataSummary(config_.inspect_precache_enable, AddDevice(*trace, c, true),
                                       c.metadata_build_ns_);
      ReportTruncation(*trace, c.dropped_, config_.profile_buf_mib, c.info_.model);
      latest_[c.info_.core] = std::move(trace);
    } else if (config_.inspect_device_profile == config::DeviceProfileMode::kSession) {
      if (session_device_ == nullptr) {
        session_device_ = std::make_unique<Trace>(config_.sim_profile_format);
        session_device_->other_data()["profile"] = "device";
        session_device_->other_data()["mode"] = "session";
      }
      const bool first = !session_named_cores_[c.info_.core];
      session_named_cores_[c.info_.core] = true;
      session_metadata_hits_ += AddDevice(*session_device_, c, first);
      nlohmann::json& od = session_device_->other_data();
      const int64_t built = od.contains("metadata") ? od["metadata"].value("build_ns", 0) : 0;
      od["metadata"] = MetadataSummary(config_.inspect_precache_enable, session_metadata_hits_,
                                       built + c.metadata_build_ns_);
      ReportTruncation(*session_device_, c.dropped_, config_.profile_buf_mib, c.info_.model);
      session_device_->other_data()["executions"] =
          session_device_->other_data().value("executions", 0) + 1;
      session_dirty_ = true;
    } else if (!c.on_fail_ || failed) {
      NeffState& neff = neffs_[c.info_.neff_uuid];
      Trace trace(config_.sim_profile_format);
      nlohmann::json& od = trace.other_data();
      od["profile"] = "device";
      od["mode"] = c.on_fail_ ? "on_fail" : "model";
      od["model"] = c.info_.model;
      od["neff_uuid"] = c.info_.neff_uuid;
      od["core"] = c.info_.core;
      od["status"] = std::string(status_text);
      od["warmup_executions"] = c.on_fail_ ? 0 : config_.inspect_num_warmup;
      od["metadata"] = MetadataSummary(config_.inspect_precache_enable, AddDevice(trace, c, true),
                                       c.metadata_build_ns_);
      ReportTruncation(trace, c.dropped_, config_.profile_buf_mib, c.info_.model);
      const std::string path = PathFor(absl::StrFormat(
          "device_profile_model_%s_%s_pid%d%s", Sanitize(c.info_.model),
          c.info_.neff_uuid.substr(0, 8), getpid(), ProfileFileExtension(config_.sim_profile_format)));
      if (absl::Status s = trace.WriteFile(path); s.ok()) {
        written.push_back(path);
        neff.written = true;
        NEURON_LOG(NRT, kInfo, "device profile of model '%s' written to %s", c.info_.model,
                   path);
      } else {
        NEURON_LOG(NRT, kError, "device profile of model '%s' not written: %s", c.info_.model,
                   std::string(s.message()));
      }
    }
  }
  if (c.system_) {
    if (system_ == nullptr) {
      system_ = std::make_unique<Trace>(config_.sim_profile_format);
      system_->other_data()["profile"] = "system";
      system_->NameProcess(static_cast<int>(getpid()), "neuron runtime (host)", 1);
    }
    AddSystem(*system_, c);
    if (system_dropped_ > 0) {
      system_->other_data()["truncated"]["NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC"] = {
          {"dropped", system_dropped_},
          {"max_events_per_nc", config_.inspect_sys_trace_max_events_per_nc}};
    }
    system_dirty_ = true;
  }
  return written;
}

std::vector<std::string> Profiler::Flush() {
  std::vector<std::string> written;
  if (!options_.write_on_flush) return written;
  std::lock_guard<std::mutex> lock(mu_);
  auto write = [&](Trace* trace, bool* dirty, const std::string& file) {
    if (trace == nullptr || !*dirty) return;
    const std::string path = PathFor(file);
    if (absl::Status s = trace->WriteFile(path); s.ok()) {
      written.push_back(path);
      *dirty = false;
    } else {
      NEURON_LOG(NRT, kError, "profile not written: %s", std::string(s.message()));
    }
  };
  if (system_dirty_ && system_dropped_ > system_dropped_reported_) {
    NEURON_LOG(NRT, kWarn,
               "system profile truncated: %d events over NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC=%d",
               system_dropped_, config_.inspect_sys_trace_max_events_per_nc);
    system_dropped_reported_ = system_dropped_;
  }
  const char* extension = ProfileFileExtension(config_.sim_profile_format);
  write(session_device_.get(), &session_dirty_,
        absl::StrFormat("device_profile_session_pid%d%s", getpid(), extension));
  write(system_.get(), &system_dirty_,
        absl::StrFormat("system_profile_pid%d%s", getpid(), extension));
  return written;
}

}  // namespace neuron::profile

namespace neuron::profile {

absl::Status Profiler::WriteDeviceTrace(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  if (session_device_ == nullptr) {
    // Nothing ran: still a valid (empty) trace, so the file always appears.
    Trace empty(config_.sim_profile_format);
    empty.other_data()["profile"] = "device";
    empty.other_data()["mode"] = "session";
    empty.other_data()["executions"] = 0;
    return empty.WriteFile(path);
  }
  return session_device_->WriteFile(path);
}

absl::Status Profiler::WriteLatest(int core, const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = latest_.find(core);
  if (it == latest_.end() || it->second == nullptr) {
    return absl::NotFoundError(
        absl::StrFormat("no execution on NeuronCore %d has been profiled yet", core));
  }
  return it->second->WriteFile(path);
}

void Profiler::AddSystemEvents(const std::vector<SysEvent>& events) {
  if (events.empty() || !config_.inspect_system_profile) return;
  const int pid = static_cast<int>(getpid());
  std::lock_guard<std::mutex> lock(mu_);
  if (system_ == nullptr) {
    system_ = std::make_unique<Trace>(config_.sim_profile_format);
    system_->other_data()["profile"] = "system";
    system_->NameProcess(pid, "neuron runtime (host)", 1);
  }
  for (const SysEvent& e : events) {
    nlohmann::json args = e.args;
    args["core"] = e.core;
    system_->Span(pid, static_cast<int>(e.thread_id), e.name, e.type, e.begin_ns,
                  e.end_ns - e.begin_ns, args);
    // NEURON_RT_ENABLE_MEMORY_METRICS: a counter track per core and category.
    if (e.name == "memory_metric" && e.args.contains("category") &&
        e.args["category"].is_string()) {
      system_->Counter(pid,
                       absl::StrCat("nc", e.core, " ", e.args["category"].get<std::string>(),
                                    " in use"),
                       e.begin_ns, {{"bytes", e.args.value("in_use", uint64_t{0})}});
    }
  }
  system_dirty_ = true;
}

Trace& Profiler::SessionTraceFor(int device, int core) {
  if (session_device_ == nullptr) {
    session_device_ = std::make_unique<Trace>(config_.sim_profile_format);
    session_device_->other_data()["profile"] = "device";
    session_device_->other_data()["mode"] = "session";
  }
  if (!session_named_cores_[core]) {
    session_named_cores_[core] = true;
    NameDeviceTracks(*session_device_, device, core);
  }
  return *session_device_;
}

void Profiler::RecordDma(const DmaTransfer& t) {
  // Only traces that span a session have room for copies between executions.
  const bool session =
      (config_.inspect_device_profile == config::DeviceProfileMode::kSession &&
       !options_.latest_per_core && options_.model == nullptr) ||
      options_.memory;
  if (!session || !CoreSelected(t.core) || !TypeSelected("h2d_dma") ||
      config_.profile_buf_mib[static_cast<int>(Buffer::kH2dDma)] == 0)
    return;
  const char* queue = DmaQueueName(t.queue);
  nlohmann::json args = DmaArgs(queue, t.bytes, config_.dma_packetization_size);
  args["direction"] = t.queue == DmaQueue::kHostToDevice ? "host_to_device" : "device_to_host";
  std::lock_guard<std::mutex> lock(mu_);
  SessionTraceFor(t.device, t.core)
      .Span(kDevicePidBase + t.device, DeviceTid(t.core, kTrackH2d),
            absl::StrCat(queue, " ", t.name), "h2d_dma", t.begin_ns, t.end_ns - t.begin_ns, args);
  session_dirty_ = true;
}

void Profiler::RecordMemory(const MemoryEvent& event) {
  if (!CoreSelected(event.core)) return;
  const int pid = kDevicePidBase + event.device;
  std::lock_guard<std::mutex> lock(mu_);
  SessionTraceFor(event.device, event.core);
  uint64_t& in_use = memory_in_use_[event.core];
  in_use = event.alloc ? in_use + event.bytes : (in_use > event.bytes ? in_use - event.bytes : 0);
  session_device_->Instant(pid, DeviceTid(event.core, kTrackMemory),
                           absl::StrCat(event.alloc ? "alloc " : "free ", event.name), "memory",
                           event.at_ns,
                           {{"bytes", event.bytes}, {"core", event.core},
                            {"op", event.alloc ? "alloc" : "free"}});
  session_device_->Counter(pid, absl::StrFormat("nc%d device memory", event.core), event.at_ns,
                           {{"bytes_in_use", in_use}});
  session_dirty_ = true;
}

}  // namespace neuron::profile
