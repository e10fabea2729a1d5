// The picture of a benchmark's latencies (neuron-exec --plot): one
// empirical CDF per series (a core) with its p50, p90 and p99 marked.
// A CDF rather than a histogram: it needs no bin width, several cores
// overlay without hiding each other, and a percentile is read off where
// the curve crosses its level.
#ifndef NEURON_LIB_PLOT_LATENCY_PLOT_H_
#define NEURON_LIB_PLOT_LATENCY_PLOT_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

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

// The x axis is logarithmic when the slowest sample is more than
// kLogAxisSpread times the fastest, so a long tail does not squeeze the
// bulk of the curve into one pixel column.
constexpr double kLogAxisSpread = 20;

absl::StatusOr<std::string> RenderLatencySvg(std::string_view tool, std::string_view title,
                                             const std::vector<LatencySeries>& series);

}  // namespace neuron::plot

#endif  // NEURON_LIB_PLOT_LATENCY_PLOT_H_
