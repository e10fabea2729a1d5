// bf16/f16/f8 dots: oneDNN's low-precision matmul (where the CPU has the
// instructions; f8 operands through bf16) and the widen-to-f32 fallback,
// against a double-precision product of the same stored inputs.
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "lib/hlo/float_types.h"
#include "lib/kernels/element_convert.h"
#include "lib/kernels/low_precision_gemm.h"
#include "tests/kernels/kernel_test_util.h"

namespace neuron::kernels::testing {
namespace {

using ET = hlo::ElementType;

// One dot to check: operand shapes and dimension numbers in HLO text, and
// how to index them, as a [batch, m, k] x [batch, k, n] product.
struct DotCase {
  std::string name;
  int64_t batch, m, n, k;
  bool lhs_km;  // lhs stored [batch, k, m] (transposed)
  bool rhs_nk;  // rhs stored [batch, n, k] (transposed)
};

std::vector<int64_t> Dims(int64_t batch, int64_t a, int64_t b) {
  if (batch == 1) return {a, b};
  return {batch, a, b};
}

std::string Shape(ET t, const std::vector<int64_t>& d) {
  return absl::StrCat(std::string(hlo::ElementTypeName(t)), "[", absl::StrJoin(d, ","), "]");
}

std::string DotHlo(const DotCase& c, ET in, ET out) {
  const bool b = c.batch > 1;
  const int o = b ? 1 : 0;
  std::string dims = absl::StrCat("lhs_contracting_dims={", c.lhs_km ? o : o + 1,
                                  "}, rhs_contracting_dims={", c.rhs_nk ? o + 1 : o, "}");
  if (b) dims = absl::StrCat("lhs_batch_dims={0}, rhs_batch_dims={0}, ", dims);
  return absl::StrCat(
      "HloModule m\nENTRY e {\n  l = ",
      Shape(in, c.lhs_km ? Dims(c.batch, c.k, c.m) : Dims(c.batch, c.m, c.k)), " parameter(0)\n  r = ",
      Shape(in, c.rhs_nk ? Dims(c.batch, c.n, c.k) : Dims(c.batch, c.k, c.n)),
      " parameter(1)\n  ROOT d = ", Shape(out, Dims(c.batch, c.m, c.n)), " dot(l, r), ", dims, "\n}\n");
}

// Half the gap between 1 and the next value of a narrow float type.
double UnitRoundoff(ET type) {
  switch (type) {
    case ET::kBF16: return std::ldexp(1.0, -8);
    case ET::kF16: return std::ldexp(1.0, -11);
    case ET::kF8E5M2: return std::ldexp(1.0, -3);
    default: return std::ldexp(1.0, -4);  // the e4m3 formats
  }
}

std::vector<double> RandomValues(int64_t count, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  std::vector<double> v(count);
  for (double& x : v) x = dist(gen);
  return v;
}

// Checks out = l x r for the case, in double from the stored 16-bit
// inputs. Allowed error: f32 accumulation (k roundings of the partial
// sums) plus one rounding of the result to the output type.
void ExpectProduct(const DotCase& c, ET out_type, const Tensor& l, const Tensor& r,
                   const Tensor& out) {
  std::vector<double> lv = Values(l), rv = Values(r), ov = Values(out);
  ASSERT_EQ(static_cast<int64_t>(ov.size()), c.batch * c.m * c.n);
  const double out_eps = out_type == ET::kF32 ? 0.0 : UnitRoundoff(out_type);
  // Near zero the result rounds to the type's subnormal grid.
  const double out_abs = out_type == ET::kF32 ? 0.0 : hlo::DecodeFloat(out_type, 1) / 2;
  int bad = 0;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double sum = 0, mag = 0;
        for (int64_t z = 0; z < c.k; ++z) {
          double x = lv[b * c.m * c.k + (c.lhs_km ? z * c.m + i : i * c.k + z)];
          double y = rv[b * c.k * c.n + (c.rhs_nk ? j * c.k + z : z * c.n + j)];
          sum += x * y;
          mag += std::fabs(x * y);
        }
        double got = ov[(b * c.m + i) * c.n + j];
        double tol = mag * c.k * std::ldexp(1.0, -24) + std::fabs(sum) * out_eps + out_abs + 1e-6;
        if (std::fabs(got - sum) > tol && ++bad <= 5)
          ADD_FAILURE() << c.name << " [" << b << "," << i << "," << j << "]: got " << got
                        << ", want " << sum << " +- " << tol;
      }
  EXPECT_EQ(bad, 0) << c.name;
}

const DotCase kCases[] = {
    {"square", 1, 64, 64, 64, false, false},
    {"wide", 1, 96, 320, 512, false, false},
    {"odd_sizes", 1, 37, 53, 129, false, false},
    {"lhs_transposed", 1, 48, 80, 96, true, false},
    {"rhs_transposed", 1, 48, 80, 96, false, true},
    {"both_transposed", 1, 33, 65, 70, true, true},
    {"vector_times_matrix", 1, 1, 300, 200, false, false},
    {"batched", 4, 32, 48, 64, false, false},
    {"batched_rhs_transposed", 3, 17, 40, 72, false, true},
    {"batched_lhs_transposed", 5, 24, 16, 40, true, false},
    // 320K-element rhs: the fallback widens it on several threads.
    {"big_rhs", 1, 8, 1024, 320, false, false},
};

class LowPrecisionDotTest : public ::testing::TestWithParam<std::tuple<ET, ET>> {
 protected:
  void TearDown() override { SetLowPrecisionGemmEnabled(true); }

