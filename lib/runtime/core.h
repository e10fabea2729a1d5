// One logical NeuronCore held by this process: its HBM arena, the lazy HBM
// scrub of NEURON_RT_HBM_INIT_VAL, the OOM report (at most one per
// NEURON_RT_MIN_MEM_ERROR_INTERVAL), the memory metrics of
// NEURON_RT_ENABLE_MEMORY_METRICS, the admission bound of
// NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS, and the device-tree counters.
//
// Counters are kept in memory and written to the tree at most every
// kFlushInterval (and on unload/close): a tree update is a file write,
// far more than one small execution costs.
#ifndef NEURON_LIB_RUNTIME_CORE_H_
#define NEURON_LIB_RUNTIME_CORE_H_

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "lib/config/config.h"
#include "lib/device/device_tree.h"
#include "lib/device/hbm_arena.h"
#include "lib/device/logical_cores.h"
#include "lib/runtime/memory_metrics.h"
#include "lib/runtime/report_throttle.h"
#include "neuron/nrt_status.h"

namespace neuron::runtime {

// The 32-bit word HBM is scrubbed with, nullopt for `off`.
std::optional<uint32_t> HbmScrubWord(const config::RuntimeConfig& config);

class Core {
 public:
  static constexpr std::chrono::milliseconds kFlushInterval{200};

  Core(const device::LogicalCore& placement, std::unique_ptr<device::HbmArena> arena,
       device::SimDeviceTree* tree, const config::RuntimeConfig& config);
  ~Core();
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  int id() const { return placement_.id; }
  const device::LogicalCore& placement() const { return placement_; }
  device::HbmArena& arena() { return *arena_; }
  const device::HbmArena& arena() const { return *arena_; }
  const config::RuntimeConfig& config() const { return config_; }

  // Allocates device memory for `what` (named in errors). `host_access`:
  // the block's bytes will be read or written through its host address, so
  // never-used parts are scrubbed first; blocks only accounted for (e.g.
  // constants read in place from a mapped NEFF) are never touched. Out of
  // memory is NRT_RESOURCE, logged with the per-category report
  // (NEURON_RT_ENABLE_DEVICE_MEMORY_OOM_LOG, NEURON_RT_DBG_VERBOSE_DEV_MEM),
  // at most once per NEURON_RT_MIN_MEM_ERROR_INTERVAL.
  absl::StatusOr<device::HbmBlock> Allocate(uint64_t bytes, device::MemoryCategory category,
                                            std::string_view what, bool host_access,
                                            uint64_t alignment = device::kHbmGranule);
  void Free(const device::HbmBlock& block);

  // Per-category allocations, frees and bytes in use; all zero with
  // NEURON_RT_ENABLE_MEMORY_METRICS off.
  MemoryMetricsSnapshot memory_metrics() const { return metrics_.Snapshot(); }
  // OOM reports held back by NEURON_RT_MIN_MEM_ERROR_INTERVAL since the
  // last one printed.
  uint64_t suppressed_oom_reports() const { return oom_throttle_.suppressed(); }

  // Bytes of the arena scrubbed so far (for tests: scrubbing is lazy).
  uint64_t scrubbed_bytes() const;

  // Admission of NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS: at most that many
  // requests are in flight on the core. Blocks for a slot, or with
  // `nonblocking` fails with NRT_QUEUE_FULL.
  absl::Status Admit(bool nonblocking);
  void Release();
  int max_in_flight_seen() const { return max_in_flight_seen_.load(); }
  // The core runs one execution at a time, like the hardware's queue.
  std::mutex& exec_mutex() { return exec_mu_; }

  // Counters for the device tree.
  void CountExecution(NRT_STATUS status, uint64_t nanos_in_use);
  void CountLoad();
  // Writes pending counters and memory usage to the tree; unless forced,
  // only when kFlushInterval has passed since the last write.
  void Flush(bool force);

 private:
  void ScrubLocked(uint64_t offset, uint64_t size);
  void LogOom(const device::OomReport& report, std::string_view what);
  void CountMemory(device::MemoryCategory category, uint64_t bytes, bool alloc);

  const device::LogicalCore placement_;
  std::unique_ptr<device::HbmArena> arena_;
  device::SimDeviceTree* const tree_;
  const config::RuntimeConfig& config_;
  const std::optional<uint32_t> scrub_word_;
  const uint64_t max_queued_;
  MemoryMetrics metrics_;
  ReportThrottle oom_throttle_;

  mutable std::mutex scrub_mu_;
  std::map<uint64_t, uint64_t> scrubbed_;  // offset -> end, disjoint
  uint64_t scrubbed_bytes_ = 0;

  std::mutex admit_mu_;
  std::condition_variable admit_cv_;
  int in_flight_ = 0;
  std::atomic<int> max_in_flight_seen_{0};
  std::mutex exec_mu_;

  std::mutex counters_mu_;
  std::map<NRT_STATUS, uint64_t> pending_status_;
  uint64_t pending_inferences_ = 0;
  uint64_t pending_loads_ = 0;
  uint64_t pending_nanos_ = 0;
  bool memory_dirty_ = true;
  std::chrono::steady_clock::time_point last_flush_{};
};

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_CORE_H_
