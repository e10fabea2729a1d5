// Neuron's own custom-calls (AwsNeuronGelu, ...Silu, ...RmsNorm, ...ArgMax,
// ...TopK, and XLA's generic TopK) compiled and run, against definitions
// computed here; the targets Neuron names but whose meaning cannot run here
// are refused by name.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>

#include "gtest/gtest.h"
#include "lib/compiler/diagnostics.h"
#include "lib/compiler/supported_ops.h"
#include "lib/hlo/verifier.h"
#include "lib/kernels/executable.h"
#include "tests/compiler/lowered_run.h"
#include "tests/compiler/test_util.h"

namespace neuron::compiler {
namespace {

using kernels::Tensor;
using testing::CompileLoweredAndRun;
using testing::CompileText;
using testing::F32;
using testing::Values;

std::string Replace(std::string text, std::string_view from, std::string_view to) {
  for (size_t at; (at = text.find(from)) != std::string::npos;) text.replace(at, from.size(), to);
  return text;
}

double Gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double GeluTanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}
double Silu(double x) { return x / (1 + std::exp(-x)); }
// The derivative by central differences, independent of the closed forms.
double Derivative(const std::function<double(double)>& f, double x) {
  const double h = 1e-5;
  return (f(x + h) - f(x - h)) / (2 * h);
}

const std::vector<float> kActivationInput = {-4, -2.5f, -1, -0.3f, 0, 0.2f, 0.7f, 1.5f, 3, 5.5f};

struct ActivationCase {
  const char* target;
  std::function<double(double)> reference;
};

TEST(NeuronCustomCallTest, ActivationsMatchTheirDefinitions) {
  const std::vector<ActivationCase> cases = {
      {"AwsNeuronGelu", Gelu},
      {"AwsNeuronGeluApprxTanh", GeluTanh},
      {"AwsNeuronGeluBackward", [](double x) { return Derivative(Gelu, x); }},
      {"AwsNeuronSilu", Silu},
      {"AwsNeuronSiluBackward", [](double x) { return Derivative(Silu, x); }},
      {"AwsNeuronErf", [](double x) { return std::erf(x); }},
  };
  for (const ActivationCase& c : cases) {
    std::string text = Replace(R"(HloModule act
ENTRY e {
  x = f32[2,5] parameter(0)
  ROOT y = f32[2,5] custom-call(x), custom_call_target="TARGET"
})",
                               "TARGET", c.target);
    auto out = CompileLoweredAndRun(text, {F32({2, 5}, kActivationInput)});
    ASSERT_TRUE(out.ok()) << c.target << ": " << out.status();
    std::vector<float> got = Values<float>((*out)[0], 10);
    for (size_t i = 0; i < got.size(); ++i) {
      double want = c.reference(kActivationInput[i]);
      EXPECT_NEAR(got[i], want, 1e-5 + 1e-5 * std::abs(want)) << c.target << " at x = " << kActivationInput[i];
    }
  }
}

TEST(NeuronCustomCallTest, Bf16GeluComputesWideAndRoundsOnce) {
  auto out = CompileLoweredAndRun(R"(HloModule act
ENTRY e {
  x = f32[10] parameter(0)
  b = bf16[10] convert(x)
  g = bf16[10] custom-call(b), custom_call_target="AwsNeuronGelu"
  ROOT y = f32[10] convert(g)
})",
                           {F32({10}, kActivationInput)});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<float> got = Values<float>((*out)[0], 10);
  for (size_t i = 0; i < got.size(); ++i) {
    double want = Gelu(kActivationInput[i]);  // the inputs are exact in bf16
    EXPECT_NEAR(got[i], want, 1e-2 * std::max(1.0, std::abs(want))) << kActivationInput[i];
  }
}

