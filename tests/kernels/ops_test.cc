// Per-operator tests with small hand-computed expectations.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/kernels/gemm.h"
#include "lib/kernels/dnnl_convolution.h"
#include "lib/kernels/dnnl_library.h"
#include "lib/kernels/low_precision_gemm.h"
#include "tests/kernels/kernel_test_util.h"

namespace neuron::kernels::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ET = hlo::ElementType;

// Runs `body` (instructions of ENTRY, the last one ROOT) and returns
// every output as doubles.
std::vector<std::vector<double>> Eval(const std::string& text, const std::vector<Tensor>& in) {
  auto r = RunText(text, in);
  EXPECT_TRUE(r.ok()) << r.status();
  std::vector<std::vector<double>> out;
  if (r.ok())
    for (const Tensor& t : *r) out.push_back(Values(t));
  return out;
}

Tensor F32(std::vector<int64_t> dims, std::vector<double> v) { return MakeTensor(ET::kF32, dims, v); }
Tensor S32(std::vector<int64_t> dims, std::vector<double> v) { return MakeTensor(ET::kS32, dims, v); }

TEST(OpsTest, AddFloats) {
  auto o = Eval(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT r = f32[4] add(a, b)
})", {F32({4}, {1, 2, 3, 4}), F32({4}, {10, 20, 30, 40})});
  EXPECT_THAT(o[0], ElementsAre(11, 22, 33, 44));
}

// Batch norm over feature dimension 1 against the formulas written out per
// element (the kernel streams rows; this is the definition): rows shorter
// than a vector, rows of whole vectors and a tail, values far from zero
// (the variance about a large mean), on one and two threads.
TEST(OpsTest, BatchNormTrainingAndGradMatchTheirDefinitions) {
  struct Case {
    int64_t n, c, h, w;
    double shift;  // added to every x
  };
  for (const Case& k : {Case{2, 3, 2, 2, 0}, Case{3, 5, 9, 7, 0}, Case{4, 2, 1, 40, 1000}}) {
    for (int threads : {1, 2}) {
      SetGemmThreads(threads);
      const int64_t n = k.n, c = k.c, hw = k.h * k.w;
      const std::string where = absl::StrCat("[", n, ",", c, ",", k.h, ",", k.w, "] + ", k.shift, ", ", threads,
                                             " threads");
      const std::string dims = absl::StrCat(n, ",", c, ",", k.h, ",", k.w);
      std::vector<double> x(n * c * hw), gy(n * c * hw);
      for (size_t i = 0; i < x.size(); ++i) {
        x[i] = std::sin(0.7 * static_cast<double>(i)) * 3 + static_cast<double>(i % 5) + k.shift;
        gy[i] = std::cos(0.3 * static_cast<double>(i));
      }
      std::vector<double> scale(c), offset(c);
      for (int64_t f = 0; f < c; ++f) {
        scale[f] = 0.5 + static_cast<double>(f) * 0.75 - (f % 2 ? 2 : 0);
        offset[f] = static_cast<double>(f % 3);
      }
      const double eps = 0.001;
      auto feature = [&](size_t i) { return (i / hw) % c; };
      // The f32 values the kernel sees.
      for (double& v : x) v = static_cast<float>(v);
      std::vector<double> mean(c, 0), var(c, 0);
      for (size_t i = 0; i < x.size(); ++i) mean[feature(i)] += x[i] / (n * hw);
      for (size_t i = 0; i < x.size(); ++i) var[feature(i)] += std::pow(x[i] - mean[feature(i)], 2) / (n * hw);
      auto o = Eval(absl::StrCat("HloModule m\nENTRY e {\n  x = f32[", dims, "] parameter(0)\n  s = f32[", c,
                                 "] parameter(1)\n  b = f32[", c, "] parameter(2)\n  ROOT t = (f32[", dims, "], f32[", c,
                                 "], f32[", c, "]) batch-norm-training(x, s, b), epsilon=0.001, feature_index=1\n}\n"),
                    {F32({n, c, k.h, k.w}, x), F32({c}, scale), F32({c}, offset)});
      ASSERT_EQ(o.size(), 3u) << where;
      for (size_t i = 0; i < x.size(); ++i) {
        const size_t f = feature(i);
        ASSERT_NEAR(o[0][i], (x[i] - mean[f]) / std::sqrt(var[f] + eps) * scale[f] + offset[f], 1e-4)
            << where << " at " << i;
      }
      for (int64_t f = 0; f < c; ++f) {
        EXPECT_NEAR(o[1][f], mean[f], 1e-5 * (1 + std::abs(mean[f]))) << where;
        EXPECT_NEAR(o[2][f], var[f], 1e-4) << where;
      }
      auto g = Eval(absl::StrCat("HloModule m\nENTRY e {\n  x = f32[", dims, "] parameter(0)\n  s = f32[", c,
                                 "] parameter(1)\n  m = f32[", c, "] parameter(2)\n  v = f32[", c,
                                 "] parameter(3)\n  gy = f32[", dims, "] parameter(4)\n  ROOT t = (f32[", dims, "], f32[",
                                 c, "], f32[", c,
                                 "]) batch-norm-grad(x, s, m, v, gy), epsilon=0.001, feature_index=1\n}\n"),
                    {F32({n, c, k.h, k.w}, x), F32({c}, scale), F32({c}, mean), F32({c}, var),
                     F32({n, c, k.h, k.w}, gy)});
      ASSERT_EQ(g.size(), 3u) << where;
      // The kernel sees mean and var rounded to f32, as given.
      std::vector<double> mf(c), vf(c);
      for (int64_t f = 0; f < c; ++f) {
        mf[f] = static_cast<float>(mean[f]);
        vf[f] = static_cast<float>(var[f]);
      }
      std::vector<double> sum_gy(c, 0), sum_gy_xc(c, 0);
      for (size_t i = 0; i < x.size(); ++i) {
        sum_gy[feature(i)] += gy[i];
        sum_gy_xc[feature(i)] += gy[i] * (x[i] - mf[feature(i)]);
      }
      const double per = static_cast<double>(n * hw);
      for (size_t i = 0; i < x.size(); ++i) {
        const size_t f = feature(i);
        const double rs = 1 / std::sqrt(vf[f] + eps);
        const double want =
            scale[f] * rs * (gy[i] - sum_gy[f] / per - (x[i] - mf[f]) * sum_gy_xc[f] / per / (vf[f] + eps));
        ASSERT_NEAR(g[0][i], want, 1e-4) << where << " at " << i;
      }
      for (int64_t f = 0; f < c; ++f) {
        EXPECT_NEAR(g[1][f], sum_gy_xc[f] / std::sqrt(vf[f] + eps), 1e-4 * (1 + std::abs(g[1][f]))) << where;
        EXPECT_NEAR(g[2][f], sum_gy[f], 1e-4 * (1 + std::abs(sum_gy[f]))) << where;
      }
    }
  }
  SetGemmThreads(1);
}

