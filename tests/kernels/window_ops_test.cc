// Reduce-window and select-and-scatter against references written out per
// output element here (the kernels walk rows and runs of lanes; this is the
// definition), over layouts, strides, padding and dilations.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "lib/hlo/shape.h"
#include "tests/kernels/kernel_test_util.h"

namespace neuron::kernels::testing {
namespace {

using ET = hlo::ElementType;

struct Dim {
  int64_t size = 1, stride = 1, pad_low = 0, pad_high = 0, base_dilation = 1, window_dilation = 1;
};

struct Window {
  std::vector<int64_t> in;
  std::vector<Dim> dims;

  std::vector<int64_t> OutDims() const {
    std::vector<int64_t> out;
    for (size_t d = 0; d < in.size(); ++d) {
      const Dim& w = dims[d];
      const int64_t padded = (in[d] - 1) * w.base_dilation + 1 + w.pad_low + w.pad_high;
      const int64_t extent = (w.size - 1) * w.window_dilation + 1;
      out.push_back(padded < extent ? 0 : (padded - extent) / w.stride + 1);
    }
    return out;
  }

  std::string Text() const {
    std::vector<std::string> size, stride, pad, lhs, rhs;
    for (const Dim& w : dims) {
      size.push_back(absl::StrCat(w.size));
      stride.push_back(absl::StrCat(w.stride));
      pad.push_back(absl::StrCat(w.pad_low, "_", w.pad_high));
      lhs.push_back(absl::StrCat(w.base_dilation));
      rhs.push_back(absl::StrCat(w.window_dilation));
    }
    return absl::StrCat("window={size=", absl::StrJoin(size, "x"), " stride=", absl::StrJoin(stride, "x"),
                        " pad=", absl::StrJoin(pad, "x"), " lhs_dilate=", absl::StrJoin(lhs, "x"),
                        " rhs_dilate=", absl::StrJoin(rhs, "x"), "}");
  }

  // Calls fn(input index or -1) for each window tap of output `o`, in
  // row-major window order.
  template <typename Fn>
  void ForEachTap(int64_t o, Fn fn) const {
    const std::vector<int64_t> out = OutDims();
    const size_t rank = in.size();
    std::vector<int64_t> opos(rank), k(rank, 0);
    for (size_t d = rank; d-- > 0;) { opos[d] = o % out[d]; o /= out[d]; }
    int64_t taps = 1;
    for (const Dim& w : dims) taps *= w.size;
    for (int64_t t = 0; t < taps; ++t) {
      int64_t rem = t, index = 0;
      bool inside = true;
      for (size_t d = rank; d-- > 0;) {
        const Dim& w = dims[d];
        k[d] = rem % w.size;
        rem /= w.size;
      }
      for (size_t d = 0; d < rank; ++d) {
        const Dim& w = dims[d];
        const int64_t p = opos[d] * w.stride - w.pad_low + k[d] * w.window_dilation;
        if (p < 0 || p % w.base_dilation != 0 || p / w.base_dilation >= in[d]) { inside = false; break; }
        index = index * in[d] + p / w.base_dilation;
      }
      fn(inside ? index : -1);
    }
  }
};

std::string Dims(const std::vector<int64_t>& dims) { return absl::StrCat("[", absl::StrJoin(dims, ","), "]"); }

int64_t Count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Small integers, exact in every type here, with repeats (ties).
std::vector<double> Ramp(int64_t n, int64_t period = 23) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 37) % period) - period / 2;
  return v;
}

double Reduce(const std::string& op, double a, double b) {
  if (op == "maximum") return (a != a) ? a : (b != b) ? b : std::max(a, b);
  if (op == "minimum") return (a != a) ? a : (b != b) ? b : std::min(a, b);
  return a + b;
}

double InitFor(const std::string& op, ET type) {
  const double inf = std::numeric_limits<double>::infinity();
  if (op == "add") return 0;
  if (type == ET::kS32) return op == "maximum" ? -2147483648.0 : 2147483647.0;
  return op == "maximum" ? -inf : inf;
}

std::string InitText(double v, ET type) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return absl::StrCat(static_cast<int64_t>(v));
}