// x * rsqrt(mean(x^2 over dim) + eps) * gamma.
std::vector<double> RmsNormReference(const std::vector<float>& x, const std::vector<float>& g, int rows, int cols,
                                     int dim, double eps) {
  std::vector<double> out(x.size());
  int n = dim == 1 ? cols : rows;
  int lines = dim == 1 ? rows : cols;
  for (int l = 0; l < lines; ++l) {
    auto at = [&](int i) { return dim == 1 ? l * cols + i : i * cols + l; };
    double ss = 0;
    for (int i = 0; i < n; ++i) ss += double(x[at(i)]) * x[at(i)];
    double r = 1 / std::sqrt(ss / n + eps);
    for (int i = 0; i < n; ++i) out[at(i)] = x[at(i)] * r * g[i];
  }
  return out;
}

TEST(NeuronCustomCallTest, RmsNormAlongTheConfiguredDimension) {
  const std::vector<float> x = {0.5f, -1, 2, 3, -0.25f, 1, 4, -2, 0.1f, 0.2f, -0.3f, 0.4f};
  for (int dim : {1, 0}) {
    int n = dim == 1 ? 4 : 3;
    std::vector<float> gamma;
    for (int i = 0; i < n; ++i) gamma.push_back(0.5f + 0.25f * i);
    std::string text = Replace(Replace(R"(HloModule rms
ENTRY e {
  x = f32[3,4] parameter(0)
  g = f32[N] parameter(1)
  eps = f32[] constant(0.001)
  ROOT y = f32[3,4] custom-call(x, g, eps), custom_call_target="AwsNeuronRmsNorm", backend_config="DIM"
})",
                                       "DIM", std::to_string(dim)),
                               "[N]", "[" + std::to_string(n) + "]");
    auto out = CompileLoweredAndRun(text, {F32({3, 4}, x), F32({n}, gamma)});
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<float> got = Values<float>((*out)[0], 12);
    std::vector<double> want = RmsNormReference(x, gamma, 3, 4, dim, 1e-3);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-5 * std::abs(want[i])) << dim << " " << i;
  }
}

// torch-neuronx's form: a bf16 input and weight, the epsilon an f32 constant.
TEST(NeuronCustomCallTest, Bf16RmsNormWithAnF32Epsilon) {
  const std::vector<float> x = {0.5f, -1, 2, 3, -0.25f, 1, 4, -2};  // exact in bf16
  const std::vector<float> gamma = {1, 0.5f, 2, -1};
  auto out = CompileLoweredAndRun(R"(HloModule rms
ENTRY e {
  x = f32[2,4] parameter(0)
  g = f32[4] parameter(1)
  xb = bf16[2,4] convert(x)
  gb = bf16[4] convert(g)
  eps = f32[] constant(1e-06)
  y = bf16[2,4] custom-call(xb, gb, eps), custom_call_target="AwsNeuronRmsNorm", backend_config="1"
  ROOT r = f32[2,4] convert(y)
})",
                           {F32({2, 4}, x), F32({4}, gamma)});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<float> got = Values<float>((*out)[0], 8);
  std::vector<double> want = RmsNormReference(x, gamma, 2, 4, 1, 1e-6);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 8e-3 * std::max(1.0, std::abs(want[i]))) << i;
}

// The first index of the largest (smallest) element; NaN wins both, as torch.
int64_t ArgRef(const std::vector<float>& v, bool max) {
  int64_t best = 0;
  for (int64_t i = 1; i < static_cast<int64_t>(v.size()); ++i) {
    if (std::isnan(v[best])) break;
    if (std::isnan(v[i]) || (max ? v[i] > v[best] : v[i] < v[best])) best = i;
  }
  return best;
}

