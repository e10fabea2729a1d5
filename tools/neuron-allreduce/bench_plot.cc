#include "tools/neuron-allreduce/bench_plot.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/plot/svg_render.h"
#include "tools/neuron-allreduce/bandwidth_plot.h"

namespace neuron::collectives {
namespace {

// A report's rows split by data type (a report of this tool has one type,
// but every row names its own), in the order they first appear.
void AddSeries(const BenchReport& report, const std::string& source, bool compared,
               std::vector<plot::BandwidthSeries>* out) {
  std::vector<std::string> types;
  for (const BenchReportRow& row : report.rows) {
    if (std::find(types.begin(), types.end(), row.type) == types.end()) types.push_back(row.type);
  }
  for (const std::string& type : types) {
    plot::BandwidthSeries s;
    s.label = absl::StrCat(source, ": ", BenchSeriesLabel(report, type));
    s.compared = compared;
    for (const BenchReportRow& row : report.rows) {
      if (row.type != type) continue;
      s.points.push_back({static_cast<double>(row.size), row.busbw_gbs, row.avg_us});
    }
    out->push_back(std::move(s));
  }
}

}  // namespace

std::string BenchSeriesLabel(const BenchReport& report, const std::string& type) {
  std::string label = absl::StrCat(report.op, " ", type);
  if ((report.op == "allr" || report.op == "redsct") && !report.reduction.empty()) {
    absl::StrAppend(&label, " ", report.reduction);
  }
  if (report.nranks > 0) {
    absl::StrAppend(&label, ", ", report.nranks, report.nranks == 1 ? " rank" : " ranks");
  }
  if (report.nnodes > 1) absl::StrAppend(&label, " on ", report.nnodes, " hosts");
  return label;
}

absl::Status WriteBenchPlot(const std::string& path, const BenchReport& run,
                            const std::vector<ComparedReport>& compared) {
  std::vector<plot::BandwidthSeries> series;
  AddSeries(run, "this run", false, &series);
  for (const ComparedReport& c : compared) AddSeries(c.report, c.path, true, &series);
  std::string title = absl::StrCat("neuron-allreduce ", run.op, ": ", run.nranks,
                                   run.nranks == 1 ? " rank" : " ranks", " on ", run.nnodes,
                                   run.nnodes == 1 ? " host" : " hosts");
  if (run.nnodes > 1 && !run.transport.empty()) absl::StrAppend(&title, " over ", run.transport);
  const plot::Drawer drawer{"neuron-allreduce", absl::StrCat("--plot '", path, "'")};
  absl::StatusOr<std::string> svg = plot::RenderBandwidthSvg(drawer, title, series);
  if (!svg.ok()) return svg.status();
  return plot::WriteSvg(path, *svg);
}

}  // namespace neuron::collectives