// Runs reduce-window `op` of `type` over x and checks every output
// against the definition.
void ExpectReduceWindow(const Window& w, ET type, const std::string& op, const std::vector<double>& x) {
  const std::string t = std::string(hlo::ElementTypeName(type));
  const std::vector<int64_t> out_dims = w.OutDims();
  const double init = InitFor(op, type);
  const std::string text = absl::StrCat(
      "HloModule m\nr {\n  a = ", t, "[] parameter(0)\n  b = ", t, "[] parameter(1)\n  ROOT c = ", t,
      "[] ", op, "(a, b)\n}\nENTRY e {\n  x = ", t, Dims(w.in), " parameter(0)\n  i = ", t,
      "[] constant(", InitText(init, type), ")\n  ROOT y = ", t, Dims(out_dims), " reduce-window(x, i), ",
      w.Text(), ", to_apply=r\n}\n");
  SCOPED_TRACE(text);
  const Tensor input = MakeTensor(type, w.in, x);
  const std::vector<double> stored = Values(input);
  auto r = RunText(text, {input});
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<double> got = Values((*r)[0]);
  ASSERT_EQ(static_cast<int64_t>(got.size()), Count(out_dims));
  for (int64_t o = 0; o < Count(out_dims); ++o) {
    double want = init;
    w.ForEachTap(o, [&](int64_t i) { if (i >= 0) want = Reduce(op, want, stored[i]); });
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got[o])) << "output " << o;
    } else {
      EXPECT_EQ(got[o], want) << "output " << o;
    }
  }
}

void ExpectAllOps(const Window& w) {
  const std::vector<double> x = Ramp(Count(w.in));
  for (ET type : {ET::kF32, ET::kBF16, ET::kS32})
    for (const char* op : {"maximum", "minimum", "add"}) ExpectReduceWindow(w, type, op, x);
}

TEST(WindowOpsTest, ReduceWindowMaxPoolNhwc) {
  // 3x3 stride 2 over H and W, features contiguous; padding low and high.
  ExpectAllOps({{2, 9, 9, 5}, {{}, {3, 2, 1, 1}, {3, 2, 0, 1}, {}}});
  ExpectAllOps({{1, 6, 7, 3}, {{}, {2, 2}, {2, 1, 1, 0}, {}}});
}

TEST(WindowOpsTest, ReduceWindowNchwWindowsTheInnermostDim) {
  ExpectAllOps({{2, 3, 9, 10}, {{}, {}, {3, 2, 1, 1}, {3, 2, 1, 1}}});
  ExpectAllOps({{2, 3, 8, 11}, {{}, {}, {2, 1}, {4, 3, 2, 3}}});
  // One dimension, a running window (as a cumulative sum has it).
  ExpectAllOps({{17}, {{17, 1, 16, 0}}});
  ExpectAllOps({{13}, {{4, 1, 3, 0}}});
}

TEST(WindowOpsTest, ReduceWindowDilations) {
  // Base dilation outside and inside the innermost dim, window dilation
  // over rows of features and over the innermost dim.
  Dim base_dilated{3, 1, 1, 1};
  base_dilated.base_dilation = 2;
  ExpectAllOps({{2, 7, 6}, {{}, base_dilated, {2, 2}}});
  ExpectAllOps({{3, 9}, {{}, base_dilated}});
  Dim window_dilated{3, 2, 2, 1};
  window_dilated.window_dilation = 3;
  ExpectAllOps({{3, 11, 4}, {{}, window_dilated, {}}});
  ExpectAllOps({{2, 14}, {{}, window_dilated}});
  Dim both{2, 3, 0, 2};
  both.base_dilation = 3;
  both.window_dilation = 2;
  ExpectAllOps({{2, 5, 5, 2}, {{}, both, both, {}}});
}

TEST(WindowOpsTest, ReduceWindowWholeWindowsAndIdentity) {
  // Every dim left alone (the output is the input combined with init), and
  // a window that covers everything.
  ExpectAllOps({{4, 5}, {{}, {}}});
  ExpectAllOps({{4, 5}, {{4}, {5}}});
  // A window that only reads padding: init.
  ExpectAllOps({{2, 3}, {{}, {2, 1, 0, 3}}});
}