TEST(NeuronCustomCallTest, ArgMaxAndArgMinPickTheFirstExtremeAlongTheDimension) {
  const float nan = std::nanf("");
  // 3 rows of 4: ties, negative values and a NaN.
  const std::vector<float> x = {1, 5, 5, -2, -3, -1, -7, -7, 2, nan, 9, 0};
  for (const char* target : {"AwsNeuronArgMax", "AwsNeuronArgMin"}) {
    bool max = std::string(target) == "AwsNeuronArgMax";
    for (int dim : {1, 0}) {
      int64_t n = dim == 1 ? 3 : 4;
      std::string text = Replace(Replace(Replace(R"(HloModule arg
ENTRY e {
  x = f32[3,4] parameter(0)
  ROOT i = s64[N] custom-call(x), custom_call_target="TARGET", backend_config="DIM"
})",
                                                 "TARGET", target),
                                         "DIM", std::to_string(dim)),
                                 "[N]", "[" + std::to_string(n) + "]");
      auto out = CompileLoweredAndRun(text, {F32({3, 4}, x)});
      ASSERT_TRUE(out.ok()) << target << ": " << out.status();
      std::vector<int64_t> got = Values<int64_t>((*out)[0], n);
      for (int64_t l = 0; l < n; ++l) {
        std::vector<float> line;
        for (int i = 0; i < (dim == 1 ? 4 : 3); ++i) line.push_back(dim == 1 ? x[l * 4 + i] : x[i * 4 + l]);
        EXPECT_EQ(got[l], ArgRef(line, max)) << target << " dim " << dim << " line " << l;
      }
    }
  }
}

TEST(NeuronCustomCallTest, IntegerArgMinAsS32) {
  Tensor in(hlo::ElementType::kS32, {5});
  const std::vector<int32_t> v = {4, -9, 3, -9, 8};
  std::memcpy(in.data(), v.data(), sizeof(int32_t) * v.size());
  auto out = CompileLoweredAndRun(R"(HloModule arg
ENTRY e {
  x = s32[5] parameter(0)
  ROOT i = s32[] custom-call(x), custom_call_target="AwsNeuronArgMin", backend_config="0"
})",
                           {in});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int32_t>((*out)[0], 1)[0], 1);
}

// (values, indices) of the k largest (smallest) of each row, stable.
void TopKRef(const std::vector<float>& x, int rows, int cols, int k, bool largest, std::vector<float>* values,
             std::vector<int64_t>* indices) {
  for (int r = 0; r < rows; ++r) {
    std::vector<int64_t> p(cols);
    std::iota(p.begin(), p.end(), 0);
    std::stable_sort(p.begin(), p.end(), [&](int64_t a, int64_t b) {
      return largest ? x[r * cols + a] > x[r * cols + b] : x[r * cols + a] < x[r * cols + b];
    });
    for (int i = 0; i < k; ++i) {
      values->push_back(x[r * cols + p[i]]);
      indices->push_back(p[i]);
    }
  }
}

const std::vector<float> kTopKInput = {3, 1, 4, 1, 5, 9, 2, 6, -5, 3, 5, 8};

TEST(NeuronCustomCallTest, AwsNeuronTopKIsTorchTopKOnTheLastDimension) {
  auto out = CompileLoweredAndRun(R"(HloModule topk
ENTRY e {
  x = f32[2,6] parameter(0)
  t = (f32[2,3], u32[2,3]) custom-call(x), custom_call_target="AwsNeuronTopK", backend_config="3"
  v = f32[2,3] get-tuple-element(t), index=0
  i = u32[2,3] get-tuple-element(t), index=1
  ROOT r = (f32[2,3], u32[2,3]) tuple(v, i)
})",
                           {F32({2, 6}, kTopKInput)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  std::vector<float> want_v;
  std::vector<int64_t> want_i;
  TopKRef(kTopKInput, 2, 6, 3, true, &want_v, &want_i);
  std::vector<float> got_v = Values<float>((*out)[0], 6);
  std::vector<uint32_t> got_i = Values<uint32_t>((*out)[1], 6);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(got_v[i], want_v[i]) << i;
    EXPECT_EQ(got_i[i], static_cast<uint32_t>(want_i[i])) << i;
  }
}

TEST(NeuronCustomCallTest, GenericTopKFollowsItsComparatorOrLargest) {
  const char* with_comparator = R"(HloModule topk
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=DIR
}
ENTRY e {
  x = f32[2,6] parameter(0)
  ROOT t = (f32[2,2], s32[2,2]) custom-call(x), custom_call_target="TopK", to_apply=cmp
})";
  const char* with_attribute = R"(HloModule topk
