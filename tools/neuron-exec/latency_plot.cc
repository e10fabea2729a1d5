#include "tools/neuron-exec/latency_plot.h"

#include "absl/strings/str_cat.h"
#include "tools/neuron-exec/latency_cdf.h"
#include "lib/plot/svg_render.h"

namespace neuron::exec_tool {

absl::Status WriteLatencyPlot(const std::string& path, const std::string& title,
                              const std::vector<CoreLatencies>& cores) {
  std::vector<plot::LatencySeries> series;
  for (const CoreLatencies& c : cores) {
    plot::LatencySeries s;
    s.label = absl::StrCat("nc", c.core);
    s.samples_us.reserve(c.samples_ns->size());
    for (uint64_t ns : *c.samples_ns) s.samples_us.push_back(static_cast<double>(ns) / 1000.0);
    s.p50_us = c.stats.p50_us;
    s.p90_us = c.stats.p90_us;
    s.p99_us = c.stats.p99_us;
    series.push_back(std::move(s));
  }
  const plot::Drawer drawer{"neuron-exec", absl::StrCat("--plot '", path, "'")};
  absl::StatusOr<std::string> svg = plot::RenderLatencySvg(drawer, title, series);
  if (!svg.ok()) return svg.status();
  return plot::WriteSvg(path, *svg);
}

}  // namespace neuron::exec_tool
