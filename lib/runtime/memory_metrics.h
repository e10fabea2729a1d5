// Device-memory metrics of one NeuronCore (NEURON_RT_ENABLE_MEMORY_METRICS):
// every allocation and free of its HBM arena is counted per memory category
// (bytes in use, allocations, frees). The core records them; neuron-load
// prints them, the core logs them at INFO when it closes, and each one is
// also a "memory_metric" event of the system trace (observe.h), which an
// inspect session's system profile draws as counter tracks.
#ifndef NEURON_LIB_RUNTIME_MEMORY_METRICS_H_
#define NEURON_LIB_RUNTIME_MEMORY_METRICS_H_

#include <array>
#include <cstdint>
#include <mutex>
#include <string>

#include "lib/device/memory_category.h"

namespace neuron::runtime {

struct CategoryMetrics {
  uint64_t in_use = 0;  // bytes
  uint64_t peak = 0;    // the most bytes ever in use
  uint64_t allocs = 0;
  uint64_t frees = 0;
};
using MemoryMetricsSnapshot = std::array<CategoryMetrics, device::kNumMemoryCategories>;

class MemoryMetrics {
 public:
  // Counts one allocation (`alloc`) or free of `bytes`; returns the
  // category's counters after it.
  CategoryMetrics Record(device::MemoryCategory category, uint64_t bytes, bool alloc);
  MemoryMetricsSnapshot Snapshot() const;

 private:
  mutable std::mutex mu_;
  MemoryMetricsSnapshot metrics_{};  // guarded by mu_
};

// Totals and the categories that saw any allocation, e.g.
// "3 allocs, 1 free; constants 64 B in use, peak 64 B (1 alloc, 0 frees), ..."
std::string FormatMemoryMetrics(const MemoryMetricsSnapshot& metrics);

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_MEMORY_METRICS_H_