// bf16 vector-matrix products (an LLM's logits) read the matrix as stored,
// either way round, with f32 sums rounded once to the bf16 result.
TEST(OpsTest, Bf16VectorTimesMatrixEitherLayout) {
  const int64_t k = 40, n = 24;
  std::vector<double> x(k), w(k * n);
  for (int64_t i = 0; i < k; ++i) x[i] = static_cast<double>((i % 7) - 3) * 0.25;
  for (int64_t i = 0; i < k * n; ++i) w[i] = static_cast<double>((i % 11) - 5) * 0.125;
  const Tensor xt = MakeTensor(ET::kBF16, {1, k}, x);
  // w as [K, N] and as its transpose [N, K].
  std::vector<double> wt(k * n);
  for (int64_t a = 0; a < k; ++a)
    for (int64_t b = 0; b < n; ++b) wt[b * k + a] = w[a * n + b];
  auto kn = Eval(R"(HloModule m
ENTRY e {
  x = bf16[1,40] parameter(0)
  w = bf16[40,24] parameter(1)
  ROOT d = bf16[1,24] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})", {xt, MakeTensor(ET::kBF16, {k, n}, w)});
  auto nk = Eval(R"(HloModule m
ENTRY e {
  x = bf16[1,40] parameter(0)
  w = bf16[24,40] parameter(1)
  ROOT d = bf16[1,24] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})", {xt, MakeTensor(ET::kBF16, {n, k}, wt)});
  ASSERT_EQ(kn.size(), 1u);
  ASSERT_EQ(nk.size(), 1u);
  for (int64_t b = 0; b < n; ++b) {
    double want = 0;
    for (int64_t a = 0; a < k; ++a) want += x[a] * w[a * n + b];
    // Exact in f32 (small multiples of 1/32); bf16 keeps 8 bits.
    EXPECT_NEAR(kn[0][b], want, std::abs(want) / 128 + 1e-6) << b;
    EXPECT_EQ(nk[0][b], kn[0][b]) << b;
  }
}

// A window as large as the input (a weight gradient) is a sum over
// features and pixels: the same as the dot that contracts them, for each
// order of batch and feature in the operands and the result.
TEST(OpsTest, WholeWindowConvolutionIsTheDotOverFeaturesAndPixels) {
  std::vector<double> a(4 * 3 * 5 * 2), b(4 * 6 * 5 * 2);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>((i * 7) % 13) - 6;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>((i * 5) % 11) - 5;
  // lhs [f=4, b=3, 5, 2], rhs [i=4, o=6, 5, 2] (fb01_io01->01bf) against the
  // dot over dims {0, 2, 3}: [b, o].
  auto conv = Eval(R"(HloModule m
ENTRY e {
  x = f32[4,3,5,2] parameter(0)
  w = f32[4,6,5,2] parameter(1)
  ROOT c = f32[1,1,3,6] convolution(x, w), window={size=5x2}, dim_labels=fb01_io01->01bf
})", {F32({4, 3, 5, 2}, a), F32({4, 6, 5, 2}, b)});
  auto dot = Eval(R"(HloModule m
ENTRY e {
  x = f32[4,3,5,2] parameter(0)
  w = f32[4,6,5,2] parameter(1)
  ROOT d = f32[3,6] dot(x, w), lhs_contracting_dims={0,2,3}, rhs_contracting_dims={0,2,3}
})", {F32({4, 3, 5, 2}, a), F32({4, 6, 5, 2}, b)});
  ASSERT_EQ(conv.size(), 1u);
  ASSERT_EQ(dot.size(), 1u);
  EXPECT_EQ(conv[0], dot[0]);
  // Batch and features the other way round in each place (bf01_oi01 over
  // [b, f] = [3, 4] and [o, i] = [6, 4]), the result as [f, b].
  std::vector<double> at(a.size()), bt(b.size());
  for (int f = 0; f < 4; ++f)
    for (int n = 0; n < 3; ++n)
      for (int p = 0; p < 10; ++p) at[(n * 4 + f) * 10 + p] = a[(f * 3 + n) * 10 + p];
  for (int i = 0; i < 4; ++i)
    for (int o = 0; o < 6; ++o)
      for (int p = 0; p < 10; ++p) bt[(o * 4 + i) * 10 + p] = b[(i * 6 + o) * 10 + p];
  auto swapped = Eval(R"(HloModule m
ENTRY e {
  x = f32[3,4,5,2] parameter(0)
  w = f32[6,4,5,2] parameter(1)
  ROOT c = f32[6,3,1,1] convolution(x, w), window={size=5x2}, dim_labels=bf01_oi01->fb01
})", {F32({3, 4, 5, 2}, at), F32({6, 4, 5, 2}, bt)});
  ASSERT_EQ(swapped.size(), 1u);
  for (int n = 0; n < 3; ++n)
    for (int o = 0; o < 6; ++o) EXPECT_EQ(swapped[0][o * 3 + n], dot[0][n * 6 + o]) << n << "," << o;
}

TEST(OpsTest, IntegerDivisionRemainderAndShiftsFollowXla) {
  auto o = Eval(R"(HloModule m
ENTRY e {
  a = s32[5] parameter(0)
  b = s32[5] parameter(1)
  d = s32[5] divide(a, b)
  r = s32[5] remainder(a, b)
  s = s32[5] shift-left(a, b)
  t = s32[5] shift-right-arithmetic(a, b)
  ROOT x = (s32[5], s32[5], s32[5], s32[5]) tuple(d, r, s, t)
})", {S32({5}, {7, -7, 5, -2147483648.0, -8}), S32({5}, {2, 2, 0, -1, 40})});
  EXPECT_THAT(o[0], ElementsAre(3, -3, -1, -2147483648.0, 0));   // trunc; x/0 = -1; MIN/-1 = MIN
  EXPECT_THAT(o[1], ElementsAre(1, -1, 5, 0, -8));               // x%0 = x
  EXPECT_THAT(o[2], ElementsAre(28, -28, 5, 0, 0));              // shift >= 32 -> 0
  EXPECT_THAT(o[3], ElementsAre(1, -2, 5, -1, -1));              // sign fill
}

TEST(OpsTest, CompareSelectClampAndTotalOrder) {
  auto o = Eval(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  lt = pred[4] compare(a, b), direction=LT
  lo = f32[] constant(-1)
  hi = f32[] constant(1)
  c = f32[4] clamp(lo, a, hi)
  s = f32[4] select(lt, a, b)
  t = pred[4] compare(a, b), direction=LT, type=TOTALORDER
  mx = f32[4] maximum(a, b)
  ROOT x = (pred[4], f32[4], f32[4], pred[4], f32[4]) tuple(lt, c, s, t, mx)
})", {F32({4}, {1, -5, NAN, -0.0}), F32({4}, {2, -6, 0, 0})});
  EXPECT_THAT(o[0], ElementsAre(1, 0, 0, 0));
  EXPECT_EQ(o[1][0], 1);
  EXPECT_EQ(o[1][1], -1);
  EXPECT_TRUE(std::isnan(o[1][2]));
  EXPECT_EQ(o[2][0], 1);
  EXPECT_EQ(o[2][1], -6);
  EXPECT_THAT(o[3], ElementsAre(1, 0, 0, 1));  // NaN > everything; -0 < +0
  EXPECT_TRUE(std::isnan(o[4][2]));            // max propagates NaN
}

TEST(OpsTest, Bf16ArithmeticRoundsEachOp) {
  auto o = Eval(R"(HloModule m
ENTRY e {
  a = bf16[2] parameter(0)
  b = bf16[2] parameter(1)
  s = bf16[2] add(a, b)
  ROOT c = f32[2] convert(s)
})", {MakeTensor(ET::kBF16, {2}, {1, 256}), MakeTensor(ET::kBF16, {2}, {0.00390625, 1})});
  // 1 + 2^-8 ties to 1; 256 + 1 = 257 is not a bf16: ties to even 256.
  EXPECT_THAT(o[0], ElementsAre(1, 256));
}