  // Runs every case with the oneDNN path on or off and checks the products.
  std::vector<std::vector<double>> RunAll(bool onednn) {
    auto [in, out] = GetParam();
    SetLowPrecisionGemmEnabled(onednn);
    std::vector<std::vector<double>> results;
    uint32_t seed = 1;
    for (const DotCase& c : kCases) {
      Tensor l = MakeTensor(in, c.lhs_km ? Dims(c.batch, c.k, c.m) : Dims(c.batch, c.m, c.k),
                            RandomValues(c.batch * c.m * c.k, seed++));
      Tensor r = MakeTensor(in, c.rhs_nk ? Dims(c.batch, c.n, c.k) : Dims(c.batch, c.k, c.n),
                            RandomValues(c.batch * c.k * c.n, seed++));
      auto o = RunText(DotHlo(c, in, out), {l, r});
      EXPECT_TRUE(o.ok()) << c.name << ": " << o.status();
      if (!o.ok()) continue;
      ExpectProduct(c, out, l, r, (*o)[0]);
      results.push_back(Values((*o)[0]));
    }
    return results;
  }
};

// The oneDNN path's operand type: f8 operands go to the bf16 matmul.
ET OneDnnTypeFor(ET in) { return in == ET::kF16 ? ET::kF16 : ET::kBF16; }

TEST_P(LowPrecisionDotTest, OneDnnPathMatchesDoubleReference) {
  const ET in = std::get<0>(GetParam());
  if (!LowPrecisionGemmAvailable(OneDnnTypeFor(in)))
    GTEST_SKIP() << "NOTICE: no oneDNN path for " << hlo::ElementTypeName(in) << " on this host";
  const int64_t before = LowPrecisionGemmProducts();
  RunAll(true);
  // Known gap, found 2026-12-05: LowPrecisionGemmAvailable(f16) is true on
  // a CPU with AVX512-FP16, but oneDNN 2.6 (the installed libdnnl) has no
  // native f16 matmul kernel, so every f16 product is refused and widened:
  // the f16 cases say so instead of passing as if the path had run.
  if (in == ET::kF16 && LowPrecisionGemmProducts() == before)
    GTEST_SKIP() << "NOTICE: LowPrecisionGemmAvailable(f16) but oneDNN took no f16 product "
                    "(no native f16 matmul kernel in this oneDNN); checked on the fallback only";
  EXPECT_GT(LowPrecisionGemmProducts(), before) << "the oneDNN path did not run";
}

TEST_P(LowPrecisionDotTest, FallbackMatchesDoubleReference) {
  const int64_t before = LowPrecisionGemmProducts();
  RunAll(false);
  EXPECT_EQ(LowPrecisionGemmProducts(), before) << "the oneDNN path ran while turned off";
}

TEST_P(LowPrecisionDotTest, FallbackAgreesWithOneDnnPath) {
  auto [in, out] = GetParam();
  if (!LowPrecisionGemmAvailable(OneDnnTypeFor(in)))
    GTEST_SKIP() << "NOTICE: no oneDNN path for " << hlo::ElementTypeName(in) << " on this host";
  const int64_t before = LowPrecisionGemmProducts();
  std::vector<std::vector<double>> fast = RunAll(true);
  if (in == ET::kF16 && LowPrecisionGemmProducts() == before)  // the known gap above
    GTEST_SKIP() << "NOTICE: oneDNN took no f16 product; nothing to compare the fallback with";
  ASSERT_GT(LowPrecisionGemmProducts(), before) << "the oneDNN path did not run";
  std::vector<std::vector<double>> slow = RunAll(false);
  ASSERT_EQ(fast.size(), slow.size());
  // Both accumulate in f32, only in another order: f32 results agree to a
  // few f32 ulps of the magnitude, narrow results to one ulp of the type.
  const double rel = out == ET::kF32 ? 1e-4 : 2 * UnitRoundoff(out);
  const double abs = out == ET::kF32 ? 1e-4 : hlo::DecodeFloat(out, 1);
  for (size_t c = 0; c < fast.size(); ++c) {
    ASSERT_EQ(fast[c].size(), slow[c].size());
    int bad = 0;
    for (size_t i = 0; i < fast[c].size(); ++i)
      if (std::fabs(fast[c][i] - slow[c][i]) > rel * std::fabs(slow[c][i]) + abs && ++bad <= 5)
        ADD_FAILURE() << kCases[c].name << "[" << i << "]: " << fast[c][i] << " vs " << slow[c][i];
  }
  (void)in;
}

INSTANTIATE_TEST_SUITE_P(
    Types, LowPrecisionDotTest,
    ::testing::Values(std::make_tuple(ET::kBF16, ET::kF32), std::make_tuple(ET::kBF16, ET::kBF16),
                      std::make_tuple(ET::kF16, ET::kF32), std::make_tuple(ET::kF16, ET::kF16),
                      // f8 operands go to the bf16 matmul.
                      std::make_tuple(ET::kF8E4M3FN, ET::kF32),
                      std::make_tuple(ET::kF8E5M2, ET::kBF16),
                      std::make_tuple(ET::kF8E4M3FN, ET::kF8E4M3FN)),
    [](const auto& info) {
      return absl::StrCat(std::string(hlo::ElementTypeName(std::get<0>(info.param))), "_to_",
                          std::string(hlo::ElementTypeName(std::get<1>(info.param))));
    });

// The GEMM entry point itself: on a CPU with bf16 instructions it must take
// the product (not silently fall back), and it refuses what it cannot do.
TEST(LowPrecisionGemmTest, Bf16ProductRunsOnOneDnnWhereAvailable) {
  if (!LowPrecisionGemmAvailable(ET::kBF16)) GTEST_SKIP() << "no bf16 oneDNN path on this host";
  // A capped ISA makes oneDNN offer only emulation, which is refused.
  if (std::getenv("ONEDNN_MAX_CPU_ISA") != nullptr || std::getenv("DNNL_MAX_CPU_ISA") != nullptr)
    GTEST_SKIP() << "oneDNN's ISA is capped";
  const int64_t m = 5, n = 7, k = 9;
  std::vector<uint16_t> a(m * k), b(k * n);
  for (int64_t i = 0; i < m * k; ++i) a[i] = F32ToBf16(0.25f * static_cast<float>(i % 7) - 0.5f);
  for (int64_t i = 0; i < k * n; ++i) b[i] = F32ToBf16(0.5f * static_cast<float>(i % 5) - 1.0f);
  std::vector<float> c(m * n, -1.0f);
  ASSERT_TRUE(LowPrecisionGemm(ET::kBF16, ET::kF32, 1, m, n, k, false, a.data(), false, b.data(), c.data()));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float want = 0;
      for (int64_t z = 0; z < k; ++z) want += Bf16ToF32(a[i * k + z]) * Bf16ToF32(b[z * n + j]);
      EXPECT_FLOAT_EQ(c[i * n + j], want) << i << "," << j;  // small exact multiples of 1/8
    }
}