TEST(WindowOpsTest, ReduceWindowMaxPropagatesNaN) {
  Window w{{1, 6, 6, 2}, {{}, {3, 2, 1, 1}, {3, 2, 1, 1}, {}}};
  std::vector<double> x = Ramp(Count(w.in));
  x[2 * 6 * 2 + 3 * 2 + 1] = std::numeric_limits<double>::quiet_NaN();
  x[5 * 6 * 2 + 0 * 2 + 0] = std::numeric_limits<double>::quiet_NaN();
  for (ET type : {ET::kF32, ET::kBF16})
    for (const char* op : {"maximum", "minimum"}) ExpectReduceWindow(w, type, op, x);
  Window nchw{{1, 1, 6, 6}, {{}, {}, {3, 2, 1, 1}, {3, 2, 1, 1}}};
  ExpectReduceWindow(nchw, ET::kF32, "maximum", x);
}

TEST(WindowOpsTest, ReduceWindowLargePoolSplitsAcrossThreads) {
  // resnet50's pool: big enough for the work to be split.
  Window w{{1, 57, 57, 64}, {{}, {3, 2, 1, 1}, {3, 2, 1, 1}, {}}};
  std::vector<double> x(Count(w.in));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * static_cast<double>(i)) * 100;
  ExpectReduceWindow(w, ET::kF32, "maximum", x);
  ExpectReduceWindow(w, ET::kF32, "minimum", x);
}

TEST(WindowOpsTest, ReduceWindowSumOfFractionsMatchesDoubleSums) {
  Window w{{2, 8, 8, 3}, {{}, {3, 1, 1, 1}, {3, 1, 1, 1}, {}}};
  std::vector<double> x(Count(w.in));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(1.3 * static_cast<double>(i)) * 3.7;
  const std::string text = absl::StrCat(R"(HloModule m
r {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[2,8,8,3] parameter(0)
  z = f32[] constant(0)
  ROOT y = f32[2,8,8,3] reduce-window(x, z), )", w.Text(), ", to_apply=r\n}\n");
  const Tensor input = MakeTensor(ET::kF32, w.in, x);
  const std::vector<double> stored = Values(input);
  auto r = RunText(text, {input});
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<double> got = Values((*r)[0]);
  for (int64_t o = 0; o < Count(w.in); ++o) {
    double want = 0;
    w.ForEachTap(o, [&](int64_t i) { if (i >= 0) want += stored[i]; });
    EXPECT_NEAR(got[o], want, 1e-5 * std::max(1.0, std::fabs(want))) << o;
  }
}

TEST(WindowOpsTest, VariadicReduceWindowRunsTheReducer) {
  // (sum, max) of two operands per window: the per-element path.
  Window w{{2, 5, 6}, {{}, {2, 1, 1, 0}, {3, 2, 1, 1}}};
  const std::vector<double> a = Ramp(Count(w.in)), b = Ramp(Count(w.in), 17);
  const std::vector<int64_t> out = w.OutDims();
  const std::string text = absl::StrCat(R"(HloModule m
r {
  a0 = f32[] parameter(0)
  b0 = f32[] parameter(1)
  a1 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  s = f32[] add(a0, a1)
  m = f32[] maximum(b0, b1)
  ROOT t = (f32[], f32[]) tuple(s, m)
}
ENTRY e {
  a = f32[2,5,6] parameter(0)
  b = f32[2,5,6] parameter(1)
  z = f32[] constant(0)
  n = f32[] constant(-inf)
  ROOT y = (f32)", Dims(out), ", f32", Dims(out), ") reduce-window(a, b, z, n), ", w.Text(),
                                        ", to_apply=r\n}\n");
  auto r = RunText(text, {MakeTensor(ET::kF32, w.in, a), MakeTensor(ET::kF32, w.in, b)});
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<double> sums = Values((*r)[0]), maxes = Values((*r)[1]);
  for (int64_t o = 0; o < Count(out); ++o) {
    double s = 0, m = -std::numeric_limits<double>::infinity();
    w.ForEachTap(o, [&](int64_t i) {
      if (i < 0) return;
      s += a[i];
      m = std::max(m, b[i]);
    });
    EXPECT_EQ(sums[o], s) << o;
    EXPECT_EQ(maxes[o], m) << o;
  }
}