TEST(OpsTest, BroadcastTransposeReshape) {
  auto o = Eval(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  t = f32[3,2] transpose(a), dimensions={1,0}
  v = f32[3] parameter(1)
  b = f32[2,3] broadcast(v), dimensions={1}
  r = f32[6] reshape(t)
  ROOT x = (f32[6], f32[2,3]) tuple(r, b)
})", {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({3}, {7, 8, 9})});
  EXPECT_THAT(o[0], ElementsAre(1, 4, 2, 5, 3, 6));
  EXPECT_THAT(o[1], ElementsAre(7, 8, 9, 7, 8, 9));
}

TEST(OpsTest, LargeTransposeIsBlockedCorrectly) {
  const int R = 67, C = 45;
  std::vector<double> v(R * C);
  for (int i = 0; i < R * C; ++i) v[i] = i;
  auto o = Eval(R"(HloModule m
ENTRY e {
  a = f32[67,45] parameter(0)
  ROOT t = f32[45,67] transpose(a), dimensions={1,0}
})", {F32({R, C}, v)});
  ASSERT_EQ(o[0].size(), v.size());
  for (int i = 0; i < C; ++i)
    for (int j = 0; j < R; ++j) ASSERT_EQ(o[0][i * R + j], j * C + i);
}

TEST(OpsTest, SlicesPadReverseConcat) {
  auto o = Eval(R"(HloModule m
ENTRY e {
  a = f32[6] parameter(0)
  s = f32[3] slice(a), slice={[0:6:2]}
  z = f32[] constant(0)
  p = f32[7] pad(s, z), padding=1_1_1
  n = f32[4] pad(s, z), padding=-1_0_1
  r = f32[6] reverse(a), dimensions={0}
  c = f32[9] concatenate(s, r), dimensions={0}
  ROOT x = (f32[7], f32[9], f32[4]) tuple(p, c, n)
})", {F32({6}, {1, 2, 3, 4, 5, 6})});
  // slice -> 1 3 5; pad 1/1 with interior 1: 0 1 0 3 0 5 0.
  EXPECT_THAT(o[0], ElementsAre(0, 1, 0, 3, 0, 5, 0));
  EXPECT_THAT(o[1], ElementsAre(1, 3, 5, 6, 5, 4, 3, 2, 1));
  // low -1 crops the first element of 1 0 3 0 5.
  EXPECT_THAT(o[2], ElementsAre(0, 3, 0, 5));
}

TEST(OpsTest, DynamicSliceAndUpdateClamp) {
  auto o = Eval(R"(HloModule m
ENTRY e {
  a = f32[5] parameter(0)
  i = s32[] parameter(1)
  d = f32[2] dynamic-slice(a, i), dynamic_slice_sizes={2}
  u = f32[2] constant({9, 8})
  w = f32[5] dynamic-update-slice(a, u, i)
  ROOT x = (f32[2], f32[5]) tuple(d, w)
})", {F32({5}, {1, 2, 3, 4, 5}), S32({}, {7})});
  EXPECT_THAT(o[0], ElementsAre(4, 5));           // start clamped to 3
  EXPECT_THAT(o[1], ElementsAre(1, 2, 3, 9, 8));
}

TEST(OpsTest, DotWithBatchAndContractingDims) {
  // lhs [b=2, k=2, m=1], rhs [b=2, n=2, k=2]: out[b, m, n] = sum_k l[b,k,m] r[b,n,k].
  auto o = Eval(R"(HloModule m
ENTRY e {
  l = f32[2,2,1] parameter(0)
  r = f32[2,2,2] parameter(1)
  ROOT d = f32[2,1,2] dot(l, r), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={2}
})", {F32({2, 2, 1}, {1, 2, 3, 4}), F32({2, 2, 2}, {1, 10, 100, 1000, 2, 3, 4, 5})});
  // b0: [1,2]·[1,10]=21, [1,2]·[100,1000]=2100; b1: [3,4]·[2,3]=18, ·[4,5]=32.
  EXPECT_THAT(o[0], ElementsAre(21, 2100, 18, 32));
}

TEST(OpsTest, IntegerDotAndMatmulTransposed) {
  auto o = Eval(R"(HloModule m
ENTRY e {
  l = s32[2,2] parameter(0)
  r = s32[2,2] parameter(1)
  ROOT d = s32[2,2] dot(l, r), lhs_contracting_dims={0}, rhs_contracting_dims={1}
})", {S32({2, 2}, {1, 2, 3, 4}), S32({2, 2}, {5, 6, 7, 8})});
  // l^T r^T = [[1,3],[2,4]] x [[5,7],[6,8]] = [[23,31],[34,46]]
  EXPECT_THAT(o[0], ElementsAre(23, 31, 34, 46));
}

TEST(OpsTest, ConvolutionWithPaddingStrideAndGroups) {
  // 1-D: input [N=1, C=2, W=4] (b0f... as bf0), kernel [O=2, I=1, W=2],
  // feature_group_count=2, pad 1 each side, stride 2.
  auto o = Eval(R"(HloModule m
ENTRY e {
  x = f32[1,2,4] parameter(0)
  k = f32[2,1,2] parameter(1)
  ROOT c = f32[1,2,3] convolution(x, k), window={size=2 stride=2 pad=1_1}, dim_labels=bf0_oi0->bf0, feature_group_count=2
})", {F32({1, 2, 4}, {1, 2, 3, 4, 10, 20, 30, 40}), F32({2, 1, 2}, {1, 1, 1, -1})});
  // Channel 0 padded: 0 1 2 3 4 0, windows at 0,2,4: (0+1)=1, (2+3)=5, (4+0)=4.
  // Channel 1 padded: 0 10 20 30 40 0: (0-10)=-10, (20-30)=-10, (40-0)=40.
  EXPECT_THAT(o[0], ElementsAre(1, 5, 4, -10, -10, 40));
}

TEST(OpsTest, ConvolutionWithDilation) {
  auto o = Eval(R"(HloModule m
ENTRY e {
  x = f32[1,5,1] parameter(0)
  k = f32[2,1,1] parameter(1)
  ROOT c = f32[1,3,1] convolution(x, k), window={size=2 rhs_dilate=2}, dim_labels=b0f_0io->b0f
})", {F32({1, 5, 1}, {1, 2, 3, 4, 5}), F32({2, 1, 1}, {1, 10})});
  EXPECT_THAT(o[0], ElementsAre(31, 42, 53));  // x[i] + 10 x[i+2]
}

// A straightforward NCHW convolution (kernel OIHW), the definition of
// XLA's window attributes spelled out, to check the planned kernels against.
struct Conv2dCase {
  int64_t n, c, h, w, o, kh, kw;
  int64_t pad_h, pad_w, base_h, base_w;  // symmetric padding, lhs dilation
  bool reverse;
  int64_t feature_groups = 1, batch_groups = 1;
};