TEST(LowPrecisionGemmTest, AvailableMeansTheProductRuns) {
  // Availability is oneDNN's answer, not the CPU's: where it says yes, a
  // product of that type runs on it (an f16-capable CPU with a oneDNN that
  // has no f16 matmul kernel says no).
  for (ET t : {ET::kBF16, ET::kF16}) {
    SCOPED_TRACE(t == ET::kBF16 ? "bf16" : "f16");
    std::vector<uint16_t> a(64 * 64, 0), b(64 * 64, 0);
    std::vector<float> c(64 * 64, -1.0f);
    const bool ran = LowPrecisionGemm(t, ET::kF32, 1, 64, 64, 64, false, a.data(), false, b.data(), c.data());
    EXPECT_EQ(ran, LowPrecisionGemmAvailable(t));
    if (ran) {
      EXPECT_EQ(c[123], 0.0f);
    }
  }
}

TEST(LowPrecisionGemmTest, RefusesUnsupportedRequests) {
  std::vector<uint16_t> a(4, 0), b(4, 0);
  std::vector<float> c(4, 0);
  // f32 operands are not its job, nor an f16 result from bf16 operands.
  EXPECT_FALSE(LowPrecisionGemm(ET::kF32, ET::kF32, 1, 2, 2, 2, false, c.data(), false, c.data(), c.data()));
  EXPECT_FALSE(LowPrecisionGemm(ET::kBF16, ET::kF16, 1, 2, 2, 2, false, a.data(), false, b.data(), c.data()));
  EXPECT_FALSE(LowPrecisionGemm(ET::kBF16, ET::kF32, 1, 0, 2, 2, false, a.data(), false, b.data(), c.data()));
  SetLowPrecisionGemmEnabled(false);
  EXPECT_FALSE(LowPrecisionGemmAvailable(ET::kBF16));
  EXPECT_FALSE(LowPrecisionGemm(ET::kBF16, ET::kF32, 1, 2, 2, 2, false, a.data(), false, b.data(), c.data()));
  SetLowPrecisionGemmEnabled(true);
}

}  // namespace
}  // namespace neuron::kernels::testing
