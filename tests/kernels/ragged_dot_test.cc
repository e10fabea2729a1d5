// ragged-dot in its three modes against the definition computed here:
// each lhs row (or contracting position) belongs to the group whose run of
// group_sizes covers it.
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/hlo/load.h"
#include "tests/kernels/kernel_test_util.h"

namespace neuron::kernels::testing {
namespace {

using ET = hlo::ElementType;

std::vector<double> Random(int64_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> u(-4, 4);  // small integers: exact in f32
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

// The group covering position i of runs `sizes`, -1 past them all.
int64_t GroupOf(const std::vector<int64_t>& sizes, int64_t i) {
  int64_t end = 0;
  for (size_t g = 0; g < sizes.size(); ++g) {
    end += sizes[g];
    if (i < end) return static_cast<int64_t>(g);
  }
  return -1;
}

std::vector<double> RunFirstOutput(const std::string& text, const std::vector<Tensor>& in) {
  auto r = RunText(text, in);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? Values((*r)[0]) : std::vector<double>{};
}

// [m,k] x [g,k,n] -> [m,n]: row i uses rhs[group(i)]; rows past the
// groups (the sizes sum to less than m) are zero.
TEST(RaggedDotTest, RaggedNonContractingPicksEachRowsGroupMatrix) {
  const int64_t m = 7, k = 3, g = 3, n = 4;
  const std::vector<int64_t> sizes = {2, 0, 4};  // row 6 is in no group
  std::mt19937 rng(1);
  std::vector<double> lhs = Random(m * k, rng), rhs = Random(g * k * n, rng);
  std::vector<double> want(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    const int64_t grp = GroupOf(sizes, i);
    if (grp < 0) continue;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t c = 0; c < k; ++c) want[i * n + j] += lhs[i * k + c] * rhs[(grp * k + c) * n + j];
  }
  EXPECT_EQ(RunFirstOutput(R"(HloModule m
ENTRY e {
  a = f32[7,3] parameter(0)
  b = f32[3,3,4] parameter(1)
  s = s32[3] parameter(2)
  ROOT r = f32[7,4] ragged-dot(a, b, s), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
})",
                {MakeTensor(ET::kF32, {m, k}, lhs), MakeTensor(ET::kF32, {g, k, n}, rhs),
                 MakeTensor(ET::kS32, {g}, {2, 0, 4})}),
            want);
}

// Sizes out of range are read as XLA's runs would cover the rows: a
// negative size is an empty group, one past the end takes the rest.
TEST(RaggedDotTest, NegativeAndHugeGroupSizesCoverWhatTheyCan) {
  const int64_t m = 4, k = 2, g = 3, n = 2;
  const std::vector<int64_t> sizes = {-3, int64_t{1} << 62, 5};  // group 1 takes every row
  std::mt19937 rng(9);
  std::vector<double> lhs = Random(m * k, rng), rhs = Random(g * k * n, rng);
  std::vector<double> want(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t c = 0; c < k; ++c) want[i * n + j] += lhs[i * k + c] * rhs[(1 * k + c) * n + j];
  Tensor s(ET::kS64, {g});
  for (int64_t i = 0; i < g; ++i) s.as<int64_t>()[i] = sizes[i];
  EXPECT_EQ(RunFirstOutput(R"(HloModule m
ENTRY e {
  a = f32[4,2] parameter(0)
  b = f32[3,2,2] parameter(1)
  s = s64[3] parameter(2)
  ROOT r = f32[4,2] ragged-dot(a, b, s), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
})",
                           {MakeTensor(ET::kF32, {m, k}, lhs), MakeTensor(ET::kF32, {g, k, n}, rhs), s}),
            want);
}

// group_sizes [x, g]: each outer lhs index x has its own grouping of the
// ragged dimension (XLA's importer example, scaled down).
TEST(RaggedDotTest, GroupSizesPerOuterDimension) {
  const int64_t x = 2, m = 5, k = 3, g = 3, n = 4;
  const std::vector<std::vector<int64_t>> sizes = {{1, 3, 1}, {0, 2, 2}};
  std::mt19937 rng(2);
  std::vector<double> lhs = Random(x * m * k, rng), rhs = Random(g * k * n, rng);
  std::vector<double> want(x * m * n, 0.0);
  for (int64_t o = 0; o < x; ++o)
    for (int64_t i = 0; i < m; ++i) {
      const int64_t grp = GroupOf(sizes[o], i);
      if (grp < 0) continue;
      for (int64_t j = 0; j < n; ++j)
        for (int64_t c = 0; c < k; ++c)
          want[(o * m + i) * n + j] += lhs[(o * m + i) * k + c] * rhs[(grp * k + c) * n + j];
    }
  EXPECT_EQ(RunFirstOutput(R"(HloModule m
ENTRY e {
  a = f32[2,5,3] parameter(0)
  b = f32[3,3,4] parameter(1)
  s = s64[2,3] parameter(2)
  ROOT r = f32[2,5,4] ragged-dot(a, b, s), lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={1}, rhs_group_dims={0}
})",
                {MakeTensor(ET::kF32, {x, m, k}, lhs), MakeTensor(ET::kF32, {g, k, n}, rhs),
                 MakeTensor(ET::kS64, {x, g}, {1, 3, 1, 0, 2, 2})}),
            want);
}