// select-and-scatter `select` (a computation over a and b of `type`) with
// scatter add, against the definition: per source element in order, the
// first tap, replaced by each later tap select does not keep against it.
void ExpectSelectAndScatter(const Window& w, ET type, const std::string& select_root,
                            const std::vector<double>& x, double init, bool keeps_on_tie,
                            bool keeps_greater) {
  const std::string t = std::string(hlo::ElementTypeName(type));
  const std::vector<int64_t> src_dims = w.OutDims();
  std::vector<double> src(Count(src_dims));
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<double>(i % 7 + 1);
  const std::string text = absl::StrCat(
      "HloModule m\nsel {\n  a = ", t, "[] parameter(0)\n  b = ", t, "[] parameter(1)\n  ROOT c = pred[] ",
      select_root, "\n}\nadd {\n  a = ", t, "[] parameter(0)\n  b = ", t, "[] parameter(1)\n  ROOT c = ", t,
      "[] add(a, b)\n}\nENTRY e {\n  x = ", t, Dims(w.in), " parameter(0)\n  s = ", t, Dims(src_dims),
      " parameter(1)\n  i = ", t, "[] constant(", static_cast<int64_t>(init), ")\n  ROOT y = ", t,
      Dims(w.in), " select-and-scatter(x, s, i), ", w.Text(), ", select=sel, scatter=add\n}\n");
  SCOPED_TRACE(text);
  const Tensor operand = MakeTensor(type, w.in, x);
  const std::vector<double> stored = Values(operand);
  auto r = RunText(text, {operand, MakeTensor(type, src_dims, src)});
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<double> got = Values((*r)[0]);
  std::vector<double> want(Count(w.in), init);
  for (int64_t s = 0; s < Count(src_dims); ++s) {
    int64_t best = -1;
    w.ForEachTap(s, [&](int64_t i) {
      if (i < 0) return;
      if (best < 0) { best = i; return; }
      const double a = stored[best], b = stored[i];
      const bool keep = a == b ? keeps_on_tie : keeps_greater ? a > b : a < b;
      if (!keep) best = i;
    });
    if (best >= 0) want[best] += src[s];
  }
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "element " << i;
}

void ExpectSelectAndScatterDirections(const Window& w) {
  // Few distinct values: many ties in every window.
  const std::vector<double> x = Ramp(Count(w.in), 5);
  for (ET type : {ET::kF32, ET::kBF16, ET::kS32}) {
    ExpectSelectAndScatter(w, type, "compare(a, b), direction=GE", x, 0, true, true);
    ExpectSelectAndScatter(w, type, "compare(a, b), direction=GT", x, 1, false, true);
    ExpectSelectAndScatter(w, type, "compare(a, b), direction=LE", x, 0, true, false);
    ExpectSelectAndScatter(w, type, "compare(a, b), direction=LT", x, 0, false, false);
    // The operands written the other way round: b <= a keeps as a >= b.
    ExpectSelectAndScatter(w, type, "compare(b, a), direction=LE", x, 0, true, true);
    ExpectSelectAndScatter(w, type, "compare(b, a), direction=LT", x, 0, false, true);
  }
  // A total-order compare takes the per-element path; no NaN here, so it
  // selects as GE does.
  ExpectSelectAndScatter(w, ET::kF32, "compare(a, b), direction=GE, type=TOTALORDER", x, 0, true, true);
}

TEST(WindowOpsTest, SelectAndScatterNhwcTiesAndPadding) {
  // Overlapping windows (3 wide, stride 2): elements collect several sources.
  ExpectSelectAndScatterDirections({{2, 7, 7, 3}, {{}, {3, 2, 1, 1}, {3, 2, 1, 1}, {}}});
  ExpectSelectAndScatterDirections({{1, 6, 5, 4}, {{}, {2, 2}, {2, 2, 0, 1}, {}}});
}

TEST(WindowOpsTest, SelectAndScatterNchwTiesAndPadding) {
  ExpectSelectAndScatterDirections({{2, 2, 7, 9}, {{}, {}, {3, 2, 1, 1}, {3, 2, 1, 1}}});
  ExpectSelectAndScatterDirections({{1, 3, 6, 8}, {{}, {}, {3, 1, 1, 1}, {3, 1, 1, 1}}});
  ExpectSelectAndScatterDirections({{11}, {{4, 3, 2, 2}}});
}

TEST(WindowOpsTest, SelectAndScatterLargeMaxPoolGradient) {
  Window w{{1, 57, 57, 64}, {{}, {3, 2, 1, 1}, {3, 2, 1, 1}, {}}};
  std::vector<double> x(Count(w.in));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::round(std::sin(0.37 * static_cast<double>(i)) * 4);
  ExpectSelectAndScatter(w, ET::kF32, "compare(a, b), direction=GE", x, 0, true, true);
}

}  // namespace
}  // namespace neuron::kernels::testing
