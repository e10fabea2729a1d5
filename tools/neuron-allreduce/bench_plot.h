// neuron-allreduce --plot: bus bandwidth and time against message size for
// this run, with the reports given to --plot-compare drawn beside it
// (bandwidth_plot.h), written whole or not at all.
#ifndef NEURON_TOOLS_NEURON_ALLREDUCE_BENCH_PLOT_H_
#define NEURON_TOOLS_NEURON_ALLREDUCE_BENCH_PLOT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/neuron-allreduce/bench_report.h"

namespace neuron::collectives {

// The legend's name of one series: "allr fp32 sum, 2 ranks" (the reduction
// only for the reducing collectives, hosts when more than one).
std::string BenchSeriesLabel(const BenchReport& report, const std::string& type);

// Draws `run` (labelled "this run") and the compared reports (labelled by
// their paths, dashed) into the SVG file `path`: one line per collective,
// data type and reduction. Errors name the file.
absl::Status WriteBenchPlot(const std::string& path, const BenchReport& run,
                            const std::vector<ComparedReport>& compared);

}  // namespace neuron::collectives

#endif  // NEURON_TOOLS_NEURON_ALLREDUCE_BENCH_PLOT_H_