ENTRY e {
  x = f32[2,6] parameter(0)
  ROOT t = (f32[2,2], s32[2,2]) custom-call(x), custom_call_target="TopK", largest=false
})";
  struct Case {
    std::string text;
    bool largest;
  };
  for (const Case& c : {Case{Replace(with_comparator, "DIR", "GT"), true}, Case{Replace(with_comparator, "DIR", "LT"), false},
                        Case{with_attribute, false}}) {
    auto out = CompileLoweredAndRun(c.text, {F32({2, 6}, kTopKInput)});
    ASSERT_TRUE(out.ok()) << out.status() << "\n" << c.text;
    std::vector<float> want_v;
    std::vector<int64_t> want_i;
    TopKRef(kTopKInput, 2, 6, 2, c.largest, &want_v, &want_i);
    std::vector<float> got_v = Values<float>((*out)[0], 4);
    std::vector<int32_t> got_i = Values<int32_t>((*out)[1], 4);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(got_v[i], want_v[i]) << c.text << " " << i;
      EXPECT_EQ(got_i[i], want_i[i]) << c.text << " " << i;
    }
  }
}

TEST(NeuronCustomCallTest, UnrunnableNeuronTargetsAreRefusedByName) {
  for (const char* target : {"AwsNeuronCustomNativeKernel", "AwsNeuronCustomOp", "AwsNeuronDropoutMaskV1",
                             "AwsNeuronRmsNormBackward", "AwsNeuronCollectiveMatmul"}) {
    std::string text = Replace(R"(HloModule k
ENTRY e {
  x = f32[4] parameter(0)
  ROOT y = f32[4] custom-call(x), custom_call_target="TARGET", backend_config="opaque-payload"
})",
                               "TARGET", target);
    CompileOptions options;
    absl::StatusOr<CompileResult> r = CompileText(text, options, /*emit_neff=*/true);
    ASSERT_FALSE(r.ok()) << target;
    EXPECT_EQ(ErrorCodeOf(r.status()), "NCC-E0202") << r.status();
    EXPECT_NE(r.status().message().find(std::string("'") + target + "'"), std::string_view::npos) << r.status();
    EXPECT_NE(r.status().message().find(" ("), std::string_view::npos) << "a reason: " << r.status();
  }
}

TEST(NeuronCustomCallTest, MalformedUsesAreActionableErrors) {
  const char* bad[] = {
      // RMSNorm without its epsilon operand.
      R"(HloModule m
ENTRY e {
  x = f32[2,4] parameter(0)
  g = f32[4] parameter(1)
  ROOT y = f32[2,4] custom-call(x, g), custom_call_target="AwsNeuronRmsNorm", backend_config="1"
})",
      // a dimension the operand lacks.
      R"(HloModule m
ENTRY e {
  x = f32[2,4] parameter(0)
  ROOT i = s64[2] custom-call(x), custom_call_target="AwsNeuronArgMax", backend_config="5"
})",
      // k larger than a row.
      R"(HloModule m
ENTRY e {
  x = f32[2,4] parameter(0)
  ROOT t = (f32[2,6], u32[2,6]) custom-call(x), custom_call_target="AwsNeuronTopK", backend_config="6"
})",
      // align_corners, whose convention is not the one torch-neuronx emits.
      R"(HloModule m
ENTRY e {
  x = f32[1,2,2,1] parameter(0)
  ROOT y = f32[1,4,4,1] custom-call(x), custom_call_target="ResizeNearest", backend_config="10"
})",
      // an integer activation.
      R"(HloModule m
ENTRY e {
  x = s32[4] parameter(0)
  ROOT y = s32[4] custom-call(x), custom_call_target="AwsNeuronSilu"
})",
  };
  for (const char* text : bad) {
    CompileOptions options;
    absl::StatusOr<CompileResult> r = CompileText(text, options, /*emit_neff=*/true);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(ErrorCodeOf(r.status()), "NCC-E0205") << r.status();
    EXPECT_NE(r.status().message().find("custom-call '"), std::string_view::npos) << r.status();
  }
}

