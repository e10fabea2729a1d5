// Device-memory categories, named as the driver's sysfs names them under
// neuron_coreK/stats/memory_usage/device_mem/. The runtime tags every HBM
// allocation with one, so usage and OOM reports break down the same way.
#ifndef NEURON_LIB_DEVICE_MEMORY_CATEGORY_H_
#define NEURON_LIB_DEVICE_MEMORY_CATEGORY_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace neuron::device {

enum class MemoryCategory : int {
  kCollectives,
  kConstants,
  kDmaRings,
  kDriverMemory,
  kModelCode,
  kModelSharedScratchpad,
  kNonsharedScratchpad,
  kNotifications,
  kRuntimeMemory,
  kTensors,
  kUncategorized,
};
inline constexpr int kNumMemoryCategories = 11;

// "collectives", "model_shared_scratchpad", ...
const char* MemoryCategoryName(MemoryCategory category);
std::optional<MemoryCategory> ParseMemoryCategory(std::string_view name);
// Every category in sysfs order.
const std::array<MemoryCategory, kNumMemoryCategories>& AllMemoryCategories();

// One sysfs memory counter: total = bytes in use now, present = size of the
// last allocation or release, peak = the most ever in use.
struct MemoryUsage {
  uint64_t total = 0;
  uint64_t present = 0;
  uint64_t peak = 0;
};
using MemoryBreakdown = std::array<MemoryUsage, kNumMemoryCategories>;

}  // namespace neuron::device

#endif  // NEURON_LIB_DEVICE_MEMORY_CATEGORY_H_
