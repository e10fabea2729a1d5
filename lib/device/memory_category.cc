#include "lib/device/memory_category.h"

namespace neuron::device {
namespace {

constexpr const char* kNames[kNumMemoryCategories] = {
    "collectives",   "constants",      "dma_rings",
    "driver_memory", "model_code",     "model_shared_scratchpad",
    "nonshared_scratchpad", "notifications", "runtime_memory",
    "tensors",       "uncategorized",
};

}  // namespace

const char* MemoryCategoryName(MemoryCategory category) {
  int i = static_cast<int>(category);
  return i >= 0 && i < kNumMemoryCategories ? kNames[i] : "uncategorized";
}

std::optional<MemoryCategory> ParseMemoryCategory(std::string_view name) {
  for (int i = 0; i < kNumMemoryCategories; ++i) {
    if (name == kNames[i]) return static_cast<MemoryCategory>(i);
  }
  return std::nullopt;
}

const std::array<MemoryCategory, kNumMemoryCategories>& AllMemoryCategories() {
  static const std::array<MemoryCategory, kNumMemoryCategories> all = [] {
    std::array<MemoryCategory, kNumMemoryCategories> a{};
    for (int i = 0; i < kNumMemoryCategories; ++i) a[i] = static_cast<MemoryCategory>(i);
    return a;
  }();
  return all;
}

}  // namespace neuron::device
