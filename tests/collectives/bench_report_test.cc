// neuron-allreduce's report read back (bench_report.h) and the picture's
// series drawn from it (bench_plot.h).
#include "tools/neuron-allreduce/bench_report.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "tests/support/svg_text.h"
#include "tests/support/tool_runner.h"
#include "tools/neuron-allreduce/bench_plot.h"

namespace neuron::collectives {
namespace {

constexpr const char* kReport =
    R"j({"results":[{"size(B)":1024,"count(elems)":256,"type":"fp32","algbw(GB/s)":0.5,)j"
    R"j("busbw(GB/s)":0.75,"time:avg(us)":2.5,"iters":20},)j"
    R"j({"size(B)":4096,"count(elems)":1024,"type":"fp32","algbw(GB/s)":1,)j"
    R"j("busbw(GB/s)":1.5,"time:avg(us)":4,"iters":20}],)j"
    R"j("avg_busbw(GB/s)":1.125,"gb_bytes":1073741824,"op":"allr","reduction":"max",)j"
    R"j("nranks":4,"nnodes":2,"transport":"tcp"})j";

TEST(BenchReport, ParsesWhatThePictureDraws) {
  absl::StatusOr<BenchReport> r = ParseBenchReport(kReport);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->op, "allr");
  EXPECT_EQ(r->reduction, "max");
  EXPECT_EQ(r->nranks, 4);
  EXPECT_EQ(r->nnodes, 2);
  ASSERT_EQ(r->rows.size(), 2u);
  EXPECT_EQ(r->rows[1].size, 4096u);
  EXPECT_EQ(r->rows[1].type, "fp32");
  EXPECT_DOUBLE_EQ(r->rows[1].busbw_gbs, 1.5);
  EXPECT_DOUBLE_EQ(r->rows[1].avg_us, 4);
}

TEST(BenchReport, NamesWhatIsMissing) {
  EXPECT_NE(ParseBenchReport("{").status().message().find("not valid JSON"), std::string::npos);
  EXPECT_NE(ParseBenchReport("[]").status().message().find("top-level"), std::string::npos);
  auto no_results = ParseBenchReport(R"j({"op":"allr"})j");
  EXPECT_NE(no_results.status().message().find("\"results\""), std::string::npos);
  auto no_busbw = ParseBenchReport(
      R"j({"op":"allr","results":[{"size(B)":8,"type":"fp32","time:avg(us)":1}]})j");
  EXPECT_NE(no_busbw.status().message().find("results[0] \"busbw(GB/s)\""), std::string::npos)
      << no_busbw.status();
}

TEST(BenchReport, ReadErrorsNameTheFile) {
  auto r = ReadBenchReport("/nonexistent/report.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/nonexistent/report.json"), std::string::npos);
}

TEST(BenchPlot, LabelsNameCollectiveTypeReductionRanksAndHosts) {
  BenchReport r = *ParseBenchReport(kReport);
  EXPECT_EQ(BenchSeriesLabel(r, "fp32"), "allr fp32 max, 4 ranks on 2 hosts");
  r.op = "allg";
  r.nnodes = 1;
  EXPECT_EQ(BenchSeriesLabel(r, "bf16"), "allg bf16, 4 ranks");
}

TEST(BenchPlot, DrawsTheRunAndEachComparedReport) {
  const std::string dir = neuron::testing::MakeTempDir();
  BenchReport run = *ParseBenchReport(kReport);
  BenchReport earlier = run;
  earlier.rows[0].type = earlier.rows[1].type = "bf16";
  const std::string path = dir + "/p.svg";
  ASSERT_TRUE(WriteBenchPlot(path, run, {{"old/run.json", earlier}}).ok());
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  ASSERT_TRUE(neuron::testing::IsWholeSvg(ss.str()));
  const std::string text = neuron::testing::SvgVisibleText(ss.str());
  EXPECT_NE(text.find("this run: allr fp32 max, 4 ranks on 2 hosts"), std::string::npos) << text;
  EXPECT_NE(text.find("old/run.json: allr bf16 max"), std::string::npos) << text;
  EXPECT_NE(text.find("over tcp"), std::string::npos) << text;
  absl::Status st = WriteBenchPlot(dir + "/missing/p.svg", run, {});
  EXPECT_FALSE(st.ok());
  EXPECT_FALSE(std::filesystem::exists(dir + "/missing"));
}

}  // namespace
}  // namespace neuron::collectives
