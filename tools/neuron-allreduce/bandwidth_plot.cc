#include "tools/neuron-allreduce/bandwidth_plot.h"

#include <algorithm>

#include "lib/plot/axes.h"
#include "lib/plot/plplot_library.h"
#include "lib/plot/svg_render.h"

namespace neuron::plot {

absl::StatusOr<std::string> RenderBandwidthSvg(const Drawer& drawer, std::string_view title,
                                               const std::vector<BandwidthSeries>& series) {
  std::vector<double> sizes, busbw, times;
  for (const BandwidthSeries& s : series) {
    for (const BandwidthPoint& p : s.points) {
      sizes.push_back(p.bytes);
      busbw.push_back(p.busbw_gbs);
      times.push_back(p.time_us);
    }
  }
  const Axis x = ByteAxisFor(sizes);
  const Axis y_bw = LogAxisFor(busbw);
  const Axis y_time = LogAxisFor(times);
  auto draw = [&] {
    DrawPageTitle(title);
    // Two panels sharing the size axis, bandwidth above time, and the
    // legend below both.
    const double legend_h = LegendHeight(series.size());
    const double low = legend_h + 0.10, high = 0.88, gap = 0.11;
    const double h = (high - low - gap) / 2;
    const Panel top{0.13, 0.94, high - h, high};
    const Panel bottom{0.13, 0.94, low, low + h};
    // Every series' `field` against size on the panel whose axis is y.
    auto draw_series = [&](const Axis& y, double BandwidthPoint::*field) {
      for (size_t k = 0; k < series.size(); ++k) {
        std::vector<double> xs, ys;
        for (const BandwidthPoint& p : series[k].points) {
          xs.push_back(p.bytes);
          ys.push_back(p.*field);
        }
        DrawSeries(x, y, xs, ys, StyleFor(static_cast<int>(k), series[k].compared), true, true);
      }
    };
    std::vector<LegendEntry> legend;
    for (size_t k = 0; k < series.size(); ++k) {
      legend.push_back({series[k].label, StyleFor(static_cast<int>(k), series[k].compared)});
    }
    DrawPanel(top, x, y_bw, "", "busbw (GB/s)",
              "bus bandwidth, GB = 2^30 bytes (higher is better)");
    draw_series(y_bw, &BandwidthPoint::busbw_gbs);
    if (!std::any_of(busbw.begin(), busbw.end(), [](double v) { return v > 0; })) {
      // One rank (or point-to-point to itself) moves nothing over the bus.
      Pl().plptex(x.Map(x.lo) + (x.Map(x.hi) - x.Map(x.lo)) / 2, y_bw.Map(y_bw.lo) + 0.5, 0, 0,
                  0.5, "no bus traffic to show: busbw is 0");
    }
    DrawPanel(bottom, x, y_time, "message size", "time per iteration (us)",
              "time (lower is better)");
    draw_series(y_time, &BandwidthPoint::time_us);
    DrawLegend(legend, Panel{0.05, 0.96, 0.005, legend_h});
  };
  return RenderSvg(drawer, PageSize{}, draw);
}

}  // namespace neuron::plot
