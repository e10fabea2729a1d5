#include "tools/neuron-exec/latency_stats.h"

#include <algorithm>
#include <cmath>

namespace neuron::exec_tool {

LatencyStats ComputeLatencyStats(std::vector<uint64_t> samples_ns, uint64_t wall_ns) {
  LatencyStats s;
  if (samples_ns.empty()) return s;
  std::sort(samples_ns.begin(), samples_ns.end());
  const size_t n = samples_ns.size();
  auto rank = [&](double p) {
    // Nearest-rank percentile: the smallest sample with at least p% at or below it.
    size_t k = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
    return samples_ns[std::min(n - 1, k == 0 ? 0 : k - 1)] / 1000.0;
  };
  uint64_t sum = 0;
  for (uint64_t v : samples_ns) sum += v;
  s.count = static_cast<int64_t>(n);
  s.min_us = samples_ns.front() / 1000.0;
  s.max_us = samples_ns.back() / 1000.0;
  s.p50_us = rank(50);
  s.p90_us = rank(90);
  s.p99_us = rank(99);
  s.mean_us = static_cast<double>(sum) / n / 1000.0;
  const uint64_t wall = wall_ns ? wall_ns : sum;
  s.throughput = wall ? static_cast<double>(n) * 1e9 / static_cast<double>(wall) : 0;
  return s;
}

}  // namespace neuron::exec_tool
