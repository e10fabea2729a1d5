// Convolutions in every dim order dim_labels can give (NHWC/HWIO as JAX
// and Keras emit, NCHW/OIHW as PyTorch does, and odder ones), with
// strides, asymmetric padding, kernel dilation and feature groups: the
// kernels read the operands where they lie, so each layout is checked
// against the definition computed on the logical [N, C, H, W] values.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/hlo/shape.h"
#include "lib/kernels/dnnl_convolution.h"
#include "lib/kernels/dnnl_library.h"
#include "lib/kernels/lazy_scratch.h"
#include "tests/kernels/kernel_test_util.h"

namespace neuron::kernels {
namespace {

using ET = hlo::ElementType;
using testing::MakeTensor;
using testing::RunText;
using testing::Values;

struct Conv2d {
  int64_t n, c, h, w, o, kh, kw;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int64_t dilate_h = 1, dilate_w = 1;
  int64_t groups = 1;
  int64_t oh() const { return (h + pad_top + pad_bottom - ((kh - 1) * dilate_h + 1)) / stride_h + 1; }
  int64_t ow() const { return (w + pad_left + pad_right - ((kw - 1) * dilate_w + 1)) / stride_w + 1; }
};

// y[N, O, OH, OW] from x[N, C, H, W] and w[O, C/groups, KH, KW].
std::vector<double> Reference(const Conv2d& k, const std::vector<double>& x, const std::vector<double>& w) {
  const int64_t oh = k.oh(), ow = k.ow(), ci = k.c / k.groups, og = k.o / k.groups;
  std::vector<double> y(k.n * k.o * oh * ow, 0.0);
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t o = 0; o < k.o; ++o)
      for (int64_t r = 0; r < oh; ++r)
        for (int64_t q = 0; q < ow; ++q) {
          double acc = 0;
          for (int64_t c = 0; c < ci; ++c)
            for (int64_t i = 0; i < k.kh; ++i)
              for (int64_t j = 0; j < k.kw; ++j) {
                const int64_t ph = r * k.stride_h - k.pad_top + i * k.dilate_h;
                const int64_t pw = q * k.stride_w - k.pad_left + j * k.dilate_w;
                if (ph < 0 || pw < 0 || ph >= k.h || pw >= k.w) continue;
                acc += x[((n * k.c + (o / og) * ci + c) * k.h + ph) * k.w + pw] *
                       w[((o * ci + c) * k.kh + i) * k.kw + j];
              }
          y[((n * k.o + o) * oh + r) * ow + q] = acc;
        }
  return y;
}

// A 4-d array given in logical order `from` (labels, e.g. "bf01") laid
// out in the order `to` (e.g. "b01f"): its dims and its values.
std::vector<int64_t> Dims(const std::string& logical, const std::vector<int64_t>& dims, const std::string& to) {
  std::vector<int64_t> out;
  for (char l : to) out.push_back(dims[logical.find(l)]);
  return out;
}
std::vector<double> Relayout(const std::string& from, const std::vector<int64_t>& dims,
                             const std::vector<double>& v, const std::string& to) {
  const std::vector<int64_t> to_dims = Dims(from, dims, to);
  std::vector<double> out(v.size());
  std::vector<int64_t> idx(4);
  for (size_t flat = 0; flat < v.size(); ++flat) {
    int64_t rem = static_cast<int64_t>(flat);
    for (int d = 3; d >= 0; --d) {
      idx[d] = rem % dims[d];
      rem /= dims[d];
    }
    int64_t dst = 0;
    for (int d = 0; d < 4; ++d) dst = dst * to_dims[d] + idx[from.find(to[d])];
    out[dst] = v[flat];
  }
  return out;
}

// Runs `k` with operands and result laid out as `labels` says (XLA's
// "in_ker->out", each with b/f, o/i and 0/1) and compares with the
// definition.
void ExpectLayoutMatches(const Conv2d& k, const std::string& in_labels, const std::string& ker_labels,
                         const std::string& out_labels, ET type = ET::kF32) {
  const int64_t ci = k.c / k.groups;
  std::vector<double> x(k.n * k.c * k.h * k.w), w(k.o * ci * k.kh * k.kw);
  // Quarters and halves: exact in bf16, and so are the f32 sums.
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 37) % 11) / 4 - 1.25;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>((i * 13) % 7) / 2 - 1.5;
  const std::vector<double> want = Reference(k, x, w);
  const std::vector<int64_t> x_dims = {k.n, k.c, k.h, k.w}, w_dims = {k.o, ci, k.kh, k.kw},
                             y_dims = {k.n, k.o, k.oh(), k.ow()};
  const std::vector<int64_t> xd = Dims("bf01", x_dims, in_labels), wd = Dims("oi01", w_dims, ker_labels),
                             yd = Dims("bf01", y_dims, out_labels);
  auto shape = [](ET t, const std::vector<int64_t>& d) {
    return absl::StrCat(std::string(hlo::ElementTypeName(t)), "[", d[0], ",", d[1], ",", d[2], ",", d[3], "]");
  };
  const std::string text = absl::StrCat(
      "HloModule m\nENTRY e {\n  x = ", shape(type, xd), " parameter(0)\n  k = ", shape(type, wd),
      " parameter(1)\n  ROOT c = ", shape(ET::kF32, yd), " convolution(x, k), window={size=", k.kh, "x", k.kw,
      " stride=", k.stride_h, "x", k.stride_w, " pad=", k.pad_top, "_", k.pad_bottom, "x", k.pad_left, "_",
      k.pad_right, " rhs_dilate=", k.dilate_h, "x", k.dilate_w, "}, dim_labels=", in_labels, "_", ker_labels,
      "->", out_labels, ", feature_group_count=", k.groups, "\n}\n");
  auto out = RunText(text, {MakeTensor(type, xd, Relayout("bf01", x_dims, x, in_labels)),
                            MakeTensor(type, wd, Relayout("oi01", w_dims, w, ker_labels))});
  ASSERT_TRUE(out.ok()) << out.status() << "\n" << text;
  ASSERT_EQ(out->size(), 1u);
  const std::vector<double> got = Relayout(out_labels, yd, Values((*out)[0]), "bf01");
  ASSERT_EQ(got.size(), want.size()) << text;
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << "element " << i << "\n" << text;
}

