// The command-line tensor helpers neuron-exec uses: inline tensors, the
// IREE-style printout, --expect comparison, benchmark statistics.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "gtest/gtest.h"
#include "tools/neuron-exec/tensor_compare.h"
#include "tools/neuron-exec/latency_stats.h"
#include "lib/literal_io/npy_literal.h"
#include "lib/literal_io/literal_text.h"

namespace neuron::exec_tool {

using literal_io::OpenNpyFile;
using literal_io::ReadNpyInto;
using literal_io::WriteNpyFile;
using literal_io::LooksLikeInlineTensor;
using literal_io::ParseInlineTensor;
using literal_io::FormatTensor;
using literal_io::PrintLimits;
using literal_io::NpyFileInput;
namespace {

using hlo::ElementType;

std::string TempNpy(const hlo::Literal& value, const char* name) {
  const std::string path = ::testing::TempDir() + "/" + name + "-" + std::to_string(getpid()) + ".npy";
  EXPECT_TRUE(WriteNpyFile(path, value).ok());
  return path;
}

// .npy inputs go straight into their tensors: the header is read first
// (dims checked before anything is allocated), then the data in place, or
// converted where the file holds another type.
TEST(NpyInputTest, ReadsTheDataIntoTheTensorInPlaceOrConverted) {
  absl::StatusOr<hlo::Literal> t = ParseInlineTensor("2x3xf32=1,2,3,4,5,6.5");
  ASSERT_TRUE(t.ok());
  const std::string path = TempNpy(*t, "in");
  absl::StatusOr<NpyFileInput> in = OpenNpyFile(path);
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->type, ElementType::kF32);
  EXPECT_EQ(in->dims, (std::vector<int64_t>{2, 3}));
  std::vector<uint8_t> same(t->data().size());
  ASSERT_TRUE(ReadNpyInto(*in, ElementType::kF32, same.data(), same.size()).ok());
  EXPECT_EQ(same, t->data());
  std::vector<int32_t> ints(6);
  ASSERT_TRUE(ReadNpyInto(*in, ElementType::kS32, reinterpret_cast<uint8_t*>(ints.data()), 24).ok());
  EXPECT_EQ(ints[5], 6);
  // Cut short after its header was read: an error naming the file.
  ASSERT_EQ(truncate(path.c_str(), static_cast<off_t>(in->data_offset + 8)), 0);
  absl::Status cut = ReadNpyInto(*in, ElementType::kF32, same.data(), same.size());
  EXPECT_FALSE(cut.ok());
  EXPECT_NE(cut.message().find(path), std::string::npos) << cut;
  // ...and refused by its header when opened again.
  EXPECT_FALSE(OpenNpyFile(path).ok());
  std::remove(path.c_str());
  EXPECT_FALSE(OpenNpyFile(path).ok());
}

TEST(InlineTensorTest, ParsesDimsTypeAndValues) {
  absl::StatusOr<hlo::Literal> t = ParseInlineTensor("2x3xf32=1,2,3,4,5,6.5");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->shape().type, ElementType::kF32);
  EXPECT_EQ(t->shape().dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t->GetDouble(0), 1);
  EXPECT_EQ(t->GetDouble(5), 6.5);
}

TEST(InlineTensorTest, BracketsSpacesScalarsAndSplat) {
  absl::StatusOr<hlo::Literal> t = ParseInlineTensor("2x2xs32=[1 2][3 -4]");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->GetInt(3), -4);
  absl::StatusOr<hlo::Literal> s = ParseInlineTensor("f32=3.5");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->shape().dims.empty());
  EXPECT_EQ(s->GetDouble(0), 3.5);
  absl::StatusOr<hlo::Literal> splat = ParseInlineTensor("4xbf16=0.5");
  ASSERT_TRUE(splat.ok()) << splat.status();
  EXPECT_EQ(splat->GetDouble(3), 0.5);
  absl::StatusOr<hlo::Literal> p = ParseInlineTensor("2xpred=true,0");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->GetInt(0), 1);
  EXPECT_EQ(p->GetInt(1), 0);
}