std::vector<double> ReferenceConv2d(const Conv2dCase& k, const std::vector<double>& x,
                                    const std::vector<double>& wt, int64_t* oh, int64_t* ow) {
  const int64_t dh = (k.h - 1) * k.base_h + 1, dw = (k.w - 1) * k.base_w + 1;
  *oh = dh + 2 * k.pad_h - k.kh + 1;
  *ow = dw + 2 * k.pad_w - k.kw + 1;
  const int64_t groups = k.feature_groups * k.batch_groups, out_n = k.n / k.batch_groups;
  const int64_t ci = k.c / k.feature_groups, og = k.o / groups;
  std::vector<double> y(out_n * k.o * *oh * *ow, 0.0);
  for (int64_t n = 0; n < out_n; ++n)
    for (int64_t o = 0; o < k.o; ++o) {
      const int64_t g = o / og;
      const int64_t img = k.batch_groups > 1 ? g * out_n + n : n;
      const int64_t c_first = k.batch_groups > 1 ? 0 : g * ci;
      for (int64_t r = 0; r < *oh; ++r)
        for (int64_t q = 0; q < *ow; ++q) {
          double acc = 0;
          for (int64_t c = 0; c < ci; ++c)
            for (int64_t i = 0; i < k.kh; ++i)
              for (int64_t j = 0; j < k.kw; ++j) {
                const int64_t ph = r + i - k.pad_h, pw = q + j - k.pad_w;  // in the dilated input
                if (ph < 0 || pw < 0 || ph >= dh || pw >= dw || ph % k.base_h || pw % k.base_w) continue;
                const int64_t wi = k.reverse ? k.kh - 1 - i : i, wj = k.reverse ? k.kw - 1 - j : j;
                acc += x[((img * k.c + c_first + c) * k.h + ph / k.base_h) * k.w + pw / k.base_w] *
                       wt[((o * ci + c) * k.kh + wi) * k.kw + wj];
              }
          y[((n * k.o + o) * *oh + r) * *ow + q] = acc;
        }
    }
  return y;
}

// Operands of type `in` (f32 unless given), result f32. The test values
// (quarters and halves in [-1.5, 1.5]) are exact in bf16 and f8e4m3fn, and
// so are the products and sums in f32.
void ExpectConvMatchesReference(const Conv2dCase& k, ET in_type = ET::kF32) {
  const int64_t ci = k.c / k.feature_groups;
  std::vector<double> x(k.n * k.c * k.h * k.w), wt(k.o * ci * k.kh * k.kw);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 37) % 11) / 4 - 1.25;
  for (size_t i = 0; i < wt.size(); ++i) wt[i] = static_cast<double>((i * 13) % 7) / 2 - 1.5;
  int64_t oh = 0, ow = 0;
  const std::vector<double> want = ReferenceConv2d(k, x, wt, &oh, &ow);
  const std::string type(hlo::ElementTypeName(in_type));
  const std::string in = absl::StrCat(type, "[", k.n, ",", k.c, ",", k.h, ",", k.w, "]");
  const std::string ker = absl::StrCat(type, "[", k.o, ",", ci, ",", k.kh, ",", k.kw, "]");
  const std::string out = absl::StrCat("f32[", k.n / k.batch_groups, ",", k.o, ",", oh, ",", ow, "]");
  const std::string window = absl::StrCat(
      "window={size=", k.kh, "x", k.kw, " pad=", k.pad_h, "_", k.pad_h, "x", k.pad_w, "_", k.pad_w,
      " lhs_dilate=", k.base_h, "x", k.base_w, k.reverse ? " rhs_reversal=1x1" : "", "}");
  const std::string text = absl::StrCat(
      "HloModule m\nENTRY e {\n  x = ", in, " parameter(0)\n  k = ", ker, " parameter(1)\n  ROOT c = ", out,
      " convolution(x, k), ", window, ", dim_labels=bf01_oi01->bf01, feature_group_count=", k.feature_groups,
      ", batch_group_count=", k.batch_groups, "\n}\n");
  auto o = Eval(text, {MakeTensor(in_type, {k.n, k.c, k.h, k.w}, x),
                       MakeTensor(in_type, {k.o, ci, k.kh, k.kw}, wt)});
  ASSERT_EQ(o.size(), 1u) << text;
  ASSERT_EQ(o[0].size(), want.size()) << text;
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(o[0][i], want[i], 1e-4) << "element " << i << "\n" << text;
}

// Tap-by-tap windows and dense (im2col) ones.
const Conv2dCase kConvCases[] = {
    // Gradient-style windows (lhs dilation, k-1 padding, reversed kernel):
    // most kernel positions meet padding or holes.
    {.n = 3, .c = 4, .h = 5, .w = 4, .o = 6, .kh = 3, .kw = 3, .pad_h = 2, .pad_w = 2, .base_h = 2,
     .base_w = 2, .reverse = true, .feature_groups = 2},
    {.n = 4, .c = 2, .h = 1, .w = 6, .o = 2, .kh = 1, .kw = 3, .pad_h = 0, .pad_w = 2, .base_h = 1,
     .base_w = 2, .reverse = false, .batch_groups = 2},
    // Padding of a whole kernel on each side of a one-pixel input.
    {.n = 2, .c = 8, .h = 1, .w = 1, .o = 5, .kh = 1, .kw = 6, .pad_h = 0, .pad_w = 5, .base_h = 1,
     .base_w = 1, .reverse = true},
    // Dense windows (im2col).
    {.n = 2, .c = 3, .h = 6, .w = 5, .o = 4, .kh = 3, .kw = 2, .pad_h = 1, .pad_w = 0, .base_h = 1,
     .base_w = 1, .reverse = false},
};

TEST(OpsTest, ConvolutionsMostlyInPaddingMatchTheDefinition) {
  for (const Conv2dCase& k : kConvCases) ExpectConvMatchesReference(k);
}

// The depthwise gradients of a MobileNet step, which run plane by plane:
// the input gradient (lhs-dilated, reversed kernel, one feature per
// group) and the weight gradient (batch groups, one output feature per
// group), in NCHW and with more than one image per group.
TEST(OpsTest, DepthwiseGradientConvolutionsMatchTheDefinition) {
  const Conv2dCase cases[] = {
      {.n = 2, .c = 6, .h = 5, .w = 4, .o = 6, .kh = 3, .kw = 3, .pad_h = 2, .pad_w = 2, .base_h = 2,
       .base_w = 2, .reverse = true, .feature_groups = 6},
      {.n = 3, .c = 5, .h = 6, .w = 7, .o = 5, .kh = 3, .kw = 2, .pad_h = 1, .pad_w = 0, .base_h = 1,
       .base_w = 3, .reverse = false, .feature_groups = 5},
      {.n = 6, .c = 4, .h = 7, .w = 7, .o = 6, .kh = 5, .kw = 5, .pad_h = 1, .pad_w = 1, .base_h = 1,
       .base_w = 1, .reverse = false, .batch_groups = 6},
      {.n = 12, .c = 3, .h = 9, .w = 8, .o = 6, .kh = 7, .kw = 6, .pad_h = 1, .pad_w = 2, .base_h = 1,
       .base_w = 1, .reverse = false, .batch_groups = 6},
      // A window wider than the output (dots along kernel rows), as the
      // weight gradients of big activations have.
      {.n = 6, .c = 2, .h = 9, .w = 30, .o = 6, .kh = 7, .kw = 28, .pad_h = 1, .pad_w = 1, .base_h = 1,
       .base_w = 1, .reverse = false, .batch_groups = 6},
  };
  for (const Conv2dCase& k : cases) ExpectConvMatchesReference(k);
  // The weight gradient of a stride-2 layer: its window (the output
  // gradient) dilated by 2, read against every other input pixel.
  auto ramp = [](int64_t n, double scale) {
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i % 29) * scale;
    return v;
  };
  for (int64_t width : {24, 34, 40}) {
    const int64_t gw = width / 2;
    const std::vector<double> x = ramp(2 * 3 * 8 * width, 0.25), g = ramp(2 * 3 * 4 * gw, -0.5);
    auto o = Eval(absl::StrCat(R"(HloModule m
ENTRY e {
  x = f32[2,3,8,)", width, R"(] parameter(0)
  g = f32[2,3,4,)", gw, R"(] parameter(1)
  ROOT w = f32[3,3,1,3] convolution(x, g), window={size=4x)", gw, R"( pad=1_0x1_0 rhs_dilate=2x2}, dim_labels=fb01_io01->01bf, batch_group_count=3
})"), {MakeTensor(ET::kF32, {2, 3, 8, width}, x), MakeTensor(ET::kF32, {2, 3, 4, gw}, g)});
    ASSERT_EQ(o.size(), 1u);
    // dW[kh][kw][c] = sum over n, y, x of x[n][c][2y + kh - 1][2x + kw - 1] g[n][c][y][x].
    for (int64_t kh = 0; kh < 3; ++kh)
      for (int64_t kw = 0; kw < 3; ++kw)
        for (int64_t c = 0; c < 3; ++c) {
          double want = 0;
          for (int64_t n = 0; n < 2; ++n)
            for (int64_t y = 0; y < 4; ++y)
              for (int64_t xx = 0; xx < gw; ++xx) {
                const int64_t iy = 2 * y + kh - 1, ix = 2 * xx + kw - 1;
                if (iy < 0 || iy >= 8 || ix < 0 || ix >= width) continue;
                want += x[((n * 3 + c) * 8 + iy) * width + ix] * g[((n * 3 + c) * 4 + y) * gw + xx];
              }
          ASSERT_NEAR(o[0][(kh * 3 + kw) * 3 + c], want, 1e-3 * std::abs(want) + 1e-3)
              << "width " << width << " tap " << kh << "," << kw << " channel " << c;
        }
  }
}