const Conv2d kWindows[] = {
    // 3x3, same padding.
    {.n = 2, .c = 8, .h = 9, .w = 7, .o = 16, .kh = 3, .kw = 3, .pad_top = 1, .pad_bottom = 1, .pad_left = 1,
     .pad_right = 1},
    // Strided with padding on one side only (JAX's SAME for stride 2).
    {.n = 1, .c = 3, .h = 11, .w = 10, .o = 8, .kh = 3, .kw = 3, .stride_h = 2, .stride_w = 2, .pad_top = 0,
     .pad_bottom = 1, .pad_left = 1, .pad_right = 0},
    // 1x1 projections, plain and strided.
    {.n = 2, .c = 16, .h = 6, .w = 6, .o = 24, .kh = 1, .kw = 1},
    {.n = 2, .c = 16, .h = 6, .w = 6, .o = 8, .kh = 1, .kw = 1, .stride_h = 2, .stride_w = 2},
    // Kernel dilation.
    {.n = 1, .c = 4, .h = 9, .w = 9, .o = 4, .kh = 3, .kw = 2, .pad_top = 2, .pad_bottom = 2, .pad_left = 1,
     .pad_right = 1, .dilate_h = 2, .dilate_w = 3},
    // Grouped and depthwise (MobileNet's).
    {.n = 2, .c = 8, .h = 7, .w = 7, .o = 8, .kh = 3, .kw = 3, .pad_top = 1, .pad_bottom = 1, .pad_left = 1,
     .pad_right = 1, .groups = 2},
    {.n = 2, .c = 16, .h = 8, .w = 8, .o = 16, .kh = 3, .kw = 3, .stride_h = 2, .stride_w = 2, .pad_top = 1,
     .pad_bottom = 1, .pad_left = 1, .pad_right = 1, .groups = 16},
};

struct Labels {
  const char *in, *ker, *out;
};
const Labels kLayouts[] = {
    {"b01f", "01io", "b01f"},  // JAX, Keras (NHWC, HWIO)
    {"bf01", "oi01", "bf01"},  // PyTorch (NCHW, OIHW)
    {"b01f", "o01i", "b01f"},  // TensorFlow Lite's OHWI
    {"bf01", "01io", "b01f"},  // mixed: NCHW in, NHWC out
    {"bf01", "01io", "bf01"},  // NCHW with HWIO kernels (1x1: a transposed product)
    {"f01b", "i01o", "01bf"},  // batch innermost (gradient convolutions)
};

TEST(ConvLayoutTest, EveryLayoutMatchesTheDefinition) {
  for (const Labels& l : kLayouts)
    for (const Conv2d& k : kWindows) ExpectLayoutMatches(k, l.in, l.ker, l.out);
}

// On oneDNN's bf16 kernels where the CPU has the instructions, widened to
// f32 where it does not.
TEST(ConvLayoutTest, Bf16InEveryLayoutMatchesTheDefinition) {
  for (const Labels& l : kLayouts)
    for (const Conv2d& k : kWindows) ExpectLayoutMatches(k, l.in, l.ker, l.out, ET::kBF16);
}

