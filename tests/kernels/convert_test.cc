// Element conversions: round-to-nearest-even edge cases for bf16/f16/f8,
// saturating float->int converts, and stochastic rounding (reproducible
// with its seed, unbiased on average).
#include <cmath>
#include <cstring>
#include <limits>

#include "gtest/gtest.h"
#include "lib/kernels/element_convert.h"
#include "tests/kernels/kernel_test_util.h"

namespace neuron::kernels {
namespace {

using ET = hlo::ElementType;

float Bits(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

TEST(ConvertTest, Bf16RoundsToNearestEven) {
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to even (1).
  EXPECT_EQ(F32ToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3*2^-8 is halfway between 1+2^-7 (odd) and 1+2^-6: goes up.
  EXPECT_EQ(F32ToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  // Just above the halfway point rounds up.
  EXPECT_EQ(F32ToBf16(Bits(0x3f808001u)), 0x3f81);
  // Overflow to infinity; NaN stays NaN.
  EXPECT_EQ(F32ToBf16(Bits(0x7f7fffffu)), 0x7f80);
  EXPECT_TRUE(std::isnan(Bf16ToF32(F32ToBf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(Bf16ToF32(0xc000), -2.0f);
}

TEST(ConvertTest, F16RoundTripAndTies) {
  float v[4] = {1.0f + std::ldexp(1.0f, -11), 65504.0f, 70000.0f, std::ldexp(1.0f, -24)};
  QuantizeF32(ET::kF16, v, 4);
  EXPECT_EQ(v[0], 1.0f);        // tie to even
  EXPECT_EQ(v[1], 65504.0f);    // largest finite
  EXPECT_TRUE(std::isinf(v[2]));
  EXPECT_EQ(v[3], std::ldexp(1.0f, -24));  // smallest subnormal
}

TEST(ConvertTest, F8E4M3FnSaturatesToNaNAndRounds) {
  float v[3] = {448.0f, 17.0f, 0.0f};
  QuantizeF32(ET::kF8E4M3FN, v, 3);
  EXPECT_EQ(v[0], 448.0f);  // max finite
  EXPECT_EQ(v[1], 16.0f);   // 17 is a tie between 16 and 18: even mantissa (16)
  uint8_t b[1];
  float big = 1000.0f;
  StoreFromDomain(ET::kF8E4M3FN, &big, 1, b);
  float back;
  LoadToDomain(ET::kF8E4M3FN, b, 1, &back);
  EXPECT_TRUE(std::isnan(back));  // no inf in e4m3fn
}

TEST(ConvertTest, WrapIntegers) {
  EXPECT_EQ(WrapInt(ET::kS8, 200), -56);
  EXPECT_EQ(WrapInt(ET::kU8, -1), 255);
  EXPECT_EQ(WrapInt(ET::kS4, 9), -7);
  EXPECT_EQ(WrapInt(ET::kPred, 5), 1);
}

TEST(ConvertTest, FloatToIntConvertSaturatesAndZeroesNaN) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[5] parameter(0)
  ROOT c = s8[5] convert(a)
})";
  auto r = testing::RunText(text, {testing::MakeTensor(ET::kF32, {5}, {1e9, -1e9, NAN, -3.7, 126.9})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(testing::Values((*r)[0]), (std::vector<double>{127, -128, 0, -3, 126}));
}

TEST(ConvertTest, StochasticRoundingIsReproducibleAndUnbiased) {
  const int n = 20000;
  // 1 + 2^-9 lies a quarter of the way from 1 to the next bf16 (1 + 2^-7).
  std::vector<float> a(n, 1.0f + std::ldexp(1.0f, -9)), b = a, c = a;
  QuantizeF32Stochastic(ET::kBF16, a.data(), n, 42, 7, 0);
  QuantizeF32Stochastic(ET::kBF16, b.data(), n, 42, 7, 0);
  QuantizeF32Stochastic(ET::kBF16, c.data(), n, 43, 7, 0);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  double mean = 0;
  int ups = 0;
  for (float x : a) {
    EXPECT_TRUE(x == 1.0f || x == 1.0f + std::ldexp(1.0f, -7)) << x;
    ups += x != 1.0f;
    mean += x;
  }
  mean /= n;
  EXPECT_NEAR(static_cast<double>(ups) / n, 0.25, 0.02);
  EXPECT_NEAR(mean, 1.0 + std::ldexp(1.0, -9), 2e-4);
}

TEST(ConvertTest, StochasticRoundingF16IsUnbiased) {
  const int n = 20000;
  float target = 1.0f + 0.5f * std::ldexp(1.0f, -10) * 0.5f;  // an eighth... of an f16 ulp step
  std::vector<float> a(n, target);
  QuantizeF32Stochastic(ET::kF16, a.data(), n, 1, 1, 0);
  double mean = 0;
  for (float x : a) mean += x;
  mean /= n;
  EXPECT_NEAR(mean, target, std::ldexp(1.0, -10) * 0.05);
}

TEST(ConvertTest, ExecutorAppliesStochasticRoundingToConverts) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[4096] parameter(0)
  ROOT c = bf16[4096] convert(a)
})";
  std::vector<double> vals(4096, 1.0 + std::ldexp(1.0, -9));
  auto in = testing::MakeTensor(ET::kF32, {4096}, vals);
  ExecOptions o;
  auto rne = testing::RunText(text, {in}, o);
  ASSERT_TRUE(rne.ok());
  for (double v : testing::Values((*rne)[0])) ASSERT_EQ(v, 1.0);
  o.stochastic_rounding = true;
  o.sr_seed = 5;
  auto s1 = testing::RunText(text, {in}, o);
  auto s2 = testing::RunText(text, {in}, o);
  ASSERT_TRUE(s1.ok() && s2.ok());
  EXPECT_EQ(testing::Values((*s1)[0]), testing::Values((*s2)[0]));
  double mean = 0;
  for (double v : testing::Values((*s1)[0])) mean += v;
  EXPECT_NEAR(mean / 4096, 1.0 + std::ldexp(1.0, -9), 5e-4);
}

}  // namespace
}  // namespace neuron::kernels