// out[n, o, p, c] = in[n, floor(o * IH / OH), floor(p * IW / OW), c].
TEST(NeuronCustomCallTest, ResizeNearestAndItsGradientOnNhwc) {
  const int N = 2, IH = 3, IW = 2, C = 2, OH = 6, OW = 5;  // scales 2 and 2.5
  std::vector<float> x(N * IH * IW * C), g(N * OH * OW * C);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f - 3;
  for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<float>((i * 7) % 11) - 4.25f;
  auto out = CompileLoweredAndRun(R"(HloModule resize
ENTRY e {
  x = f32[2,3,2,2] parameter(0)
  g = f32[2,6,5,2] parameter(1)
  up = f32[2,6,5,2] custom-call(x), custom_call_target="ResizeNearest", backend_config="\"00\""
  dx = f32[2,3,2,2] custom-call(g), custom_call_target="ResizeNearestGrad", backend_config="\"00\""
  ROOT r = (f32[2,6,5,2], f32[2,3,2,2]) tuple(up, dx)
})",
                           {F32({N, IH, IW, C}, x), F32({N, OH, OW, C}, g)});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<float> up = Values<float>((*out)[0], g.size());
  std::vector<float> dx = Values<float>((*out)[1], x.size());
  std::vector<double> want_dx(x.size(), 0.0);
  for (int n = 0; n < N; ++n) {
    for (int o = 0; o < OH; ++o) {
      for (int p = 0; p < OW; ++p) {
        for (int c = 0; c < C; ++c) {
          int src = ((n * IH + o * IH / OH) * IW + p * IW / OW) * C + c;
          int dst = ((n * OH + o) * OW + p) * C + c;
          EXPECT_EQ(up[dst], x[src]) << n << " " << o << " " << p << " " << c;
          want_dx[src] += g[dst];
        }
      }
    }
  }
  for (size_t i = 0; i < dx.size(); ++i) EXPECT_NEAR(dx[i], want_dx[i], 1e-5) << i;
}

TEST(NeuronCustomCallTest, MarkersAndLncConstraintsPassTheirOperandsThrough) {
  auto out = CompileLoweredAndRun(R"(HloModule marks
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[2] parameter(1)
  s = (f32[4], f32[2]) custom-call(x, y), custom_call_target="AwsNeuronModuleMarkerStart-Forward"
  a = f32[4] get-tuple-element(s), index=0
  b = f32[2] get-tuple-element(s), index=1
  d = f32[4] add(a, a)
  c = f32[4] custom-call(d), custom_call_target="AwsNeuronLNCShardingConstraint"
  m = f32[4] custom-call(c), custom_call_target="AwsNeuronModuleMarkerEnd-Forward"
  n = f32[2] custom-call(b), custom_call_target="NeuronBoundaryMarker-End"
  ROOT r = (f32[4], f32[2]) tuple(m, n)
})",
                           {F32({4}, {1, 2, 3, 4}), F32({2}, {-1, 5})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0], 4), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(Values<float>((*out)[1], 2), (std::vector<float>{-1, 5}));
}

TEST(NeuronCustomCallTest, ListOperatorsNamesTheFamily) {
  std::vector<std::string> listed = LoweredCustomCallTargets();
  for (const char* target : {"AwsNeuronGelu", "AwsNeuronGeluApprxTanh", "AwsNeuronGeluBackward", "AwsNeuronSilu",
                             "AwsNeuronSiluBackward", "AwsNeuronErf", "AwsNeuronRmsNorm", "AwsNeuronArgMax",
                             "AwsNeuronArgMin", "AwsNeuronTopK", "TopK", "AwsNeuronModuleMarkerStart-Forward",
                             "AwsNeuronLNCShardingConstraint", "xla_builder.math.NextAfter", "ResizeNearest",
                             "ResizeNearestGrad"}) {
    EXPECT_NE(std::find(listed.begin(), listed.end(), target), listed.end()) << target;
  }
}

}  // namespace
}  // namespace neuron::compiler