// An f32 window in JAX's layout: NHWC activations, HWIO weights.
DnnlConvShape NhwcShape(const Conv2d& k) {
  DnnlConvShape shape{ET::kF32, ET::kF32, k.n, k.c, k.o, 1, {k.h, k.w}, {k.kh, k.kw}, {k.oh(), k.ow()},
                      {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  // Strides of [N, C, H, W] in NHWC, [O, I, KH, KW] in HWIO, [N, O, OH, OW] in NHWC.
  shape.x_strides = {k.h * k.w * k.c, 1, k.w * k.c, k.c};
  shape.w_strides = {1, k.o, k.kw * k.c * k.o, k.c * k.o};
  shape.y_strides = {k.oh() * k.ow() * k.o, 1, k.ow() * k.o, k.o};
  return shape;
}

// JAX's layout reaches oneDNN as it lies: no reorder of the activations
// on the way in or out.
TEST(ConvLayoutTest, OneDnnTakesNhwcActivationsWhereTheyLie) {
  if (Dnnl() == nullptr) GTEST_SKIP() << "libdnnl.so.2 is not installed (or a sanitizer build)";
  const Conv2d k = kWindows[0];
  auto conv = DnnlConvolution::Create(NhwcShape(k));
  ASSERT_NE(conv, nullptr);
  EXPECT_TRUE(conv->ActivationsInPlace());
  std::vector<double> x(k.n * k.c * k.h * k.w), w(k.o * k.c * k.kh * k.kw);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 37) % 11) / 4 - 1.25;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>((i * 13) % 7) / 2 - 1.5;
  const std::vector<double> want = Reference(k, x, w);
  const std::vector<double> xn = Relayout("bf01", {k.n, k.c, k.h, k.w}, x, "b01f");
  const std::vector<double> wn = Relayout("oi01", {k.o, k.c, k.kh, k.kw}, w, "01io");
  std::vector<float> xf(xn.begin(), xn.end()), wf(wn.begin(), wn.end()), y(want.size(), -7.0f);
  ASSERT_TRUE(conv->Run(xf.data(), wf.data(), y.data()));
  const std::vector<double> got =
      Relayout("b01f", {k.n, k.oh(), k.ow(), k.o}, std::vector<double>(y.begin(), y.end()), "bf01");
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << "element " << i;
}

// A convolution that reorders its weights (the first window, NHWC), with
// its operands filled; tests skip where oneDNN is absent or takes the
// weights where they lie.
class KeptWeightsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Dnnl() == nullptr) GTEST_SKIP() << "libdnnl.so.2 is not installed (or a sanitizer build)";
    conv = DnnlConvolution::Create(NhwcShape(k));
    ASSERT_NE(conv, nullptr);
    if (!conv->ReordersWeights()) GTEST_SKIP() << "oneDNN takes these weights where they lie";
    x.resize(k.n * k.c * k.h * k.w);
    w.resize(k.o * k.c * k.kh * k.kw);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 11) / 4 - 1.25f;
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 13) % 7) / 2 - 1.5f;
    ny = static_cast<size_t>(k.n * k.o * k.oh() * k.ow());
  }
  const Conv2d k = kWindows[0];
  std::unique_ptr<DnnlConvolution> conv;
  std::vector<float> x, w;
  size_t ny = 0;
};

// The weights' reorder to oneDNN's layout is kept under the version the
// caller names once a call has seen them unchanged since the last: the
// same pointer and version then reuse it (even though the bytes changed
// behind its back, which the runtime never lets happen); another version
// or version 0 (unknown) reorders again.
TEST_F(KeptWeightsTest, ReorderedWeightsAreKeptUnderTheirVersion) {
  std::vector<float> first(ny), second(ny), again(ny), doubled(ny), unknown(ny);
  ASSERT_TRUE(conv->Run(x.data(), w.data(), first.data(), 7));
  ASSERT_TRUE(conv->Run(x.data(), w.data(), second.data(), 7));  // seen unchanged: kept
  EXPECT_EQ(second, first);
  for (float& v : w) v *= 2;
  ASSERT_TRUE(conv->Run(x.data(), w.data(), again.data(), 7));
  EXPECT_EQ(again, first) << "version 7 again: the kept reorder is used";
  ASSERT_TRUE(conv->Run(x.data(), w.data(), doubled.data(), 8));
  for (size_t i = 0; i < ny; ++i) ASSERT_FLOAT_EQ(doubled[i], 2 * first[i]) << "element " << i;
  for (float& v : w) v /= 2;
  ASSERT_TRUE(conv->Run(x.data(), w.data(), unknown.data(), 0));
  EXPECT_EQ(unknown, first) << "version 0: reordered every time";
  ASSERT_TRUE(conv->Run(x.data(), w.data(), unknown.data(), 0));
  EXPECT_EQ(unknown, first);
}

// In a model every step's scratch comes from one workspace, which the next
// step overwrites: weights kept across calls must not live there. Calls
// with unchanged weights, each followed by another step filling the
// workspace with NaN, give the first call's result every time.
TEST_F(KeptWeightsTest, KeptWeightsSurviveOtherStepsScratch) {
  ScratchArena arena;
  LazyScratch other;
  other.resize(size_t{1} << 20);
  std::vector<float> first(ny), y(ny);
  for (int call = 0; call < 4; ++call) {
    {
      ScratchScope step(&arena);
      ASSERT_TRUE(conv->Run(x.data(), w.data(), call == 0 ? first.data() : y.data(), 7));
    }
    {
      ScratchScope step(&arena);
      std::memset(other.data(), 0xFF, other.size());  // NaN everywhere
    }
    if (call > 0) {
      ASSERT_EQ(y, first) << "call " << call;
    }
  }
}

}  // namespace
}  // namespace neuron::kernels
