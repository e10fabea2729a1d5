#include "lib/runtime/memory_metrics.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/support/parse.h"

namespace neuron::runtime {
namespace {

std::string Count(uint64_t n, const char* what) {
  return absl::StrFormat("%d %s%s", n, what, n == 1 ? "" : "s");
}

}  // namespace

CategoryMetrics MemoryMetrics::Record(device::MemoryCategory category, uint64_t bytes,
                                      bool alloc) {
  std::lock_guard<std::mutex> lock(mu_);
  CategoryMetrics& m = metrics_[static_cast<int>(category)];
  if (alloc) {
    m.in_use += bytes;
    m.peak = std::max(m.peak, m.in_use);
    ++m.allocs;
  } else {
    m.in_use -= std::min(m.in_use, bytes);
    ++m.frees;
  }
  return m;
}

MemoryMetricsSnapshot MemoryMetrics::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return metrics_;
}

std::string FormatMemoryMetrics(const MemoryMetricsSnapshot& metrics) {
  uint64_t allocs = 0, frees = 0;
  std::string categories;
  for (device::MemoryCategory c : device::AllMemoryCategories()) {
    const CategoryMetrics& m = metrics[static_cast<int>(c)];
    allocs += m.allocs;
    frees += m.frees;
    if (m.allocs == 0) continue;
    absl::StrAppend(&categories, categories.empty() ? "; " : ", ",
                    absl::StrFormat("%s %s in use, peak %s (%s, %s)",
                                    device::MemoryCategoryName(c), FormatBytes(m.in_use),
                                    FormatBytes(m.peak), Count(m.allocs, "alloc"),
                                    Count(m.frees, "free")));
  }
  return absl::StrCat(Count(allocs, "alloc"), ", ", Count(frees, "free"), categories);
}

}  // namespace neuron::runtime
