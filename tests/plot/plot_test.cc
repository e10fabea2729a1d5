// The pictures as documents: a whole SVG, the series and marks named in its
// text, bounded size, PLplot's complaints turned into errors, atomic files.
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tools/neuron-exec/latency_cdf.h"
#include "lib/plot/plplot_library.h"
#include "lib/plot/svg_render.h"
#include "tests/support/svg_text.h"
#include "tests/support/tool_runner.h"
#include "tools/neuron-allreduce/bandwidth_plot.h"

namespace neuron::plot {
namespace {

using ::neuron::testing::IsWholeSvg;
using ::neuron::testing::SvgVisibleText;

const Drawer kDrawer{"plot_tests", "test.svg"};

std::vector<BandwidthPoint> Sweep(double scale) {
  std::vector<BandwidthPoint> points;
  for (double bytes = 1024; bytes <= (64 << 20); bytes *= 4) {
    const double time_us = 5 + bytes / (scale * 1000.0);
    points.push_back({bytes, bytes / 1073741824.0 / (time_us * 1e-6), time_us});
  }
  return points;
}

LatencySeries Core(const std::string& label, double base, size_t n) {
  LatencySeries s;
  s.label = label;
  for (size_t i = 0; i < n; ++i) s.samples_us.push_back(base + static_cast<double>(i % 97) * 0.1);
  s.p50_us = base + 4.8;
  s.p90_us = base + 8.7;
  s.p99_us = base + 9.6;
  return s;
}

TEST(BandwidthPlot, NamesEverySeriesAndBothPanels) {
  auto svg = RenderBandwidthSvg(kDrawer, "allr sweep",
                                {{"this run: allr fp32 sum", false, Sweep(4)},
                                 {"before.json: allr fp32 sum", true, Sweep(2)}});
  ASSERT_TRUE(svg.ok()) << svg.status();
  EXPECT_TRUE(IsWholeSvg(*svg));
  const std::string text = SvgVisibleText(*svg);
  EXPECT_NE(text.find("this run: allr fp32 sum"), std::string::npos) << text;
  EXPECT_NE(text.find("before.json: allr fp32 sum"), std::string::npos);
  EXPECT_NE(text.find("allr sweep"), std::string::npos);
  EXPECT_NE(text.find("busbw (GB/s)"), std::string::npos);
  EXPECT_NE(text.find("time per iteration (us)"), std::string::npos);
  EXPECT_NE(text.find("1 MiB"), std::string::npos) << "byte ticks";
}

TEST(BandwidthPlot, ZeroBandwidthStillDraws) {
  // One rank moves no bytes over the bus: the busbw panel is empty.
  std::vector<BandwidthPoint> points = {{1024, 0, 3}, {4096, 0, 4}};
  auto svg = RenderBandwidthSvg(kDrawer, "one rank", {{"solo", false, points}});
  ASSERT_TRUE(svg.ok()) << svg.status();
  EXPECT_TRUE(IsWholeSvg(*svg));
  EXPECT_NE(SvgVisibleText(*svg).find("solo"), std::string::npos);
  EXPECT_NE(SvgVisibleText(*svg).find("no bus traffic"), std::string::npos);
}

TEST(LatencyPlot, MarksThePercentilesOfEachCore) {
  auto svg = RenderLatencySvg(kDrawer, "mlp on 2 cores",
                              {Core("nc0", 40, 200), Core("nc1", 50, 200)});
  ASSERT_TRUE(svg.ok()) << svg.status();
  EXPECT_TRUE(IsWholeSvg(*svg));
  const std::string text = SvgVisibleText(*svg);
  for (const char* word : {"nc0", "nc1", "p50", "p90", "p99", "mlp on 2 cores",
                           "latency per execution (us)"}) {
    EXPECT_NE(text.find(word), std::string::npos) << word << " in:\n" << text;
  }
  // The legend gives each core's figures as the tool reported them.
  EXPECT_NE(text.find("nc1: p50 54.8 us, p90 58.7 us, p99 59.6 us (200 runs)"),
            std::string::npos)
      << text;
}

TEST(LatencyPlot, AMillionSamplesStayASmallFile) {
  auto few = RenderLatencySvg(kDrawer, "few", {Core("nc0", 40, kMaxCdfPoints)});
  auto many = RenderLatencySvg(kDrawer, "many", {Core("nc0", 40, 1000000)});
  ASSERT_TRUE(few.ok() && many.ok());
  // The curve is sampled at kMaxCdfPoints fractions either way.
  EXPECT_LT(many->size(), few->size() * 11 / 10);
}

TEST(LatencyPlot, AFewSlowSamplesRunOffTheEdgeAndAreCounted) {
  LatencySeries s = Core("nc0", 10, 100);
  s.samples_us.push_back(10000);
  s.samples_us.push_back(5000);
  auto svg = RenderLatencySvg(kDrawer, "tail", {s});
  ASSERT_TRUE(svg.ok());
  const std::string text = SvgVisibleText(*svg);
  EXPECT_NE(text.find("2 slower (up to 1e+04 us) off the right edge"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("log scale"), std::string::npos);
  auto flat = RenderLatencySvg(kDrawer, "flat", {Core("nc0", 10, 100)});
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(SvgVisibleText(*flat).find("off the right edge"), std::string::npos);
}

TEST(LatencyPlot, AWideSpreadGetsALogAxis) {
  LatencySeries s;
  s.label = "nc0";
  for (int i = 0; i < 100; ++i) s.samples_us.push_back(std::pow(10.0, i / 33.0));  // 1 to 1000
  s.p50_us = 30;
  s.p90_us = 500;
  s.p99_us = 900;
  auto svg = RenderLatencySvg(kDrawer, "wide", {s});
  ASSERT_TRUE(svg.ok());
  EXPECT_NE(SvgVisibleText(*svg).find("log scale"), std::string::npos);
}

TEST(LatencyPlot, HashInALabelIsShownLiterally) {
  auto svg = RenderLatencySvg(kDrawer, "run #3", {Core("core #0", 40, 50)});
  ASSERT_TRUE(svg.ok());
  const std::string text = SvgVisibleText(*svg);
  EXPECT_NE(text.find("run #3"), std::string::npos) << text;
  EXPECT_NE(text.find("core #0"), std::string::npos);
}

TEST(RenderSvg, PlplotComplaintsBecomeAnErrorAndStayOffStdio) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  auto svg = RenderSvg(kDrawer, PageSize{}, [] {
    Pl().plcol0(999);  // no such color: PLplot refuses the call
  });
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_FALSE(svg.ok());
  EXPECT_EQ(svg.status().message().rfind("test.svg: cannot draw the picture: PLplot: ", 0), 0u)
      << svg.status();
  EXPECT_EQ(out, "");
  EXPECT_EQ(err, "");
  // PLplot is usable again afterwards.
  auto again = RenderLatencySvg(kDrawer, "again", {Core("nc0", 40, 10)});
  EXPECT_TRUE(again.ok()) << again.status();
}

TEST(WriteSvg, AnUnwritablePathNamesItAndLeavesNoFile) {
  const std::string dir = ::neuron::testing::MakeTempDir();
  const std::string path = dir + "/missing/plot.svg";
  absl::Status st = WriteSvg(path, "<svg></svg>\n");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(path), std::string::npos) << st;
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(WriteSvg, WritesTheDocument) {
  const std::string path = ::neuron::testing::MakeTempDir() + "/plot.svg";
  auto svg = RenderLatencySvg(kDrawer, "file", {Core("nc0", 40, 10)});
  ASSERT_TRUE(svg.ok());
  ASSERT_TRUE(WriteSvg(path, *svg).ok());
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), *svg);
}

}  // namespace
}  // namespace neuron::plot