// oneDNN's convolution primitive itself, on the windows it takes (padding,
// feature groups), against the definition.
TEST(OpsTest, DnnlConvolutionMatchesTheDefinition) {
  if (Dnnl() == nullptr) {
    GTEST_SKIP() << "libdnnl.so.2 is not installed (or a sanitizer build)";
  }
  const Conv2dCase cases[] = {
      {.n = 2, .c = 3, .h = 6, .w = 5, .o = 4, .kh = 3, .kw = 2, .pad_h = 1, .pad_w = 0, .base_h = 1,
       .base_w = 1, .reverse = false},
      {.n = 3, .c = 8, .h = 7, .w = 9, .o = 6, .kh = 3, .kw = 3, .pad_h = 1, .pad_w = 2, .base_h = 1,
       .base_w = 1, .reverse = false, .feature_groups = 2},
  };
  for (const Conv2dCase& k : cases) {
    const int64_t ci = k.c / k.feature_groups;
    std::vector<double> x(k.n * k.c * k.h * k.w), wt(k.o * ci * k.kh * k.kw);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 37) % 11) / 4 - 1.25;
    for (size_t i = 0; i < wt.size(); ++i) wt[i] = static_cast<double>((i * 13) % 7) / 2 - 1.5;
    int64_t oh = 0, ow = 0;
    const std::vector<double> want = ReferenceConv2d(k, x, wt, &oh, &ow);
    auto conv = DnnlConvolution::Create({ET::kF32, ET::kF32, k.n, k.c, k.o, k.feature_groups, {k.h, k.w}, {k.kh, k.kw},
                                         {oh, ow}, {1, 1}, {k.pad_h, k.pad_w}, {k.pad_h, k.pad_w}, {1, 1}});
    ASSERT_NE(conv, nullptr) << "oneDNN refused a plain 2-D convolution";
    std::vector<float> xf(x.begin(), x.end()), wf(wt.begin(), wt.end()), y(want.size(), -7.0f);
    ASSERT_TRUE(conv->Run(xf.data(), wf.data(), y.data()));
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(y[i], want[i], 1e-4) << "element " << i;
  }
  // What it does not take: negative padding (cropping).
  EXPECT_EQ(DnnlConvolution::Create({ET::kF32, ET::kF32, 1, 1, 1, 1, {4}, {2}, {3}, {1}, {-1}, {0}, {1}}), nullptr);
}

// bf16 and f8 images and kernels: gathered as stored, multiplied on the
// bf16 matmul where the CPU has it (which must then have run).
TEST(OpsTest, Bf16AndF8ConvolutionsMatchTheDefinition) {
  for (ET type : {ET::kBF16, ET::kF8E4M3FN}) {
    const int64_t before = LowPrecisionGemmProducts();
    for (const Conv2dCase& k : kConvCases) ExpectConvMatchesReference(k, type);
    if (LowPrecisionGemmAvailable(ET::kBF16)) {
      EXPECT_GT(LowPrecisionGemmProducts(), before) << hlo::ElementTypeName(type);
    }
  }
}

TEST(OpsTest, ReduceSumAndVariadicArgmax) {
  auto o = Eval(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(bv, av), direction=GT
  v = f32[] select(gt, bv, av)
  i = s32[] select(gt, bi, ai)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  a = f32[2,3] parameter(0)
  z = f32[] constant(0)
  s0 = f32[3] reduce(a, z), dimensions={0}, to_apply=add
  s1 = f32[2] reduce(a, z), dimensions={1}, to_apply=add
  io = s32[2,3] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  m1 = s32[] constant(-1)
  am = (f32[2], s32[2]) reduce(a, io, ninf, m1), dimensions={1}, to_apply=argmax
  v = f32[2] get-tuple-element(am), index=0
  i = s32[2] get-tuple-element(am), index=1
  ROOT x = (f32[3], f32[2], f32[2], s32[2]) tuple(s0, s1, v, i)
})", {F32({2, 3}, {1, 5, 3, 7, 2, 9})});
  EXPECT_THAT(o[0], ElementsAre(8, 7, 12));
  EXPECT_THAT(o[1], ElementsAre(9, 18));
  EXPECT_THAT(o[2], ElementsAre(5, 9));
  EXPECT_THAT(o[3], ElementsAre(1, 2));
}

// A bf16 (sum, sum) variadic reduce of 6144 values per output: its
// accumulators must keep f32 precision while reducing (as the plain
// reduce's do), rounding to bf16 once.
TEST(OpsTest, Bf16VariadicReduceAccumulatesInF32) {
  const int64_t rows = 16, n = 6144;
  std::vector<double> a(rows * n), b(rows * n);
  for (int64_t i = 0; i < rows * n; ++i) {
    a[i] = 0.5 + 0.5 * std::sin(0.001 * static_cast<double>(i * i % 100003));
    b[i] = 1.0 + std::cos(0.7 * static_cast<double>(i));
  }
  const Tensor ta = MakeTensor(ET::kBF16, {rows, n}, a), tb = MakeTensor(ET::kBF16, {rows, n}, b);
  const std::vector<double> va = Values(ta), vb = Values(tb);
  auto r = RunText(R"(HloModule m
r {
  a0 = bf16[] parameter(0)
  b0 = bf16[] parameter(1)
  a1 = bf16[] parameter(2)
  b1 = bf16[] parameter(3)
  s = bf16[] add(a0, a1)
  t = bf16[] add(b0, b1)
  ROOT u = (bf16[], bf16[]) tuple(s, t)
}
ENTRY e {
  a = bf16[16,6144] parameter(0)
  b = bf16[16,6144] parameter(1)
  z = bf16[] constant(0)
  ROOT y = (bf16[16], bf16[16]) reduce(a, b, z, z), dimensions={1}, to_apply=r
})", {ta, tb});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<double> errors;
  for (int k = 0; k < 2; ++k) {
    const std::vector<double>& v = k == 0 ? va : vb;
    const std::vector<double> got = Values((*r)[k]);
    for (int64_t row = 0; row < rows; ++row) {
      double exact = 0;
      for (int64_t i = 0; i < n; ++i) exact += v[row * n + i];
      errors.push_back(std::fabs(got[row] - exact) / exact);
    }
  }
  std::nth_element(errors.begin(), errors.begin() + errors.size() / 2, errors.end());
  const double median = errors[errors.size() / 2];
  RecordProperty("median_relative_error", absl::StrCat(median));
  EXPECT_LT(median, 0.005);
}

