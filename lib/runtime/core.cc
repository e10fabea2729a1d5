#include "lib/runtime/core.h"

#include <algorithm>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/log/log.h"
#include "lib/runtime/observe.h"
#include "lib/runtime/status.h"
#include "lib/support/parse.h"
#include "lib/support/atomic_file.h"

namespace neuron::runtime {
namespace {

using device::MemoryCategory;

// The real runtime's aggregates when NEURON_RT_DBG_VERBOSE_DEV_MEM is off:
// tensors, what the model holds, and what the runtime itself holds.
struct Aggregate {
  const char* name;
  std::vector<MemoryCategory> categories;
};
const std::vector<Aggregate>& Aggregates() {
  static const std::vector<Aggregate> kAggregates = {
      {"tensors", {MemoryCategory::kTensors}},
      {"model",
       {MemoryCategory::kConstants, MemoryCategory::kModelCode,
        MemoryCategory::kModelSharedScratchpad, MemoryCategory::kNonsharedScratchpad}},
      {"runtime",
       {MemoryCategory::kRuntimeMemory, MemoryCategory::kDriverMemory,
        MemoryCategory::kDmaRings, MemoryCategory::kNotifications,
        MemoryCategory::kCollectives, MemoryCategory::kUncategorized}},
  };
  return kAggregates;
}

}  // namespace

std::optional<uint32_t> HbmScrubWord(const config::RuntimeConfig& config) {
  switch (config.hbm_init) {
    case config::HbmInit::kOff:
      return std::nullopt;
    case config::HbmInit::kFp32Nan:
      return 0x7FC00000u;  // quiet NaN in every f32
    case config::HbmInit::kBf16Nan:
      return 0x7FC07FC0u;  // quiet NaN in every bf16
    case config::HbmInit::kPattern:
      return config.hbm_init_pattern;
  }
  return std::nullopt;
}

Core::Core(const device::LogicalCore& placement, std::unique_ptr<device::HbmArena> arena,
           device::SimDeviceTree* tree, const config::RuntimeConfig& config)
    : placement_(placement),
      arena_(std::move(arena)),
      tree_(tree),
      config_(config),
      scrub_word_(HbmScrubWord(config)),
      max_queued_(std::max<uint64_t>(1, config.xu_max_queued_requests)),
      oom_throttle_(config.min_mem_error_interval_s) {
  if (tree_ != nullptr) {
    for (int pc : placement_.PhysicalCores()) {
      (void)tree_->ResetPresentCounters(placement_.device, pc);
    }
  }
}

Core::~Core() {
  if (config_.enable_memory_metrics) {
    const MemoryMetricsSnapshot metrics = metrics_.Snapshot();
    if (std::any_of(metrics.begin(), metrics.end(), [](const auto& m) { return m.allocs > 0; })) {
      NEURON_LOG(NRT, kInfo, "nc%d device memory metrics: %s", id(), FormatMemoryMetrics(metrics));
    }
  }
  Flush(/*force=*/true);
}

absl::StatusOr<device::HbmBlock> Core::Allocate(uint64_t bytes, MemoryCategory category,
                                                std::string_view what, bool host_access,
                                                uint64_t alignment) {
  device::OomReport oom;
  absl::StatusOr<device::HbmBlock> block = arena_->Allocate(bytes, category, alignment, &oom);
  if (!block.ok()) {
    LogOom(oom, what);
    return RtError(NRT_RESOURCE,
                   absl::StrFormat("cannot allocate %s of device memory for %s on nc%d: %s",
                                   FormatBytes(bytes), std::string(what), id(),
                                   std::string(block.status().message())));
  }
  if (host_access) {
    std::lock_guard<std::mutex> lock(scrub_mu_);
    ScrubLocked(block->offset, block->size);
  }
  CountMemory(category, block->size, /*alloc=*/true);
  {
    std::lock_guard<std::mutex> lock(counters_mu_);
    memory_dirty_ = true;
  }
  return block;
}

void Core::Free(const device::HbmBlock& block) {
  if (arena_->Free(block.offset).ok()) CountMemory(block.category, block.size, /*alloc=*/false);
  std::lock_guard<std::mutex> lock(counters_mu_);
  memory_dirty_ = true;
}

// Fills the parts of [offset, offset+size) that were never handed out
// before. Parts handed out before keep their stale bytes, as real HBM does
// after the init-time scrub. A zero word needs no writes: never-touched
// pages of the arena's anonymous mapping read as zero, and writing them
// would commit them (slow first touch).
void Core::ScrubLocked(uint64_t offset, uint64_t size) {
  const uint64_t end = offset + size;
  uint64_t pos = offset;
  auto fill = [&](uint64_t from, uint64_t to) {
    if (from >= to) return;
    if (scrub_word_.has_value() && *scrub_word_ != 0) {
      char* host = static_cast<char*>(arena_->HostAddress(from));
      if (host != nullptr) {
        const uint32_t word = *scrub_word_;
        // Offsets are 64-byte granular, so whole words from an aligned start.
        uint32_t* words = reinterpret_cast<uint32_t*>(host);
        std::fill(words, words + (to - from) / 4, word);
      }
    }
    scrubbed_bytes_ += to - from;
  };
  auto it = scrubbed_.upper_bound(pos);
  if (it != scrubbed_.begin()) {
    auto prev = std::prev(it);
    if (prev->second > pos) pos = std::min(end, prev->second);
  }
  while (pos < end) {
    uint64_t next_start = (it == scrubbed_.end()) ? end : std::min(end, it->first);
    fill(pos, next_start);
    pos = next_start;
    if (it != scrubbed_.end() && it->first < end) {
      pos = std::max(pos, std::min(end, it->second));
      ++it;
    }
  }
  // Merge [offset, end) into the interval set.
  uint64_t lo = offset, hi = end;
  auto first = scrubbed_.upper_bound(lo);
  if (first != scrubbed_.begin() && std::prev(first)->second >= lo) --first;
  auto last = first;
  while (last != scrubbed_.end() && last->first <= hi) {
    lo = std::min(lo, last->first);
    hi = std::max(hi, last->second);
    ++last;
  }
  scrubbed_.erase(first, last);
  scrubbed_[lo] = hi;
}

uint64_t Core::scrubbed_bytes() const {
  std::lock_guard<std::mutex> lock(scrub_mu_);
  return scrubbed_bytes_;
}

// NEURON_RT_ENABLE_MEMORY_METRICS: one metric per allocation and free.
void Core::CountMemory(MemoryCategory category, uint64_t bytes, bool alloc) {
  if (!config_.enable_memory_metrics) return;
  const CategoryMetrics m = metrics_.Record(category, bytes, alloc);
  ObserveMemoryMetric(id(), category, bytes, alloc, m);
}

void Core::LogOom(const device::OomReport& report, std::string_view what) {
  // A program retrying a failing allocation must not flood the logs: one
  // report per NEURON_RT_MIN_MEM_ERROR_INTERVAL, the held-back ones counted.
  uint64_t suppressed = 0;
  if (!oom_throttle_.Admit(ReportThrottle::Clock::now(), &suppressed)) return;
  const std::string held_back =
      suppressed == 0 ? ""
                      : absl::StrFormat(" (%d earlier report%s suppressed by "
                                        "NEURON_RT_MIN_MEM_ERROR_INTERVAL=%d)",
                                        suppressed, suppressed == 1 ? "" : "s",
                                        oom_throttle_.interval_s());
  NEURON_LOG(NRT, kError, "Failed to allocate %s (%s) for %s on nc%d: out of device memory%s",
             FormatBytes(report.requested), device::MemoryCategoryName(report.category),
             std::string(what), id(), held_back);
  if (!config_.enable_device_memory_oom_log) return;
  NEURON_LOG(NRT, kError, "Device memory report: %s", report.Summary());
  if (config_.dbg_verbose_dev_mem) {
    for (MemoryCategory c : device::AllMemoryCategories()) {
      const device::MemoryUsage& u = report.usage[static_cast<int>(c)];
      NEURON_LOG(NRT, kError, "  %-24s %12s in use, peak %s", device::MemoryCategoryName(c),
                 FormatBytes(u.total), FormatBytes(u.peak));
    }
  } else {
    for (const Aggregate& a : Aggregates()) {
      uint64_t total = 0;
      for (MemoryCategory c : a.categories) total += report.usage[static_cast<int>(c)].total;
      NEURON_LOG(NRT, kError, "  %-8s %12s in use", a.name, FormatBytes(total));
    }
    NEURON_LOG(NRT, kError,
               "  (set NEURON_RT_DBG_VERBOSE_DEV_MEM=1 for every memory category)");
  }
  // The per-category table as a CSV file, like the real runtime's
  // nrt_mem_log_device_<N>_<id>.csv.
  const std::string path =
      absl::StrFormat("%s/nrt_mem_log_device_%d_nc%d.csv", config_.oom_dump_directory,
                      placement_.device, id());
  std::string csv = "category,in_use_bytes,peak_bytes\n";
  for (MemoryCategory c : device::AllMemoryCategories()) {
    const device::MemoryUsage& u = report.usage[static_cast<int>(c)];
    absl::StrAppend(&csv, device::MemoryCategoryName(c), ",", u.total, ",", u.peak, "\n");
  }
  if (absl::Status s = WriteFileAtomically(path, csv); s.ok()) {
    NEURON_LOG(NRT, kError, "Wrote nrt memory alloc debug info to %s", path);
  } else {
    NEURON_LOG(NRT, kError, "%s", s.message());
  }
}

absl::Status Core::Admit(bool nonblocking) {
  std::unique_lock<std::mutex> lock(admit_mu_);
  if (static_cast<uint64_t>(in_flight_) >= max_queued_) {
    if (nonblocking) {
      return RtError(NRT_QUEUE_FULL,
                     absl::StrFormat("nc%d already has %d requests in flight "
                                     "(NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS=%d)",
                                     id(), in_flight_, max_queued_));
    }
    admit_cv_.wait(lock, [&] { return static_cast<uint64_t>(in_flight_) < max_queued_; });
  }
  ++in_flight_;
  int seen = max_in_flight_seen_.load();
  while (in_flight_ > seen && !max_in_flight_seen_.compare_exchange_weak(seen, in_flight_)) {
  }
  return absl::OkStatus();
}

void Core::Release() {
  {
    std::lock_guard<std::mutex> lock(admit_mu_);
    --in_flight_;
  }
  admit_cv_.notify_one();
}

void Core::CountExecution(NRT_STATUS status, uint64_t nanos_in_use) {
  {
    std::lock_guard<std::mutex> lock(counters_mu_);
    ++pending_status_[status];
    ++pending_inferences_;
    pending_nanos_ += nanos_in_use;
  }
  Flush(/*force=*/false);
}

void Core::CountLoad() {
  {
    std::lock_guard<std::mutex> lock(counters_mu_);
    ++pending_loads_;
  }
  Flush(/*force=*/true);
}

void Core::Flush(bool force) {
  const auto now = std::chrono::steady_clock::now();
  std::map<NRT_STATUS, uint64_t> statuses;
  uint64_t inferences, loads, nanos;
  bool memory;
  {
    std::lock_guard<std::mutex> lock(counters_mu_);
    if (!force && now - last_flush_ < kFlushInterval) return;
    last_flush_ = now;
    statuses.swap(pending_status_);
    inferences = pending_inferences_;
    loads = pending_loads_;
    nanos = pending_nanos_;
    memory = memory_dirty_;
    pending_inferences_ = pending_loads_ = 0;
    pending_nanos_ = nanos % 1000;  // carried to the next flush
    memory_dirty_ = false;
  }
  if (tree_ == nullptr) return;
  // Counters go to the first physical core of the logical core, where
  // neuron-ls and the driver's per-core files expect a logical core's data.
  const int dev = placement_.device, pc = placement_.first_physical;
  for (const auto& [status, n] : statuses) (void)tree_->CountStatus(dev, pc, status, n);
  if (inferences) {
    (void)tree_->AddOtherInfo(dev, pc, device::OtherInfo::kInferenceCount, inferences);
  }
  if (loads) (void)tree_->AddOtherInfo(dev, pc, device::OtherInfo::kModelLoadCount, loads);
  if (nanos >= 1000) {
    // nc_time_in_use is in microseconds; sub-microsecond rest is dropped.
    (void)tree_->AddOtherInfo(dev, pc, device::OtherInfo::kNcTimeInUse, nanos / 1000);
  }
  if (memory) (void)tree_->SetMemoryUsage(dev, pc, arena_->Usage());
}

}  // namespace neuron::runtime
