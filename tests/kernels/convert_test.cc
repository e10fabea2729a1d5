// Element conversions: round-to-nearest-even edge cases for bf16/f16/f8,
// saturating float->int converts, and stochastic rounding (reproducible
// with its seed, unbiased on average).
#include <cmath>
#include <immintrin.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/hlo/float_types.h"
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

// The bulk (8- and 16-lane) bf16 store and load against the scalar
// helpers, over a spread of every f32 bit pattern (NaNs, infs, ties).
TEST(ConvertTest, Bf16BulkConversionsMatchScalar) {
  std::vector<float> v;
  for (uint64_t u = 0; u <= 0xffffffffull; u += 997) v.push_back(Bits(static_cast<uint32_t>(u)));
  v.push_back(Bits(0x3f808000u));  // a tie
  std::vector<uint8_t> stored(v.size() * 2);
  StoreFromDomain(ET::kBF16, v.data(), static_cast<int64_t>(v.size()), stored.data());
  std::vector<float> loaded(v.size());
  LoadToDomain(ET::kBF16, stored.data(), static_cast<int64_t>(v.size()), loaded.data());
  int bad = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    uint16_t got;
    std::memcpy(&got, &stored[2 * i], 2);
    const uint16_t want = F32ToBf16(v[i]);
    uint32_t back;
    std::memcpy(&back, &loaded[i], 4);
    if ((got != want || back != static_cast<uint32_t>(want) << 16) && ++bad <= 5)
      ADD_FAILURE() << std::hex << "f32 bits " << *reinterpret_cast<const uint32_t*>(&v[i]) << ": stored "
                    << got << " want " << want << ", loaded " << back;
  }
  EXPECT_EQ(bad, 0);
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

// Every code of every byte float, widened to bf16 (vector loop and tail)
// and to f32, against the reference decoder.
TEST(ConvertTest, ByteFloatsWidenExactly) {
  int types = 0;
  for (int t = 0; t < 64; ++t) {
    if (!hlo::IsKnownElementType(t) || !IsByteFloat(static_cast<ET>(t))) continue;
    const ET type = static_cast<ET>(t);
    ++types;
    std::vector<uint8_t> codes(256 + 7);  // 7 more: a tail after the vector loop
    for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<uint8_t>(i * 37 + 11);
    std::vector<uint16_t> bf16(codes.size(), 0xdead);
    std::vector<float> f32(codes.size(), -1.0f);
    ByteFloatToBf16(type, codes.data(), static_cast<int64_t>(codes.size()), bf16.data());
    LoadToDomain(type, codes.data(), static_cast<int64_t>(codes.size()), f32.data());
    const uint64_t mask = (uint64_t{1} << hlo::BitWidth(type)) - 1;
    for (size_t i = 0; i < codes.size(); ++i) {
      const double want = hlo::DecodeFloat(type, codes[i] & mask);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(Bf16ToF32(bf16[i])) && std::isnan(f32[i])) << t << " code " << int{codes[i]};
        continue;
      }
      EXPECT_EQ(Bf16ToF32(bf16[i]), want) << t << " code " << int{codes[i]};
      EXPECT_EQ(f32[i], want) << t << " code " << int{codes[i]};
    }
  }
  EXPECT_GE(types, 9);  // the f8 family, f6 and f4
  EXPECT_FALSE(IsByteFloat(ET::kF8E8M0FNU));
  EXPECT_FALSE(IsByteFloat(ET::kBF16));
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

// A lone f32 -> bf16/f16 convert (what --auto-cast puts before a dot) runs
// storage to storage, split over two threads: every element must round as
// F32ToBf16 / the F16C instruction do, and an overflow to inf in the
// narrow type must still be reported.
TEST(ConvertTest, PlainNarrowingConvertRoundsEachElementAndReportsOverflow) {
  const int64_t n = 70001;  // over the two-thread threshold, odd tail
  std::vector<double> vals(n);
  for (int64_t i = 0; i < n; ++i) vals[i] = std::ldexp(static_cast<double>(i % 977) - 488.25, static_cast<int>(i % 20) - 14);  // within f16
  vals[5] = 1.0 + std::ldexp(1.0, -8);  // a bf16 tie: stays 1
  vals[6] = std::ldexp(1.0, -130);      // f32 subnormal
  auto in_finite = testing::MakeTensor(ET::kF32, {n}, vals);
  vals[n - 3] = 3.4e38;  // finite in f32, past the largest bf16 and f16
  auto in_overflow = testing::MakeTensor(ET::kF32, {n}, vals);
  for (const char* type : {"bf16", "f16"}) {
    const std::string text = std::string("HloModule m\nENTRY e {\n  a = f32[70001] parameter(0)\n  ROOT c = ") +
                             type + "[70001] convert(a)\n}\n";
    ExecOptions o;
    o.find_first_nonfinite = true;
    RunStats stats;
    auto r = testing::RunText(text, {in_overflow}, o, &stats);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(stats.has_nonfinite) << type;
    EXPECT_EQ(stats.first_nonfinite_instruction, "c") << type;
    const float* src = reinterpret_cast<const float*>(in_overflow.data());
    const uint16_t* got = reinterpret_cast<const uint16_t*>((*r)[0].data());
    int bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      uint16_t want = type[0] == 'b' ? F32ToBf16(src[i]) : _cvtss_sh(src[i], _MM_FROUND_TO_NEAREST_INT);
      if (got[i] != want && ++bad <= 5) ADD_FAILURE() << type << " [" << i << "] " << src[i] << ": " << got[i] << " vs " << want;
    }
    EXPECT_EQ(bad, 0) << type;
    r = testing::RunText(text, {in_finite}, o, &stats);
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(stats.has_nonfinite) << type;
  }
}

}  // namespace
}  // namespace neuron::kernels