// [b,m,k] x [b,k,n] -> [g,b,m,n]: slice g sums only the contracting
// positions of group g.
TEST(RaggedDotTest, RaggedContractingGivesOneProductPerGroup) {
  const int64_t b = 2, m = 2, k = 5, n = 3, g = 2;
  const std::vector<int64_t> sizes = {2, 2};  // position 4 is in no group
  std::mt19937 rng(3);
  std::vector<double> lhs = Random(b * m * k, rng), rhs = Random(b * k * n, rng);
  std::vector<double> want(g * b * m * n, 0.0);
  for (int64_t bb = 0; bb < b; ++bb)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t c = 0; c < k; ++c) {
          const int64_t grp = GroupOf(sizes, c);
          if (grp >= 0)
            want[((grp * b + bb) * m + i) * n + j] += lhs[(bb * m + i) * k + c] * rhs[(bb * k + c) * n + j];
        }
  EXPECT_EQ(RunFirstOutput(R"(HloModule m
ENTRY e {
  a = f32[2,2,5] parameter(0)
  b = f32[2,5,3] parameter(1)
  s = s32[2] parameter(2)
  ROOT r = f32[2,2,2,3] ragged-dot(a, b, s), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={2}
})",
                {MakeTensor(ET::kF32, {b, m, k}, lhs), MakeTensor(ET::kF32, {b, k, n}, rhs),
                 MakeTensor(ET::kS32, {g}, {2, 2})}),
            want);
}

// Ragged batch: the plain batched dot, whatever the group sizes.
TEST(RaggedDotTest, RaggedBatchIsThePlainDot) {
  const int64_t b = 3, m = 2, k = 4, n = 2;
  std::mt19937 rng(4);
  std::vector<double> lhs = Random(b * m * k, rng), rhs = Random(b * k * n, rng);
  std::vector<double> want(b * m * n, 0.0);
  for (int64_t bb = 0; bb < b; ++bb)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t c = 0; c < k; ++c) want[(bb * m + i) * n + j] += lhs[(bb * m + i) * k + c] * rhs[(bb * k + c) * n + j];
  EXPECT_EQ(RunFirstOutput(R"(HloModule m
ENTRY e {
  a = f32[3,2,4] parameter(0)
  b = f32[3,4,2] parameter(1)
  s = s32[2] parameter(2)
  ROOT r = f32[3,2,2] ragged-dot(a, b, s), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={0}
})",
                {MakeTensor(ET::kF32, {b, m, k}, lhs), MakeTensor(ET::kF32, {b, k, n}, rhs),
                 MakeTensor(ET::kS32, {2}, {1, 1})}),
            want);
}

TEST(RaggedDotTest, InconsistentDimensionNumbersAreRefusedByTheVerifier) {
  const std::pair<const char*, const char*> cases[] = {
      // Non-contracting ragged dimension without an rhs group dimension.
      {"f32[7,4] ragged-dot(a, b, s), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}",
       "rhs_group_dims"},
      // group_sizes must end in the number of rhs matrices (3).
      {"f32[7,4] ragged-dot(a, b, t), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, "
       "rhs_group_dims={0}",
       "group count"},
      {"f32[7,4] ragged-dot(a, b, s), lhs_contracting_dims={1}, rhs_contracting_dims={1}, rhs_group_dims={0}",
       "lhs_ragged_dims"},
  };
  for (const auto& [root, needle] : cases) {
    auto exe = BuildText(absl::StrCat("HloModule m\nENTRY e {\n  a = f32[7,3] parameter(0)\n  b = f32[3,3,4] parameter(1)\n"
                                      "  s = s32[3] parameter(2)\n  t = s32[2] parameter(3)\n  ROOT r = ", root, "\n}\n"));
    ASSERT_FALSE(exe.ok()) << root;
    EXPECT_NE(std::string(exe.status().message()).find(needle), std::string::npos) << exe.status();
  }
}

// A NEFF's program is not verified again at load: the executor's own
// planning rule refuses dimension numbers its kernel would index past.
TEST(RaggedDotTest, UnverifiedBadDimensionsAreRefusedByThePlanner) {
  auto module = hlo::LoadModule(R"(HloModule m
ENTRY e {
  a = f32[7,3] parameter(0)
  b = f32[3,3,4] parameter(1)
  s = s32[3] parameter(2)
  ROOT r = f32[7,4] ragged-dot(a, b, s), lhs_batch_dims={5}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
})",
                                "bad.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  auto exe = Executable::Build(**module);
  ASSERT_FALSE(exe.ok());
  EXPECT_NE(std::string(exe.status().message()).find("do not fit"), std::string::npos) << exe.status();
}

}  // namespace
}  // namespace neuron::kernels::testing
