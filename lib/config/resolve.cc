// Resolve(): turns the environment into a RuntimeConfig, applying the
// interactions the Neuron Runtime environment-variable reference states.
//
// How bad values are handled (one rule for every variable):
//   - A value its type cannot parse fails nrt_init() with NRT_INVALID and
//     one line: NAME='value': not <type> (accepted: <what is>). The typed
//     field keeps its default so the rest of the resolution still runs.
//   - Exceptions are exactly the reference's own words: a malformed
//     NEURON_RT_CC_STREAM_SPLIT and an over-long NEURON_RT_OOM_DUMP_DIRECTORY
//     log an error and keep the default; NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS
//     above 63 warns and clamps.
//   - A parsable value that breaks a stated rule (a core that does not
//     exist, a non-power-of-two buffer, ...) fails init the same way, with
//     a message naming the variable, the value and the rule.
//   - Values the reference says are ignored, or overridden by another
//     variable, produce a warning and show the effective value as "derived".
// The first failure is the init error; later ones are error diagnostics.
// Resolve never prints: lib/log reports the diagnostics at runtime init.
#include <algorithm>
#include <iterator>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/config/inspect_events.h"
#include "lib/config/resolver.h"
#include "lib/config/value_parsers.h"
#include "lib/support/parse.h"

