// neuron-exec --plot: the benchmark's latencies as a picture (one CDF per
// core, p50/p90/p99 marked; tools/neuron-exec/latency_cdf.h), written whole or not
// at all.
#ifndef NEURON_TOOLS_NEURON_EXEC_LATENCY_PLOT_H_
#define NEURON_TOOLS_NEURON_EXEC_LATENCY_PLOT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/neuron-exec/latency_stats.h"

namespace neuron::exec_tool {

struct CoreLatencies {
  int core = 0;
  const std::vector<uint64_t>* samples_ns = nullptr;
  LatencyStats stats;  // as reported, so the marks match the text
};

// Draws the cores' latencies under `title` into the SVG file `path`.
// Errors name the file.
absl::Status WriteLatencyPlot(const std::string& path, const std::string& title,
                              const std::vector<CoreLatencies>& cores);

}  // namespace neuron::exec_tool

#endif  // NEURON_TOOLS_NEURON_EXEC_LATENCY_PLOT_H_
