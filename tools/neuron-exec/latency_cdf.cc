#include "tools/neuron-exec/latency_cdf.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "lib/plot/axes.h"
#include "lib/plot/colors.h"
#include "lib/plot/plplot_library.h"
#include "lib/plot/svg_render.h"

namespace neuron::plot {
namespace {

constexpr double kLevels[] = {0.50, 0.90, 0.99};
constexpr const char* kLevelNames[] = {"p50", "p90", "p99"};

// The empirical CDF as a staircase: (latency, fraction at or below it).
void CdfPoints(std::vector<double> samples, std::vector<double>* xs, std::vector<double>* ys) {
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  if (n == 0) return;
  const size_t steps = std::min(n, kMaxCdfPoints);
  double prev = 0;
  for (size_t k = 1; k <= steps; ++k) {
    const double fraction = static_cast<double>(k) / static_cast<double>(steps);
    const size_t i = std::min(
        n - 1, static_cast<size_t>(std::ceil(fraction * static_cast<double>(n))) - 1);
    xs->push_back(samples[i]);
    ys->push_back(prev);
    xs->push_back(samples[i]);
    ys->push_back(fraction);
    prev = fraction;
  }
}

std::string Us(double v) { return absl::StrFormat("%.4g", v); }

}  // namespace

absl::StatusOr<std::string> RenderLatencySvg(const Drawer& drawer, std::string_view title,
                                             const std::vector<LatencySeries>& series) {
  std::vector<double> all;
  for (const LatencySeries& s : series) all.insert(all.end(), s.samples_us.begin(), s.samples_us.end());
  double fastest = HUGE_VAL, slowest = 0, highest_p99 = 0;
  for (double v : all) {
    fastest = std::min(fastest, v);
    slowest = std::max(slowest, v);
  }
  for (const LatencySeries& s : series) highest_p99 = std::max(highest_p99, s.p99_us);
  if (all.empty()) fastest = 0;
  const double edge = std::max(highest_p99 + (highest_p99 - fastest) / 2, fastest);
  const double right = std::min(slowest, edge);
  size_t beyond = 0;
  for (double v : all) beyond += v > right;
  const bool log_x = fastest > 0 && highest_p99 > kLogAxisSpread * fastest;
  Axis x = log_x ? TightLogAxisFor({fastest, right}) : LinearAxisFor({fastest, right});
  if (!log_x && x.lo < 0) x.lo = 0;
  std::string subtitle = log_x ? "latency CDF, log scale" : "latency CDF";
  if (beyond > 0) {
    absl::StrAppendFormat(&subtitle, "; %d slower (up to %s us) off the right edge", beyond,
                          Us(slowest));
  }
  const Axis y{0, 1, false, Ticks::kPlplot};
  auto draw = [&] {
    DrawPageTitle(title);
    const double legend_h = LegendHeight(series.size());
    const Panel panel{0.10, 0.90, legend_h + 0.10, 0.86};
    DrawPanel(panel, x, y, "latency per execution (us)", "fraction of executions at or below",
              subtitle);
    // Guides at the three levels, named in the right margin.
    for (size_t l = 0; l < 3; ++l) {
      Pl().plcol0(kGuide);
      Pl().pllsty(2);
      Pl().pljoin(x.Map(x.lo), kLevels[l], x.Map(x.hi), kLevels[l]);
      Pl().pllsty(1);
      Pl().plcol0(kInk);
      Pl().plmtex("rv", 0.8, kLevels[l], 0.0, kLevelNames[l]);
    }
    std::vector<LegendEntry> legend;
    for (size_t k = 0; k < series.size(); ++k) {
      const LatencySeries& s = series[k];
      const SeriesStyle style = StyleFor(static_cast<int>(k), false);
      std::vector<double> xs, ys;
      CdfPoints(s.samples_us, &xs, &ys);
      DrawSeries(x, y, xs, ys, style, true, false);
      // The percentiles: a marker where the curve reaches each level.
      const std::vector<double> px = {s.p50_us, s.p90_us, s.p99_us};
      const std::vector<double> py(std::begin(kLevels), std::end(kLevels));
      DrawSeries(x, y, px, py, style, false, true);
      legend.push_back({absl::StrFormat("%s: p50 %s us, p90 %s us, p99 %s us (%d run%s)",
                                        s.label, Us(s.p50_us), Us(s.p90_us), Us(s.p99_us),
                                        s.samples_us.size(), s.samples_us.size() == 1 ? "" : "s"),
                        style});
    }
    DrawLegend(legend, Panel{0.05, 0.96, 0.005, legend_h});
  };
  return RenderSvg(drawer, PageSize{}, draw);
}

}  // namespace neuron::plot
