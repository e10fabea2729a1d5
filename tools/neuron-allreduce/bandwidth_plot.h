// The picture of a collectives sweep (neuron-allreduce --plot): bus
// bandwidth and time per iteration against message size, both on log
// axes, one line per series, compared runs dashed.
#ifndef NEURON_TOOLS_NEURON_ALLREDUCE_BANDWIDTH_PLOT_H_
#define NEURON_TOOLS_NEURON_ALLREDUCE_BANDWIDTH_PLOT_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/plot/svg_render.h"

namespace neuron::plot {

struct BandwidthPoint {
  double bytes = 0;
  double busbw_gbs = 0;  // GB/s as the table's (2^30 bytes/s)
  double time_us = 0;
};

struct BandwidthSeries {
  std::string label;      // shown in the legend
  bool compared = false;  // an earlier run, drawn dashed
  std::vector<BandwidthPoint> points;
};

// The SVG document (errors as RenderSvg's, svg_render.h).
absl::StatusOr<std::string> RenderBandwidthSvg(const Drawer& drawer, std::string_view title,
                                               const std::vector<BandwidthSeries>& series);

}  // namespace neuron::plot

#endif  // NEURON_TOOLS_NEURON_ALLREDUCE_BANDWIDTH_PLOT_H_