TEST(OpsTest, ReduceWindowMaxPoolAndSelectAndScatter) {
  auto o = Eval(R"(HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[5] parameter(0)
  ninf = f32[] constant(-inf)
  p = f32[2] reduce-window(x, ninf), window={size=2 stride=2}, to_apply=max
  src = f32[2] constant({10, 20})
  z = f32[] constant(0)
  s = f32[5] select-and-scatter(x, src, z), window={size=2 stride=2}, select=ge, scatter=add
  ROOT t = (f32[2], f32[5]) tuple(p, s)
})", {F32({5}, {1, 3, 4, 2, 9})});
  EXPECT_THAT(o[0], ElementsAre(3, 4));
  EXPECT_THAT(o[1], ElementsAre(0, 10, 20, 0, 0));
}

TEST(OpsTest, GatherRowsWithClampedIndices) {
  auto o = Eval(R"(HloModule m
ENTRY e {
  a = f32[3,2] parameter(0)
  i = s32[3] parameter(1)
  ROOT g = f32[3,2] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
})", {F32({3, 2}, {1, 2, 3, 4, 5, 6}), S32({3}, {2, 0, 9})});
  EXPECT_THAT(o[0], ElementsAre(5, 6, 1, 2, 5, 6));  // 9 clamps to 2
}

// Slices along the operand's last dim are copied a row at a time; the same
// gathers with that dim elsewhere in the output go element by element.
// Both against the definition, with clamped starts.
TEST(OpsTest, GatherRowsAsRunsMatchTheDefinition) {
  std::vector<double> a(6 * 5);
  for (size_t v = 0; v < a.size(); ++v) a[v] = static_cast<double>(v) * 0.5 - 3.0;
  const std::vector<double> rows = {4, 0, 9, -2, 5, 1};  // 9 and -2 clamp
  auto clamp = [](double i, int64_t hi) { return std::clamp<int64_t>(static_cast<int64_t>(i), 0, hi); };
  // An embedding lookup: [2, 3] tokens of 5-wide rows.
  auto lookup = Eval(R"(HloModule m
ENTRY e {
  a = f32[6,5] parameter(0)
  i = s32[2,3,1] parameter(1)
  ROOT g = f32[2,3,5] gather(a, i), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,5}
})", {F32({6, 5}, a), S32({2, 3, 1}, rows)});
  std::vector<float> want;
  for (double r : rows)
    for (int64_t j = 0; j < 5; ++j) want.push_back(static_cast<float>(a[clamp(r, 5) * 5 + j]));
  EXPECT_THAT(lookup[0], ElementsAreArray(want));
  // The rows' dim first in the output: element by element.
  auto across = Eval(R"(HloModule m
ENTRY e {
  a = f32[6,5] parameter(0)
  i = s32[6] parameter(1)
  ROOT g = f32[5,6] gather(a, i), offset_dims={0}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}
})", {F32({6, 5}, a), S32({6}, rows)});
  want.clear();
  for (int64_t j = 0; j < 5; ++j)
    for (double r : rows) want.push_back(static_cast<float>(a[clamp(r, 5) * 5 + j]));
  EXPECT_THAT(across[0], ElementsAreArray(want));
  // 2 x 3 windows at (row, column) starts: runs of 3 within rows of 5,
  // the column start clamped to 2.
  const std::vector<double> starts = {1, 4, 5, 0, -1, 2};
  auto windows = Eval(R"(HloModule m
ENTRY e {
  a = f32[6,5] parameter(0)
  i = s32[3,2] parameter(1)
  ROOT g = f32[3,2,3] gather(a, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3}
})", {F32({6, 5}, a), S32({3, 2}, starts)});
  want.clear();
  for (int64_t w = 0; w < 3; ++w)
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t c = 0; c < 3; ++c)
        want.push_back(static_cast<float>(a[(clamp(starts[2 * w], 4) + r) * 5 + clamp(starts[2 * w + 1], 2) + c]));
  EXPECT_THAT(windows[0], ElementsAreArray(want));
}

TEST(OpsTest, ScatterAddsDuplicatesAndSkipsOutOfBounds) {
  auto o = Eval(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  a = f32[4] parameter(0)
  i = s32[4,1] parameter(1)
  u = f32[4] parameter(2)
  ROOT s = f32[4] scatter(a, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})", {F32({4}, {1, 1, 1, 1}), S32({4, 1}, {1, 1, 7, -1}), F32({4}, {10, 20, 30, 40})});
  EXPECT_THAT(o[0], ElementsAre(1, 31, 1, 1));
}

TEST(OpsTest, SortIsStableAndCarriesOperands) {
  auto o = Eval(R"(HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=GT
}
ENTRY e {
  k = f32[5] parameter(0)
  v = s32[5] iota(), iota_dimension=0
  ROOT s = (f32[5], s32[5]) sort(k, v), dimensions={0}, to_apply=cmp, is_stable=true
})", {F32({5}, {2, 9, 2, 5, 9})});
  EXPECT_THAT(o[0], ElementsAre(9, 9, 5, 2, 2));
  EXPECT_THAT(o[1], ElementsAre(1, 4, 3, 0, 2));
}

TEST(OpsTest, WhileConditionalCallAndMap) {
  auto o = Eval(R"(HloModule m
cond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  two = f32[] constant(2)
  ni = s32[] add(i, one)
  nv = f32[] multiply(v, two)
  ROOT t = (s32[], f32[]) tuple(ni, nv)
}
neg {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
id {
  x = f32[] parameter(0)
  ROOT c = f32[] copy(x)
}
sq {
  x = f32[] parameter(0)
  ROOT m = f32[] multiply(x, x)
}
ENTRY e {
  x = f32[] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[]) tuple(z, x)
  w = (s32[], f32[]) while(init), condition=cond, body=body
  r = f32[] get-tuple-element(w), index=1
  b = s32[] parameter(1)
  c = f32[] conditional(b, r, r), branch_computations={neg, id}
  cl = f32[] call(c), to_apply=sq
  v = f32[3] parameter(2)
  mp = f32[3] map(v), dimensions={0}, to_apply=sq
  ROOT t = (f32[], f32[], f32[3]) tuple(c, cl, mp)
})", {F32({}, {3}), S32({}, {0}), F32({3}, {1, 2, 3})});
  if (o.empty()) return;  // reported by Eval
  EXPECT_THAT(o[0], ElementsAre(-48));  // 3 * 2^4, negated by branch 0
  EXPECT_THAT(o[1], ElementsAre(2304));
  EXPECT_THAT(o[2], ElementsAre(1, 4, 9));
}

