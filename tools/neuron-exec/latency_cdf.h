// The picture of a benchmark's latencies (neuron-exec --plot): one
// empirical CDF per series (a core) with its p50, p90 and p99 marked.
// A CDF rather than a histogram: it needs no bin width, several cores
// overlay without hiding each other, and a percentile is read off where
// the curve crosses its level.
#ifndef NEURON_TOOLS_NEURON_EXEC_LATENCY_CDF_H_
#define NEURON_TOOLS_NEURON_EXEC_LATENCY_CDF_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/plot/svg_render.h"

namespace neuron::plot {

struct LatencySeries {
  std::string label;  // "nc0"
  std::vector<double> samples_us;
  // The percentiles as the tool reports them (so the marks match its text).
  double p50_us = 0, p90_us = 0, p99_us = 0;
};

// At most this many points per curve: a million iterations still make a
// small file (the curve is sampled at evenly spaced fractions).
constexpr size_t kMaxCdfPoints = 2000;

// The latency axis runs from the fastest sample to the highest p99 plus
// half the span between them; slower samples (a preempted execution can be
// ten times the rest) run off the right edge, and the subtitle says how
// many and up to what, rather than squeezing the curves into a few pixels.
// The axis is logarithmic when that p99 is more than kLogAxisSpread times
// the fastest sample.
constexpr double kLogAxisSpread = 10;

// The SVG document (errors as RenderSvg's, svg_render.h).
absl::StatusOr<std::string> RenderLatencySvg(const Drawer& drawer, std::string_view title,
                                             const std::vector<LatencySeries>& series);

}  // namespace neuron::plot

#endif  // NEURON_TOOLS_NEURON_EXEC_LATENCY_CDF_H_