TEST(InlineTensorTest, ErrorsSayWhatIsWrong) {
  absl::StatusOr<hlo::Literal> count = ParseInlineTensor("2x3xf32=1,2");
  ASSERT_FALSE(count.ok());
  EXPECT_NE(count.status().message().find("2 values for 2x3xf32, which has 6 elements"),
            std::string::npos)
      << count.status();
  absl::StatusOr<hlo::Literal> type = ParseInlineTensor("2xf33=1,2");
  ASSERT_FALSE(type.ok());
  EXPECT_NE(type.status().message().find("unknown element type 'f33'"), std::string::npos);
  absl::StatusOr<hlo::Literal> value = ParseInlineTensor("2xf32=1,abc");
  ASSERT_FALSE(value.ok());
  EXPECT_NE(value.status().message().find("'abc' is not a number"), std::string::npos);
  EXPECT_FALSE(ParseInlineTensor("2xs8=1,1.5").ok());
  EXPECT_FALSE(ParseInlineTensor("no-equals").ok());
}

TEST(InlineTensorTest, TellsInlineFromFileNames) {
  EXPECT_TRUE(LooksLikeInlineTensor("2x3xf32=1,2,3,4,5,6"));
  EXPECT_TRUE(LooksLikeInlineTensor("f32=1"));
  EXPECT_FALSE(LooksLikeInlineTensor("x.npy"));
  EXPECT_FALSE(LooksLikeInlineTensor("dir/a=b.npy"));
}

TEST(FormatTensorTest, PrintsLikeIree) {
  absl::StatusOr<hlo::Literal> t = ParseInlineTensor("2x4xf32=0,1,2,3,4,5,6,7.5");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(FormatTensor(*t), "2x4xf32=[0 1 2 3][4 5 6 7.5]");
  absl::StatusOr<hlo::Literal> s = ParseInlineTensor("s32=-3");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(FormatTensor(*s), "s32=-3");
  PrintLimits limits;
  limits.max_elements = 3;
  EXPECT_EQ(FormatTensor(*t, limits), "2x4xf32=[0 1 2...(5 more)");
}

TEST(CompareTest, PassesWithinToleranceAndNamesTheWorstElement) {
  hlo::Literal want = *ParseInlineTensor("2x2xf32=1,2,3,4");
  hlo::Literal close = *ParseInlineTensor("2x2xf32=1,2.000001,3,4");
  EXPECT_TRUE(CompareTensors(close, want, {1e-5, 1e-5}).ok);
  hlo::Literal off = *ParseInlineTensor("2x2xf32=1,2.5,3,9");
  Comparison c = CompareTensors(off, want, {1e-5, 1e-5});
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.mismatches, 2);
  EXPECT_EQ(c.worst_index, 3);
  EXPECT_EQ(c.worst_coords, (std::vector<int64_t>{1, 1}));
  EXPECT_NE(c.error.find("worst at [1,1]: got 9, expected 4"), std::string::npos) << c.error;
}

TEST(CompareTest, NanMatchesNanAndShapesMustAgree) {
  hlo::Literal a = *ParseInlineTensor("2xf32=nan,inf");
  EXPECT_TRUE(CompareTensors(a, a, {}).ok);
  hlo::Literal b = *ParseInlineTensor("2xf32=nan,1");
  EXPECT_FALSE(CompareTensors(b, a, {}).ok);
  hlo::Literal c = *ParseInlineTensor("3xf32=1,2,3");
  Comparison shape = CompareTensors(c, a, {});
  EXPECT_FALSE(shape.ok);
  EXPECT_NE(shape.error.find("shape 3xf32 differs from the expected 2xf32"), std::string::npos);
}

TEST(LatencyTest, NearestRankPercentilesAndThroughput) {
  std::vector<uint64_t> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(static_cast<uint64_t>(i) * 1000);
  LatencyStats s = ComputeLatencyStats(samples, 0);
  EXPECT_EQ(s.count, 100);
  EXPECT_DOUBLE_EQ(s.min_us, 1);
  EXPECT_DOUBLE_EQ(s.p50_us, 50);
  EXPECT_DOUBLE_EQ(s.p90_us, 90);
  EXPECT_DOUBLE_EQ(s.p99_us, 99);
  EXPECT_DOUBLE_EQ(s.max_us, 100);
  // 100 executions in 0.5 s of wall time.
  EXPECT_DOUBLE_EQ(ComputeLatencyStats(samples, 500000000).throughput, 200);
}

}  // namespace
}  // namespace neuron::exec_tool