// Loop state leaves passed through, swapped with each other, and updated,
// in one loop: each keeps its own value across the double buffering.
TEST(OpsTest, WhileStateSwappedPassedThroughAndUpdated) {
  auto o = Eval(R"(HloModule m
cond {
  p = (s32[], f32[2], f32[2], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[2], f32[2], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[2] get-tuple-element(p), index=1
  b = f32[2] get-tuple-element(p), index=2
  w = f32[2] get-tuple-element(p), index=3
  one = s32[] constant(1)
  ni = s32[] add(i, one)
  nb = f32[2] add(b, w)
  ROOT t = (s32[], f32[2], f32[2], f32[2]) tuple(ni, nb, a, w)
}
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  w = f32[2] parameter(2)
  z = s32[] constant(0)
  init = (s32[], f32[2], f32[2], f32[2]) tuple(z, a, b, w)
  ROOT r = (s32[], f32[2], f32[2], f32[2]) while(init), condition=cond, body=body
})", {F32({2}, {1, 2}), F32({2}, {10, 20}), F32({2}, {100, 200})});
  if (o.empty()) return;  // reported by Eval
  // (a, b) -> (b + w, a): after 3 trips a = a0 + 2w... traced by hand:
  // trip 1: (b0 + w, a0); trip 2: (a0 + w, b0 + w); trip 3: (b0 + 2w, a0 + w).
  EXPECT_THAT(o[0], ElementsAre(3));
  EXPECT_THAT(o[1], ElementsAre(210, 420));
  EXPECT_THAT(o[2], ElementsAre(101, 202));
  EXPECT_THAT(o[3], ElementsAre(100, 200));
}

TEST(OpsTest, LoopFusionWithBroadcastOfParameter) {
  auto o = Eval(R"(HloModule m
fused {
  a = f32[2,3] parameter(0)
  b = f32[3] parameter(1)
  bb = f32[2,3] broadcast(b), dimensions={1}
  s = f32[] parameter(2)
  sb = f32[2,3] broadcast(s), dimensions={}
  m = f32[2,3] multiply(a, bb)
  ROOT r = f32[2,3] add(m, sb)
}
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3] parameter(1)
  s = f32[] parameter(2)
  ROOT f = f32[2,3] fusion(a, b, s), kind=kLoop, calls=fused
})", {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({3}, {10, 100, 1000}), F32({}, {0.5})});
  EXPECT_THAT(o[0], ElementsAre(10.5, 200.5, 3000.5, 40.5, 500.5, 6000.5));
}

TEST(OpsTest, LargeFusionSplitsAcrossThreadsCorrectly) {
  const int n = 300000;
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = i % 1000;
  auto o = Eval(R"(HloModule m
fused {
  a = f32[300000] parameter(0)
  i = f32[300000] iota(), iota_dimension=0
  ROOT r = f32[300000] add(a, i)
}
ENTRY e {
  a = f32[300000] parameter(0)
  ROOT f = f32[300000] fusion(a), kind=kLoop, calls=fused
})", {F32({n}, v)});
  ASSERT_EQ(o[0].size(), static_cast<size_t>(n));
  for (int i = 0; i < n; i += 997) ASSERT_EQ(o[0][i], (i % 1000) + i) << i;
  EXPECT_EQ(o[0][n - 1], ((n - 1) % 1000) + (n - 1));
}

TEST(OpsTest, TranscendentalsMatchLibm) {
  std::vector<double> xs = {-20, -3.5, -0.7, -0.1, 0, 1e-5, 0.3, 0.62, 0.63, 2, 9, 40, 88, 89};
  auto o = Eval(R"(HloModule m
ENTRY e {
  a = f32[14] parameter(0)
  e = f32[14] exponential(a)
  t = f32[14] tanh(a)
  l = f32[14] logistic(a)
  ab = f32[14] abs(a)
  g = f32[14] log(ab)
  ROOT x = (f32[14], f32[14], f32[14], f32[14]) tuple(e, t, l, g)
})", {F32({14}, xs)});
  for (size_t i = 0; i < xs.size(); ++i) {
    double x = static_cast<float>(xs[i]);
    auto near = [](double got, double want_d) {
      double want = static_cast<float>(want_d);  // results are f32
      if (std::isinf(want)) return got == want;
      return std::fabs(got - want) <= 3e-7 * std::fabs(want) + 1e-37;
    };
    EXPECT_TRUE(near(o[0][i], std::exp(x))) << x << " exp " << o[0][i];
    EXPECT_TRUE(near(o[1][i], std::tanh(x))) << x << " tanh " << o[1][i];
    EXPECT_TRUE(near(o[2][i], 1 / (1 + std::exp(-x)))) << x << " logistic " << o[2][i];
    EXPECT_TRUE(near(o[3][i], std::log(std::fabs(x)))) << x << " log " << o[3][i];
  }
}

TEST(OpsTest, ReducePrecisionAndBitcastConvert) {
  auto o = Eval(R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  r = f32[2] reduce-precision(a), exponent_bits=8, mantissa_bits=7
  b = s32[2] bitcast-convert(a)
  ROOT t = (f32[2], s32[2]) tuple(r, b)
})", {F32({2}, {1.0 + 1.0 / 512, 1})});
  EXPECT_THAT(o[0], ElementsAre(1, 1));  // like bf16 rounding
  EXPECT_EQ(o[1][1], 0x3f800000);
}

TEST(OpsTest, GemmCustomCallRunsAsDot) {
  auto o = Eval(R"(HloModule m
ENTRY e {
  a = f32[2,2] parameter(0)
  b = f32[2,2] parameter(1)
  ROOT c = f32[2,2] custom-call(a, b), custom_call_target="__onednn$matmul"
})", {F32({2, 2}, {1, 2, 3, 4}), F32({2, 2}, {5, 6, 7, 8})});
  EXPECT_THAT(o[0], ElementsAre(19, 22, 43, 50));
}

TEST(OpsTest, TopKAndCholesky) {
  auto o = Eval(R"(HloModule m
ENTRY e {
  a = f32[5] parameter(0)
  t = (f32[2], s32[2]) topk(a), k=2, largest=true
  v = f32[2] get-tuple-element(t), index=0
  i = s32[2] get-tuple-element(t), index=1
  m = f32[2,2] parameter(1)
  c = f32[2,2] cholesky(m), lower=true
  ROOT x = (f32[2], s32[2], f32[2,2]) tuple(v, i, c)
})", {F32({5}, {3, 9, 1, 9, 4}), F32({2, 2}, {4, 2, 2, 5})});
  ASSERT_EQ(o.size(), 3u);
  EXPECT_THAT(o[0], ElementsAre(9, 9));
  EXPECT_THAT(o[1], ElementsAre(1, 3));
  EXPECT_THAT(o[2], ElementsAre(2, 0, 1, 2));  // L = [[2,0],[1,2]]
}

// The solve loops trust the shapes to fit the options; ones that do not
// are refused when the plan is built instead of writing past the result.
TEST(OpsTest, LinearAlgebraShapesThatDoNotFitAreRefused) {
  for (const char* op : {
           "f32[3,1] triangular-solve(a, b), left_side=false, lower=true",  // b needs 2 columns
           "f32[3,1] triangular-solve(a, b), left_side=true, lower=true",   // b needs 2 rows
       }) {
    auto exe = BuildText(absl::StrCat("HloModule m\nENTRY e {\n  a = f32[2,2] parameter(0)\n"
                                      "  b = f32[3,1] parameter(1)\n  ROOT t = ", op, "\n}\n"));
    ASSERT_FALSE(exe.ok()) << op;
    EXPECT_NE(std::string(exe.status().message()).find("do not match its options"), std::string::npos)
        << exe.status();
  }
  auto exe = BuildText("HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n"
                       "  ROOT c = f32[2,3] cholesky(a), lower=true\n}\n");
  ASSERT_FALSE(exe.ok());
  EXPECT_NE(std::string(exe.status().message()).find("non-square"), std::string::npos) << exe.status();
}

