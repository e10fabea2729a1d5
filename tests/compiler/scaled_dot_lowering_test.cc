// scaled-dot lowered to dot (passes/scaled_dot_lowering.cc), run and
// checked against the definition computed here: each operand element times
// the scale of its block, then the dot.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/compiler/diagnostics.h"
#include "lib/kernels/element_convert.h"
#include "tests/compiler/test_util.h"

namespace neuron::compiler {
namespace {

using ET = hlo::ElementType;
using kernels::Tensor;
using testing::CompileAndRun;
using testing::CompileText;
using testing::CountOpcode;

Tensor Make(ET type, std::vector<int64_t> dims, const std::vector<double>& v) {
  Tensor t(type, std::move(dims));
  for (int64_t i = 0; i < t.element_count(); ++i) kernels::StoreDouble(type, t.data(), i, v[i]);
  return t;
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(t.element_count());
  for (int64_t i = 0; i < t.element_count(); ++i) v[i] = kernels::LoadDouble(t.type(), t.data(), i);
  return v;
}

// Small integers (exact in f8e4m3fn and bf16) and powers of two (exact in
// f8e8m0fnu), so every product and sum is exact in f32.
std::vector<double> Ints(int64_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> u(-4, 4);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}
std::vector<double> PowersOfTwo(int64_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> u(-2, 3);
  std::vector<double> v(n);
  for (double& x : v) x = std::ldexp(1.0, u(rng));
  return v;
}

// MX: f8 operands with one e8m0 scale per 32 elements along k.
TEST(ScaledDotLoweringTest, MxBlockScalesAlongTheContractingDimension) {
  const int64_t m = 4, n = 3, k = 64, block = 32;
  std::mt19937 rng(5);
  std::vector<double> lhs = Ints(m * k, rng), rhs = Ints(n * k, rng);
  std::vector<double> ls = PowersOfTwo(m * k / block, rng), rs = PowersOfTwo(n * k / block, rng);
  std::vector<double> want(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t c = 0; c < k; ++c)
        want[i * n + j] += lhs[i * k + c] * ls[i * (k / block) + c / block] * rhs[j * k + c] * rs[j * (k / block) + c / block];
  auto r = CompileAndRun(R"(HloModule mx
ENTRY e {
  lhs = f8e4m3fn[4,64] parameter(0)
  rhs = f8e4m3fn[3,64] parameter(1)
  lhs_scale = f8e8m0fnu[4,2] parameter(2)
  rhs_scale = f8e8m0fnu[3,2] parameter(3)
  ROOT d = f32[4,3] scaled-dot(lhs, rhs, lhs_scale, rhs_scale), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})",
                         {Make(ET::kF8E4M3FN, {m, k}, lhs), Make(ET::kF8E4M3FN, {n, k}, rhs),
                          Make(ET::kF8E8M0FNU, {m, k / block}, ls), Make(ET::kF8E8M0FNU, {n, k / block}, rs)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values((*r)[0]), want);
}

// Scales that vary along free and batch dimensions, and a per-tensor one.
TEST(ScaledDotLoweringTest, BatchedWithRowColumnAndTensorScales) {
  const int64_t b = 2, m = 3, k = 4, n = 5;
  std::mt19937 rng(6);
  std::vector<double> lhs = Ints(b * m * k, rng), rhs = Ints(b * k * n, rng);
  std::vector<double> ls = PowersOfTwo(b * m, rng), rs = PowersOfTwo(1, rng);
  std::vector<double> want(b * m * n, 0.0);
  for (int64_t bb = 0; bb < b; ++bb)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t c = 0; c < k; ++c)
          want[(bb * m + i) * n + j] += lhs[(bb * m + i) * k + c] * ls[bb * m + i] * rhs[(bb * k + c) * n + j] * rs[0];
  auto r = CompileAndRun(R"(HloModule b
ENTRY e {
  lhs = bf16[2,3,4] parameter(0)
  rhs = bf16[2,4,5] parameter(1)
  lhs_scale = bf16[2,3,1] parameter(2)
  rhs_scale = bf16[1,1,1] parameter(3)
  ROOT d = f32[2,3,5] scaled-dot(lhs, rhs, lhs_scale, rhs_scale), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})",
                         {Make(ET::kBF16, {b, m, k}, lhs), Make(ET::kBF16, {b, k, n}, rhs),
                          Make(ET::kBF16, {b, m, 1}, ls), Make(ET::kBF16, {1, 1, 1}, rs)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values((*r)[0]), want);
}

TEST(ScaledDotLoweringTest, NoScaledDotIsLeftAfterLowering) {
  auto r = CompileText(R"(HloModule l
ENTRY e {
  lhs = f8e5m2[8,32] parameter(0)
  rhs = f8e5m2[32,4] parameter(1)
  lhs_scale = f8e8m0fnu[8,1] parameter(2)
  rhs_scale = f8e8m0fnu[1,4] parameter(3)
  ROOT d = bf16[8,4] scaled-dot(lhs, rhs, lhs_scale, rhs_scale), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                       CompileOptions{}, /*emit_neff=*/false);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(CountOpcode(*r->module, hlo::Opcode::kScaledDot), 0);
}

TEST(ScaledDotLoweringTest, GlobalScalesAndScalesThatDoNotDivideAreRefused) {
  auto global = CompileText(R"(HloModule g
ENTRY e {
  lhs = f4e2m1fn[8,32] parameter(0)
  rhs = f4e2m1fn[4,32] parameter(1)
  lhs_scale = f8e4m3fn[8,2] parameter(2)
  rhs_scale = f8e4m3fn[4,2] parameter(3)
  igs = f32[] parameter(4)
  wgs = f32[] parameter(5)
  ROOT d = bf16[8,4] scaled-dot(lhs, rhs, lhs_scale, rhs_scale, igs, wgs), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})",
                            CompileOptions{}, false);
  ASSERT_FALSE(global.ok());
  EXPECT_EQ(ErrorCodeOf(global.status()), "NCC-E0206") << global.status();
  EXPECT_NE(global.status().message().find("global scales"), std::string_view::npos) << global.status();

  auto blocks = CompileText(R"(HloModule b
ENTRY e {
  lhs = f32[8,32] parameter(0)
  rhs = f32[4,32] parameter(1)
  lhs_scale = f32[8,3] parameter(2)
  rhs_scale = f32[4,1] parameter(3)
  ROOT d = f32[8,4] scaled-dot(lhs, rhs, lhs_scale, rhs_scale), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})",
                            CompileOptions{}, false);
  ASSERT_FALSE(blocks.ok());
  EXPECT_NE(blocks.status().message().find("does not divide"), std::string_view::npos) << blocks.status();
}

}  // namespace
}  // namespace neuron::compiler