namespace neuron::config {
namespace {

// The reference's hard cap: UDMA_M2S_CFG_LEN_MAX_PKT_SIZE_MASK.
constexpr uint64_t kMaxDmaPacketBytes = (uint64_t{1} << 20) - 1;
constexpr uint64_t kMaxXuQueuedRequests = 63;  // 4 MB host DMA allocation limit
constexpr size_t kMaxOomDumpPathChars = 200;
constexpr uint64_t kContiguousScratchpadPageMib = 64;

bool IsPowerOfTwo(uint64_t value) { return value != 0 && (value & (value - 1)) == 0; }

std::string AllIds(int count) {
  if (count <= 0) return "none";
  return count == 1 ? "0" : absl::StrFormat("0-%d", count - 1);
}

std::string CountOf(int count, const char* singular) {
  return absl::StrFormat("%d %s%s", count, singular, count == 1 ? "" : "s");
}

// ---- Core allocation & topology ----

// Picks the LNC size from NEURON_LOGICAL_NC_CONFIG, else the deprecated
// NEURON_RT_VIRTUAL_CORE_SIZE, else the platform default, and checks it.
void ResolveLogicalCoreSize(Resolver& r) {
  const PlatformFacts& p = r.platform();
  // trn1, trn1n and inf2 are NeuronCore-v2 parts without core fusion, so
  // their default is 1 (the reference names Trn1; inf2 has the same 2
  // cores per device and no LNC support). Everything newer defaults to 2.
  const uint64_t fallback = p.IsTrn1Family() ? 1 : 2;
  const char* kNew = "NEURON_LOGICAL_NC_CONFIG";
  const char* kOld = "NEURON_RT_VIRTUAL_CORE_SIZE";
  uint64_t lnc = fallback;
  std::string from = kNew;
  if (r.IsSet(kNew)) {
    r.ReadUnsigned(kNew, fallback, &lnc);
    if (std::optional<std::string> old = r.Env(kOld)) {
      r.Record(kOld, *old, Source::kEnv);
      r.Warn(kOld, absl::StrFormat(
                       "%s=%s is deprecated and ignored because %s is set; "
                       "remove it",
                       kOld, *old, kNew));
    }
  } else if (r.IsSet(kOld)) {
    uint64_t old_value = fallback;
    if (r.ReadUnsigned(kOld, fallback, &old_value)) {
      lnc = old_value;
      from = kOld;
      r.Record(kNew, std::to_string(lnc), Source::kDerived);
      r.Warn(kOld, absl::StrFormat(
                       "%s=%u is deprecated (still applied as %s=%u); use %s",
                       kOld, old_value, kNew, old_value, kNew));
    } else {
      r.Record(kNew, std::to_string(fallback), Source::kDefault);
    }
  } else {
    r.ReadUnsigned(kNew, fallback, &lnc);
    r.Record(kOld, "", Source::kDefault);
  }

  const int cores = p.physical_cores_per_device;
  if (!IsPowerOfTwo(lnc) || cores <= 0 || static_cast<uint64_t>(cores) % lnc != 0) {
    std::string accepted;
    for (int size = 1; size <= cores; size *= 2) {
      if (cores % size == 0) {
        accepted += (accepted.empty() ? "" : ", ") + std::to_string(size);
      }
    }
    r.Fail(from, absl::StrFormat(
                     "%s=%u: the LNC size must be a power of two dividing the "
                     "%s of a %s device (accepted: %s)",
                     from, lnc, CountOf(cores, "physical NeuronCore"), p.arch,
                     accepted.empty() ? "none" : accepted));
    lnc = (cores > 0 && cores % fallback == 0) ? fallback : 1;
  } else if (p.IsTrn2Family() && lnc != 2) {
    r.Warn(from, absl::StrFormat("%s=%u: only 2 is publicly supported on %s",
                                 from, lnc, p.arch));
  }
  r.config().logical_nc_config = static_cast<int>(lnc);
}

// Logical cores = devices * physical cores per device / LNC size.
int LogicalCoreCount(Resolver& r) {
  const PlatformFacts& p = r.platform();
  if (p.devices <= 0 || p.physical_cores_per_device <= 0) return 0;
  return p.devices * p.physical_cores_per_device / r.config().logical_nc_config;
}

// NEURON_RT_VISIBLE_CORES, or the first NEURON_RT_NUM_CORES cores
// (deprecated), else every logical core.
void ResolveVisibleCores(Resolver& r) {
  const char* kVisible = "NEURON_RT_VISIBLE_CORES";
  const char* kNum = "NEURON_RT_NUM_CORES";
  const int logical = LogicalCoreCount(r);
  RuntimeConfig& c = r.config();
  c.visible_cores.clear();
  for (int i = 0; i < logical; ++i) c.visible_cores.push_back(i);
  r.Record(kVisible, FormatRangeList(c.visible_cores), Source::kDefault);

  std::vector<int> requested;
  const bool visible_given = r.ReadRangeList(kVisible, &requested);
  if (visible_given) {
    if (requested.back() >= logical) {
      r.Fail(kVisible, absl::StrFormat(
                           "%s=%s: core %d does not exist (this instance has "
                           "%s: %s)",
                           kVisible, *r.Env(kVisible), requested.back(),
                           CountOf(logical, "logical NeuronCore"), AllIds(logical)));
      r.Record(kVisible, *r.Env(kVisible), Source::kEnv);
    } else {
      c.visible_cores = requested;
    }
  }

  uint64_t num = 0;
  if (!r.IsSet(kNum)) {
    r.Record(kNum, "", Source::kDefault);
  } else if (r.ReadUnsigned(kNum, 0, &num)) {
    if (r.IsSet(kVisible)) {
      r.Warn(kNum, absl::StrFormat(
                       "%s=%u is deprecated and ignored because %s is set",
                       kNum, num, kVisible));
    } else {
      r.Warn(kNum, absl::StrFormat(
                       "%s=%u is deprecated (still applied); use %s to pick "
                       "the cores or NEURON_LOGICAL_NC_CONFIG",
                       kNum, num, kVisible));
      if (num > static_cast<uint64_t>(logical)) {
        r.Fail(kNum, absl::StrFormat("%s=%u: asks for more cores than exist "
                                     "(this instance has %s: %s)",
                                     kNum, num,
                                     CountOf(logical, "logical NeuronCore"),
                                     AllIds(logical)));
      } else if (num > 0) {
        c.visible_cores.resize(num);
        r.Record(kVisible, FormatRangeList(c.visible_cores), Source::kDerived);
      }
    }
  }
  c.num_cores = static_cast<int>(num);
}

// ---- Functional: networking, loading, numerics ----

void ResolveFunctional(Resolver& r) {
  RuntimeConfig& c = r.config();
  const char* kRoot = "NEURON_RT_ROOT_COMM_ID";
  if (r.ReadString(kRoot, "", &c.root_comm_id) && !IsHostPort(c.root_comm_id)) {
    r.FailParse(kRoot, c.root_comm_id, "a host:port address", kAcceptedHostPort);
    c.root_comm_id.clear();
  }
  r.ReadUnsigned("NEURON_RT_EXEC_TIMEOUT", 30, &c.exec_timeout_s);
  if (r.ReadUnsigned("NEURON_RT_ALLOW_LEGACY_NEFF", 0, &c.allow_legacy_neff) &&
      c.allow_legacy_neff != 0) {
    r.Warn("NEURON_RT_ALLOW_LEGACY_NEFF",
           absl::StrFormat("NEURON_RT_ALLOW_LEGACY_NEFF=%u is for testing only: "
                           "a NEFF built for another target can corrupt outputs "
                           "or hang",
                           c.allow_legacy_neff));
  }
  r.ReadBool("NEURON_RT_VALIDATE_HASH", false, &c.validate_hash);
  r.ReadBool("NEURON_RT_ENABLE_RG_VALIDATION", false, &c.enable_rg_validation);
  r.ReadUnsigned("NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT", 0,
                 &c.async_sendrecv_bootstrap_port, 65535);
  r.ReadBool("NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED", false,
             &c.async_sendrecv_experimental);

  // P2P is the fallback when the driver has no dma-buf v2; then it is also
  // forced back on if the user turns it off.
  const char* kP2p = "NEURON_RT_ENABLE_P2P";
  const bool needs_p2p = !r.platform().driver_has_dmabuf_v2;
  if (r.ReadBool(kP2p, needs_p2p, &c.enable_p2p) && needs_p2p && !c.enable_p2p) {
    c.enable_p2p = true;
    r.Record(kP2p, "true", Source::kDerived);
    r.Warn(kP2p, absl::StrFormat("%s=%s: forced back on because the driver "
                                 "has no dma-buf v2 support",
                                 kP2p, *r.Env(kP2p)));
  }

  r.ReadBool("NEURON_FAIL_ON_NAN", false, &c.fail_on_nan);
  r.ReadBool("NEURON_RT_STOCHASTIC_ROUNDING_EN", false, &c.stochastic_rounding_en);
  r.ReadUnsigned("NEURON_RT_STOCHASTIC_ROUNDING_SEED", 0, &c.stochastic_rounding_seed);
}

// NEURON_RT_NUMERICAL_ERRORS_VERBOSITY, raised to critical by
// NEURON_FAIL_ON_NAN.
void ResolveNumericalVerbosity(Resolver& r) {
  const char* kName = "NEURON_RT_NUMERICAL_ERRORS_VERBOSITY";
  RuntimeConfig& c = r.config();
  c.numerical_errors_verbosity = NumericalVerbosity::kNone;
  Source source = Source::kDefault;
  if (std::optional<std::string> text = r.Env(kName)) {
    if (auto v = ParseNumericalVerbosity(*text)) {
      c.numerical_errors_verbosity = *v;
      source = Source::kEnv;
    } else {
      r.FailParse(kName, *text, "a verbosity", kAcceptedNumericalVerbosity);
      r.Record(kName, *text, Source::kEnv);
      return;
    }
  }
  if (c.fail_on_nan && c.numerical_errors_verbosity == NumericalVerbosity::kNone) {
    if (source == Source::kEnv) {
      r.Warn(kName, absl::StrFormat("%s=%s: raised to critical because "
                                    "NEURON_FAIL_ON_NAN is on",
                                    kName, *r.Env(kName)));
    }
    c.numerical_errors_verbosity = NumericalVerbosity::kCritical;
    source = Source::kDerived;
  }
  r.Record(kName, NumericalVerbosityName(c.numerical_errors_verbosity), source);
}

// ---- Performance tuning: DMA, collectives, barriers, proxies ----

void ResolvePerformance(Resolver& r) {
  RuntimeConfig& c = r.config();
  const char* kPacket = "NEURON_RT_DBG_DMA_PACKETIZATION_SIZE";
  if (r.ReadByteCount(kPacket, 4096, &c.dma_packetization_size) &&
      c.dma_packetization_size > kMaxDmaPacketBytes) {
    r.Fail(kPacket, absl::StrFormat(
                        "%s=%s: %u bytes exceeds the DMA packet cap "
                        "UDMA_M2S_CFG_LEN_MAX_PKT_SIZE_MASK (%u bytes, 1 MiB - 1)",
                        kPacket, *r.Env(kPacket), c.dma_packetization_size,
                        kMaxDmaPacketBytes));
    c.dma_packetization_size = 4096;
  }

  const char* kXu = "NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS";
  if (r.ReadUnsigned(kXu, 8, &c.xu_max_queued_requests) &&
      c.xu_max_queued_requests > kMaxXuQueuedRequests) {
    r.Warn(kXu, absl::StrFormat("%s=%u: above the maximum of %u (4 MB host DMA "
                                "allocation limit); clamped to %u",
                                kXu, c.xu_max_queued_requests,
                                kMaxXuQueuedRequests, kMaxXuQueuedRequests));
    c.xu_max_queued_requests = kMaxXuQueuedRequests;
    r.Record(kXu, std::to_string(kMaxXuQueuedRequests), Source::kDerived);
  }

  r.ReadBool("NEURON_RT_DISABLE_DEBUG_INFO", false, &c.disable_debug_info);
  r.ReadUnsigned("NEURON_RT_CC_CHANNEL_BUFFER_N", 8, &c.cc_channel_buffer_n);
  r.ReadByteCount("NEURON_RT_CC_CHUNK_SIZE", uint64_t{2} << 20, &c.cc_chunk_size);

  // The reference: malformed input logs an error and keeps the default.
  const char* kSplit = "NEURON_RT_CC_STREAM_SPLIT";
  c.cc_stream_split_w0 = 3;
  c.cc_stream_split_w1 = 1;
  r.Record(kSplit, "3:1", Source::kDefault);
  if (std::optional<std::string> text = r.Env(kSplit)) {
    if (auto split = ParseStreamSplit(*text)) {
      c.cc_stream_split_w0 = split->w0;
      c.cc_stream_split_w1 = split->w1;
      r.Record(kSplit, absl::StrFormat("%u:%u", split->w0, split->w1), Source::kEnv);
    } else {
      r.Error(kSplit, absl::StrFormat("%s='%s': not %s; keeping the default 3:1",
                                      kSplit, *text, kAcceptedStreamSplit));
    }
  }

  const char* kCcPacket = "NEURON_RT_DBG_CC_DMA_PACKET_SIZE";
  r.Record(kCcPacket, "", Source::kDefault);
  if (std::optional<std::string> text = r.Env(kCcPacket)) {
    if (auto sizes = ParseUnsignedList(*text)) {
      r.Record(kCcPacket, absl::StrJoin(*sizes, ","), Source::kEnv);
      r.Warn(kCcPacket, absl::StrFormat("%s=%s is ignored: per-priority DMA "
                                        "packet sizing takes precedence",
                                        kCcPacket, *text));
    } else {
      r.Record(kCcPacket, *text, Source::kEnv);
      r.FailParse(kCcPacket, *text, "a list of packet sizes", kAcceptedUnsignedList);
    }
  }

  r.ReadBool("NEURON_RT_DISABLE_EXECUTION_BARRIER", false, &c.disable_execution_barrier);
  // Off on trn1: a suspected deadlock with the barrier's traffic pattern.
  r.ReadBool("NEURON_RT_ENABLE_HW_EXECUTION_BARRIER", r.platform().IsTrn2Family(),
             &c.enable_hw_execution_barrier);

  const char* kAffinity = "NEURON_RT_LOW_LATENCY_TASKS_CPU_AFFINITY";
  c.low_latency_tasks_cpu_affinity.clear();
  r.Record(kAffinity, "", Source::kDefault);
  std::vector<int> cpus;
  if (r.ReadRangeList(kAffinity, &cpus)) {
    const int host_cpus = r.platform().host_cpus;
    if (cpus.back() >= host_cpus) {
      r.Fail(kAffinity, absl::StrFormat(
                            "%s=%s: CPU %d does not exist (this host has %s: %s)",
                            kAffinity, *r.Env(kAffinity), cpus.back(),
                            CountOf(host_cpus, "CPU"), AllIds(host_cpus)));
    } else {
      c.low_latency_tasks_cpu_affinity = cpus;
    }
  }

  r.ReadBool("NEURON_RT_ONE_THREAD_PER_CORE", false, &c.one_thread_per_core);
  const char* kRanks = "NEURON_RT_RANKS_PER_NETWORK_PROXY";
  if (r.ReadUnsigned(kRanks, 1, &c.ranks_per_network_proxy) &&
      c.ranks_per_network_proxy > 1 && !c.enable_hw_execution_barrier) {
    r.Fail(kRanks, absl::StrFormat(
                       "%s=%u: more than one rank per proxy requires the "
                       "hardware execution barrier, but "
                       "NEURON_RT_ENABLE_HW_EXECUTION_BARRIER is off",
                       kRanks, c.ranks_per_network_proxy));
  }
}

// ---- Memory & scratchpad ----

void ResolveMemory(Resolver& r) {
  RuntimeConfig& c = r.config();
  const PlatformFacts& p = r.platform();
  const bool trn2_plus = p.IsTrn2Family();

  const char* kMap = "NEURON_RT_MAP_HBM";
  if (r.ReadBool(kMap, trn2_plus, &c.map_hbm) && c.map_hbm && !trn2_plus) {
    c.map_hbm = false;
    r.Record(kMap, "false", Source::kDerived);
    r.Warn(kMap, absl::StrFormat("%s=%s is ignored: HBM mapping exists on trn2+ "
                                 "only, not on %s",
                                 kMap, *r.Env(kMap), p.arch));
  }

  const char* kMr = "NEURON_RT_REGISTER_HBM_MR";
  const bool mr_given = r.ReadBool(kMr, true, &c.register_hbm_mr);
  if (c.register_hbm_mr && !c.map_hbm) {
    c.register_hbm_mr = false;
    r.Record(kMr, "false", Source::kDerived);
    if (mr_given) {
      r.Warn(kMr, absl::StrFormat("%s=%s: forced off because it requires "
                                  "NEURON_RT_MAP_HBM, which is off",
                                  kMr, *r.Env(kMr)));
    }
  }

  // Unsupported on trn2+ with LNC 1: the default becomes 0 there, and an
  // explicit 1 is honoured, then rejected by the tdrv safeguard.
  const char* kContig = "NEURON_RT_CONTIGUOUS_SCRATCHPAD";
  const bool unsupported = trn2_plus && c.logical_nc_config == 1;
  if (r.ReadBool(kContig, !unsupported, &c.contiguous_scratchpad) &&
      c.contiguous_scratchpad && unsupported) {
    r.Fail(kContig, absl::StrFormat(
                        "%s=%s: contiguous scratchpad is unsupported on %s "
                        "with LNC 1 (NEURON_LOGICAL_NC_CONFIG=1); set it to 0 "
                        "or unset it",
                        kContig, *r.Env(kContig), p.arch));
  }

  const char* kPage = "NEURON_SCRATCHPAD_PAGE_SIZE";
  if (r.ReadUnsigned(kPage, 512, &c.scratchpad_page_size_mib) &&
      c.contiguous_scratchpad) {
    r.Warn(kPage, absl::StrFormat("%s=%u is ignored while contiguous scratchpad "
                                  "is in use (it forces %u MiB pages)",
                                  kPage, c.scratchpad_page_size_mib,
                                  kContiguousScratchpadPageMib));
  }

  const char* kHbm = "NEURON_RT_HBM_INIT_VAL";
  HbmInitValue hbm;
  r.Record(kHbm, FormatHbmInit(hbm), Source::kDefault);
  if (std::optional<std::string> text = r.Env(kHbm)) {
    if (auto parsed = ParseHbmInit(*text)) {
      hbm = *parsed;
      r.Record(kHbm, FormatHbmInit(hbm), Source::kEnv);
    } else {
      r.Record(kHbm, *text, Source::kEnv);
      r.FailParse(kHbm, *text, "an HBM fill value", kAcceptedHbmInit);
    }
  }
  c.hbm_init = hbm.mode;
  c.hbm_init_pattern = hbm.pattern;
}

// ---- Observability ----

void ResolveObservability(Resolver& r) {
  RuntimeConfig& c = r.config();
  r.ReadByteCount("NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES", 0,
                  &c.gpsimd_stdout_queue_size);
  ResolveNumericalVerbosity(r);
  r.ReadBool("NEURON_RT_DBG_VERBOSE_DEV_MEM", false, &c.dbg_verbose_dev_mem);
  r.ReadByteCount("NEURON_RT_DEBUG_MEMLOG_MAX_SIZE", uint64_t{1} << 20,
                  &c.debug_memlog_max_size);
  r.ReadBool("NEURON_RT_ENABLE_DEVICE_MEMORY_OOM_LOG", true,
             &c.enable_device_memory_oom_log);
  r.ReadBool("NEURON_RT_ENABLE_MEMORY_METRICS", true, &c.enable_memory_metrics);
  ResolveLogging(r);
  r.ReadUnsigned("NEURON_RT_MIN_MEM_ERROR_INTERVAL", 3600, &c.min_mem_error_interval_s);

  // The reference: an over-long path logs an error and falls back.
  const char* kOom = "NEURON_RT_OOM_DUMP_DIRECTORY";
  if (r.ReadString(kOom, "/tmp", &c.oom_dump_directory) &&
      c.oom_dump_directory.size() > kMaxOomDumpPathChars) {
    r.Error(kOom, absl::StrFormat("%s='%s': the path is %u characters, over "
                                  "the limit of %u; using the default /tmp",
                                  kOom, c.oom_dump_directory,
                                  c.oom_dump_directory.size(),
                                  kMaxOomDumpPathChars));
    c.oom_dump_directory = "/tmp";
    r.Record(kOom, "/tmp", Source::kDefault);
  }

  const char* kStream = "NEURON_RT_DEBUG_STREAM_BUFFER_SIZE";
  if (r.ReadUnsigned(kStream, 262144, &c.debug_stream_buffer_size) &&
      !IsPowerOfTwo(c.debug_stream_buffer_size)) {
    r.Fail(kStream, absl::StrFormat("%s=%u: must be a power of two (e.g. 262144)",
                                    kStream, c.debug_stream_buffer_size));
    c.debug_stream_buffer_size = 262144;
  }
}

// ---- Profiling ----

// Overrides a profiling switch for NEURON_RT_INSPECT_ON_FAIL; warns when
// that contradicts what the user set.
void ForceForInspectOnFail(Resolver& r, const char* name, bool wanted, bool* field) {
  if (*field == wanted) return;
  if (r.SourceOf(name) == Source::kEnv) {
    r.Warn(name, absl::StrFormat("%s=%s: overridden to %s by NEURON_RT_INSPECT_ON_FAIL",
                                 name, *r.Env(name), wanted ? "true" : "false"));
  }
  *field = wanted;
  r.Record(name, wanted ? "true" : "false", Source::kDerived);
}

void ResolveProfiling(Resolver& r) {
  RuntimeConfig& c = r.config();
  r.ReadBool("NEURON_RT_INSPECT_ENABLE", false, &c.inspect_enable);
  r.ReadBool("NEURON_RT_INSPECT_CPU_UTIL", false, &c.inspect_cpu_util);

  const char* kMode = "NEURON_RT_INSPECT_DEVICE_PROFILE";
  c.inspect_device_profile = DeviceProfileMode::kDisabled;
  r.Record(kMode, DeviceProfileModeName(c.inspect_device_profile), Source::kDefault);
  if (std::optional<std::string> text = r.Env(kMode)) {
    if (auto mode = ParseDeviceProfileMode(*text)) {
      c.inspect_device_profile = *mode;
      r.Record(kMode, DeviceProfileModeName(*mode), Source::kEnv);
    } else {
      r.Record(kMode, *text, Source::kEnv);
      r.FailParse(kMode, *text, "a device profile mode", kAcceptedDeviceProfile);
    }
  }

  r.ReadBool("NEURON_RT_INSPECT_HOST_MEMORY", false, &c.inspect_host_memory);
  r.ReadString("NEURON_RT_INSPECT_OUTPUT_DIR", "", &c.inspect_output_dir);
  r.ReadBool("NEURON_RT_INSPECT_PRECACHE_ENABLE", false, &c.inspect_precache_enable);
  r.ReadBool("NEURON_RT_INSPECT_SYSTEM_PROFILE", true, &c.inspect_system_profile);
  r.ReadUnsigned("NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC", 0,
                 &c.inspect_sys_trace_max_events_per_nc);

  // Implies INSPECT_ENABLE and forces device-profile-only, model mode.
  if (r.ReadBool("NEURON_RT_INSPECT_ON_FAIL", false, &c.inspect_on_fail) &&
      c.inspect_on_fail) {
    ForceForInspectOnFail(r, "NEURON_RT_INSPECT_ENABLE", true, &c.inspect_enable);
    ForceForInspectOnFail(r, "NEURON_RT_INSPECT_SYSTEM_PROFILE", false,
                          &c.inspect_system_profile);
    ForceForInspectOnFail(r, "NEURON_RT_INSPECT_CPU_UTIL", false, &c.inspect_cpu_util);
    ForceForInspectOnFail(r, "NEURON_RT_INSPECT_HOST_MEMORY", false,
                          &c.inspect_host_memory);
    if (c.inspect_device_profile != DeviceProfileMode::kModel) {
      if (r.SourceOf(kMode) == Source::kEnv) {
        r.Warn(kMode, absl::StrFormat("%s=%s: overridden to model by "
                                      "NEURON_RT_INSPECT_ON_FAIL",
                                      kMode, *r.Env(kMode)));
      }
      c.inspect_device_profile = DeviceProfileMode::kModel;
      r.Record(kMode, "model", Source::kDerived);
    }
  }

  const char* kWarmup = "NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP";
  if (r.ReadUnsigned(kWarmup, 0, &c.inspect_num_warmup) &&
      c.inspect_device_profile != DeviceProfileMode::kModel) {
    r.Warn(kWarmup, absl::StrFormat(
                        "%s=%u is ignored: it is only valid when "
                        "NEURON_RT_INSPECT_DEVICE_PROFILE is model (it is %s)",
                        kWarmup, c.inspect_num_warmup,
                        DeviceProfileModeName(c.inspect_device_profile)));
    c.inspect_num_warmup = 0;
    r.Record(kWarmup, "0", Source::kDerived);
  }

  const char* kFilterNc = "NEURON_RT_INSPECT_EVENT_FILTER_NC";
  c.inspect_event_filter_nc.clear();
  r.Record(kFilterNc, FormatRangeList(c.visible_cores), Source::kDefault);
  std::vector<int> filter;
  if (r.ReadRangeList(kFilterNc, &filter)) {
    for (int core : filter) {
      if (std::find(c.visible_cores.begin(), c.visible_cores.end(), core) ==
          c.visible_cores.end()) {
        r.Fail(kFilterNc, absl::StrFormat(
                              "%s=%s: core %d is not visible (visible "
                              "NeuronCores: %s)",
                              kFilterNc, *r.Env(kFilterNc), core,
                              c.visible_cores.empty()
                                  ? std::string("none")
                                  : FormatRangeList(c.visible_cores)));
        filter.clear();
        break;
      }
    }
    c.inspect_event_filter_nc = filter;
  }

  const char* kFilterType = "NEURON_RT_INSPECT_EVENT_FILTER_TYPE";
  c.inspect_event_types = AllInspectEventNames();
  r.Record(kFilterType, absl::StrJoin(c.inspect_event_types, ","), Source::kDefault);
  if (std::optional<std::string> text = r.Env(kFilterType)) {
    auto events = ResolveEventFilter(*text);
    if (events.ok()) {
      c.inspect_event_types = *events;
      r.Record(kFilterType, absl::StrJoin(*events, ","), Source::kEnv);
    } else {
      r.Record(kFilterType, *text, Source::kEnv);
      r.Fail(kFilterType, absl::StrFormat("%s='%s': %s", kFilterType, *text,
                                          std::string(events.status().message())));
    }
  }

  // NEURON_RT_PROFILE_BUF_*_MB, in the order of profile_buf_mib.
  struct Buffer {
    const char* name;
    uint64_t fallback;
  };
  static constexpr Buffer kBuffers[] = {
      {"NEURON_RT_PROFILE_BUF_CC_CORE_EVENT_MB", 2},
      {"NEURON_RT_PROFILE_BUF_CC_CORE_INSTRUCTION_MB", 64},
      {"NEURON_RT_PROFILE_BUF_DMA_MB", 128},
      {"NEURON_RT_PROFILE_BUF_EVENT_MB", 64},
      {"NEURON_RT_PROFILE_BUF_H2D_DMA_MB", 64},
      {"NEURON_RT_PROFILE_BUF_INSTRUCTION_MB", 128},
      {"NEURON_RT_PROFILE_BUF_THROTTLE_MB", 64},
  };
  for (size_t i = 0; i < std::size(kBuffers); ++i) {
    r.ReadUnsigned(kBuffers[i].name, kBuffers[i].fallback, &c.profile_buf_mib[i]);
  }
  const char* kH2d = "NEURON_RT_PROFILE_BUF_H2D_DMA_MB";
  if (!r.platform().driver_has_h2d_dma_notifications && c.profile_buf_mib[4] != 0) {
    r.Warn(kH2d, absl::StrFormat("%s: host/device DMA profiling is disabled "
                                 "because the driver lacks H2D DMA notification "
                                 "support",
                                 kH2d));
    c.profile_buf_mib[4] = 0;
    r.Record(kH2d, "0", Source::kDerived);
  }
  const char* kInstr = "NEURON_RT_PROFILE_BUF_INSTRUCTION_MB";
  if (r.SourceOf(kInstr) == Source::kEnv && c.profile_buf_mib[5] == 0) {
    r.Warn(kInstr, absl::StrFormat("%s=0 creates a zero-sized buffer: no useful "
                                   "instruction capture",
                                   kInstr));
  }
  r.ReadBool("NEURON_RT_ENABLE_DGE_NOTIFICATIONS", false, &c.enable_dge_notifications);
}

// ---- Debugging ----

void ResolveDebugging(Resolver& r) {
  RuntimeConfig& c = r.config();
  const char* kDump = "NEURON_RT_DBG_DUMP_INPUTS_ON_ERR";
  c.dbg_dump_inputs_on_err = 0;
  r.Record(kDump, "0", Source::kDefault);
  if (std::optional<std::string> text = r.Env(kDump)) {
    if (auto value = ParseDumpInputsOnErr(*text)) {
      c.dbg_dump_inputs_on_err = *value;
      r.Record(kDump, std::to_string(*value), Source::kEnv);
    } else {
      r.Record(kDump, *text, Source::kEnv);
      r.FailParse(kDump, *text, "a dump selector", kAcceptedDumpInputsOnErr);
    }
  }
  r.ReadString("NEURON_RT_DBG_INPUT_DUMP_DIRECTORY", "/tmp/neuron-input-dump",
               &c.dbg_input_dump_directory);
  const bool local_given =
      r.ReadString("NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY",
                   "/tmp/neuron-core-dump/dt-%d-cid-%c", &c.local_core_dump_directory);

  const char* kS3 = "NEURON_RT_S3_CORE_DUMP_PREFIX";
  c.s3_core_dump_prefix.reset();
  std::string s3;
  if (r.ReadString(kS3, "", &s3)) {
    if (IsS3Prefix(s3)) {
      c.s3_core_dump_prefix = s3;
    } else {
      r.FailParse(kS3, s3, "an S3 URI", kAcceptedS3Prefix);
    }
  }
  // Dumps stop only when both locations are explicitly emptied.
  c.core_dump_enabled = !(local_given && c.local_core_dump_directory.empty() &&
                          c.s3_core_dump_prefix && c.s3_core_dump_prefix->empty());
}

// ---- Deprecated names that are parsed but ignored ----

void ResolveIgnoredDeprecated(Resolver& r) {
  const char* kInflight = "NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS";
  uint64_t inflight = 0;
  if (!r.IsSet(kInflight)) {
    r.Record(kInflight, "", Source::kDefault);
  } else if (r.ReadUnsigned(kInflight, 0, &inflight)) {
    r.Warn(kInflight,
           inflight > 0
               ? absl::StrFormat("%s=%u is ignored: implicit async execution was "
                                 "removed; migrate to the explicit nrta_* async APIs",
                                 kInflight, inflight)
               : absl::StrFormat("%s=0 is deprecated and has no effect; remove it",
                                 kInflight));
  }
}

void ResolveSimulator(Resolver& r) {
  RuntimeConfig& c = r.config();
  r.ReadString("NEURON_SIM_INSTANCE_TYPE", "trn1.2xlarge", &c.sim_instance_type);
  r.ReadString("NEURON_SIM_ROOT", "", &c.sim_root);

  const char* kFormat = "NEURON_SIM_PROFILE_FORMAT";
  c.sim_profile_format = ProfileFormat::kJson;
  r.Record(kFormat, ProfileFormatName(c.sim_profile_format), Source::kDefault);
  if (std::optional<std::string> text = r.Env(kFormat)) {
    if (auto format = ParseProfileFormat(*text)) {
      c.sim_profile_format = *format;
      r.Record(kFormat, ProfileFormatName(*format), Source::kEnv);
    } else {
      r.Record(kFormat, *text, Source::kEnv);
      r.FailParse(kFormat, *text, "a profile format", kAcceptedProfileFormat);
    }
  }
}

}  // namespace

Resolution Resolve(const EnvLookup& env, const PlatformFacts& platform) {
  Resolution out;
  Resolver r(env, platform, &out);
  ResolveLogicalCoreSize(r);
  ResolveVisibleCores(r);
  ResolveFunctional(r);
  ResolvePerformance(r);
  ResolveMemory(r);  // after the LNC size: contiguous scratchpad needs it
  ResolveObservability(r);
  ResolveProfiling(r);  // after the visible cores: the NC filter needs them
  ResolveDebugging(r);
  ResolveIgnoredDeprecated(r);
  ResolveSimulator(r);
  return out;
}

}  // namespace neuron::config