TEST(OpsTest, SingleDeviceCollectivesAreIdentity) {
  auto o = Eval(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  a = f32[3] parameter(0)
  r = f32[3] all-reduce(a), replica_groups={}, to_apply=add
  g = f32[3] all-gather(r), replica_groups={{0}}, dimensions={0}
  ROOT p = f32[3] collective-permute(g), source_target_pairs={{0,0}}
})", {F32({3}, {1, 2, 3})});
  EXPECT_THAT(o[0], ElementsAre(1, 2, 3));
}

// A two-replica world simulated by hand: this device is replica 1, the
// other replica holds `peer`.
class FakeCollectives : public CollectiveOps {
 public:
  std::vector<float> peer;
  absl::Status AllReduce(const CollectiveCall&, hlo::Opcode op, const void* in, void* out,
                         int64_t count) override {
    for (int64_t i = 0; i < count; ++i)
      static_cast<float*>(out)[i] = static_cast<const float*>(in)[i] + peer[i];
    return absl::OkStatus();
  }
  absl::Status AllGather(const CollectiveCall&, const void* in, void* out, int64_t bytes) override {
    std::memcpy(out, peer.data(), bytes);  // replica 0 first
    std::memcpy(static_cast<char*>(out) + bytes, in, bytes);
    return absl::OkStatus();
  }
  absl::Status CollectivePermute(const CollectiveCall&, const std::vector<std::pair<int64_t, int64_t>>&,
                                 const void*, void* out, int64_t bytes) override {
    std::memcpy(out, peer.data(), bytes);
    return absl::OkStatus();
  }
};

TEST(OpsTest, CollectivesGoThroughTheInterface) {
  FakeCollectives fake;
  fake.peer = {10, 20, 30, 40};
  ExecOptions opts;
  opts.collectives = &fake;
  opts.replica_id = 1;
  opts.replica_count = 2;
  auto r = RunText(R"(HloModule m, replica_count=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  a = f32[2,2] parameter(0)
  s = f32[2,2] all-reduce(a), replica_groups={{0,1}}, to_apply=add
  g = f32[2,4] all-gather(a), replica_groups={{0,1}}, dimensions={1}
  rs = f32[1,2] reduce-scatter(a), replica_groups={{0,1}}, dimensions={0}, to_apply=add
  id = u32[] replica-id()
  ROOT t = (f32[2,2], f32[2,4], f32[1,2], u32[]) tuple(s, g, rs, id)
})", {F32({2, 2}, {1, 2, 3, 4})}, opts);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Values((*r)[0]), ElementsAre(11, 22, 33, 44));
  EXPECT_THAT(Values((*r)[1]), ElementsAre(10, 20, 1, 2, 30, 40, 3, 4));
  EXPECT_THAT(Values((*r)[2]), ElementsAre(33, 44));  // replica 1 keeps row 1
  EXPECT_THAT(Values((*r)[3]), ElementsAre(1));
}

TEST(OpsTest, ComplexArithmeticAndDot) {
  auto r = RunText(R"(HloModule m
ENTRY e {
  re = f32[2] parameter(0)
  im = f32[2] parameter(1)
  z = c64[2] complex(re, im)
  p = c64[2] multiply(z, z)
  a = f32[2] abs(z)
  i = f32[2] imag(p)
  zm = c64[1,2] reshape(z)
  zc = c64[2,1] reshape(z)
  d = c64[1,1] dot(zm, zc), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (c64[2], f32[2], f32[2], c64[1,1]) tuple(p, a, i, d)
})", {F32({2}, {3, 1}), F32({2}, {4, -1})});
  ASSERT_TRUE(r.ok()) << r.status();
  auto parts = [](const Tensor& t) {
    std::vector<float> v(t.element_count() * 2);
    std::memcpy(v.data(), t.data(), v.size() * 4);
    return v;
  };
  // (3+4i)^2 = -7+24i; (1-i)^2 = -2i.
  EXPECT_THAT(parts((*r)[0]), ElementsAre(-7, 24, 0, -2));
  EXPECT_THAT(Values((*r)[1]), ElementsAre(5, std::sqrt(2.0f)));
  EXPECT_THAT(Values((*r)[2]), ElementsAre(24, -2));
  // z·z (no conjugation) = -7+24i + -2i = -7+22i.
  EXPECT_THAT(parts((*r)[3]), ElementsAre(-7, 22));
}

TEST(OpsTest, FftRfftAndIrfftRoundTrip) {
  auto r = RunText(R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  f = c64[3] fft(x), fft_type=RFFT, fft_length={4}
  b = f32[4] fft(f), fft_type=IRFFT, fft_length={4}
  ROOT t = (c64[3], f32[4]) tuple(f, b)
})", {F32({4}, {1, 2, 3, 4})});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<float> v(6);
  std::memcpy(v.data(), (*r)[0].data(), 24);
  const std::vector<float> want = {10, 0, -2, 2, -2, 0};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(v[i], want[i], 1e-5) << i;
  std::vector<double> back = Values((*r)[1]);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(back[i], i + 1, 1e-5);
}

TEST(OpsTest, GemmWrappersMatchANaiveProductForEveryTransposition) {
  const int64_t m = 37, n = 53, k = 29;
  std::vector<float> a(m * k), b(k * n), c(m * n);
  std::vector<double> ad(m * k), bd(k * n), cd(m * n);
  for (size_t i = 0; i < a.size(); ++i) ad[i] = a[i] = static_cast<float>(static_cast<int>(i * 7 % 13) - 6);
  for (size_t i = 0; i < b.size(); ++i) bd[i] = b[i] = static_cast<float>(static_cast<int>(i * 5 % 11) - 5);
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      // Stored layouts: A is m x k (or k x m when transposed), B likewise.
      Sgemm(ta, tb, m, n, k, a.data(), ta ? m : k, b.data(), tb ? k : n, c.data(), n);
      Dgemm(ta, tb, m, n, k, ad.data(), ta ? m : k, bd.data(), tb ? k : n, cd.data(), n);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double want = 0;
          for (int64_t z = 0; z < k; ++z)
            want += ad[ta ? z * m + i : i * k + z] * bd[tb ? j * k + z : z * n + j];
          ASSERT_EQ(c[i * n + j], want) << ta << tb << " " << i << "," << j;
          ASSERT_EQ(cd[i * n + j], want);
        }
    }
}

TEST(OpsTest, RngBitGeneratorIsDeterministicInItsState) {
  const char* text = R"(HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u32[8]) rng-bit-generator(s), algorithm=rng_philox
})";
  auto a = RunText(text, {MakeTensor(ET::kU64, {2}, {1, 0})});
  auto b = RunText(text, {MakeTensor(ET::kU64, {2}, {1, 0})});
  auto c = RunText(text, {MakeTensor(ET::kU64, {2}, {2, 0})});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << a.status();
  EXPECT_EQ(Values((*a)[1]), Values((*b)[1]));
  EXPECT_NE(Values((*a)[1]), Values((*c)[1]));
  EXPECT_NE(Values((*a)[0]), Values(MakeTensor(ET::kU64, {2}, {1, 0})));  // state advanced
}

}  // namespace
}  // namespace neuron::kernels::testing
