// Benchmark statistics of neuron-exec --iterations: latency percentiles
// (nearest rank) and throughput.
#ifndef NEURON_TOOLS_NEURON_EXEC_LATENCY_STATS_H_
#define NEURON_TOOLS_NEURON_EXEC_LATENCY_STATS_H_

#include <cstdint>
#include <vector>

namespace neuron::exec_tool {

struct LatencyStats {
  int64_t count = 0;
  double min_us = 0, p50_us = 0, p90_us = 0, p99_us = 0, max_us = 0, mean_us = 0;
  double throughput = 0;  // inferences per second over the wall time given
};

// `samples_ns`: one latency per execution. `wall_ns`: the time the whole
// measured loop took (0: use the sum of the samples).
LatencyStats ComputeLatencyStats(std::vector<uint64_t> samples_ns, uint64_t wall_ns);

}  // namespace neuron::exec_tool

#endif  // NEURON_TOOLS_NEURON_EXEC_LATENCY_STATS_H_
