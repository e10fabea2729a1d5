// Bounded dynamic shapes (the dynamic-padder pass): modules with `<=N`
// dimensions compile, run, and give what XLA's padded-to-bound semantics
// define, checked against values computed here from that definition (the
// valid elements in row-major order, reductions over the runtime size
// only, the result's padding zeroed). Operators the pass cannot make
// dynamic-correct are refused by name with NCC-E0203.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "gtest/gtest.h"
#include "lib/compiler/diagnostics.h"
#include "lib/kernels/executable.h"
#include "tests/compiler/test_util.h"
#include "tests/support/tool_runner.h"

namespace neuron::compiler {
namespace {

using hlo::ElementType;
using kernels::Tensor;
using testing::CompileText;

// Compiles at `optlevel` and runs (tests/compiler/test_util.h).
absl::StatusOr<std::vector<Tensor>> CompileAndRun(std::string_view text, const std::vector<Tensor>& inputs,
                                                  int optlevel = 2) {
  CompileOptions options;
  options.optlevel = optlevel;
  return testing::CompileAndRun(text, inputs, {}, options);
}

Tensor S32Scalar(int32_t v) {
  Tensor t(ElementType::kS32, {});
  *t.as<int32_t>() = v;
  return t;
}

template <typename T>
Tensor Filled(ElementType type, std::vector<int64_t> dims, const std::vector<T>& values) {
  Tensor t(type, std::move(dims));
  for (size_t i = 0; i < values.size(); ++i) t.as<T>()[i] = values[i];
  return t;
}

std::vector<int32_t> Iota(int n, int32_t from = 0) {
  std::vector<int32_t> v(n);
  for (int i = 0; i < n; ++i) v[i] = from + i;
  return v;
}

std::string ReadCorpus(const std::string& file) {
  std::ifstream in(neuron::testing::SharedDir() + "/hlo/" + file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The definition: the elements of `x` (bound dims `in`, runtime sizes
// `in_sizes`) taken in row-major order, written in row-major order to the
// positions of an array of bound `out` below `out_sizes`; zeros elsewhere.
std::vector<int32_t> Relayout(const std::vector<int32_t>& x, const std::vector<int64_t>& in,
                              const std::vector<int64_t>& in_sizes, const std::vector<int64_t>& out,
                              const std::vector<int64_t>& out_sizes) {
  auto valid_positions = [](const std::vector<int64_t>& bound, const std::vector<int64_t>& sizes) {
    std::vector<int64_t> at;
    int64_t total = 1;
    for (int64_t b : bound) total *= b;
    for (int64_t flat = 0; flat < total; ++flat) {
      bool valid = true;
      for (int64_t d = static_cast<int64_t>(bound.size()) - 1, rest = flat; d >= 0; --d) {
        valid = valid && rest % bound[d] < sizes[d];
        rest /= bound[d];
      }
      if (valid) at.push_back(flat);
    }
    return at;
  };
  std::vector<int64_t> from = valid_positions(in, in_sizes), to = valid_positions(out, out_sizes);
  int64_t total = 1;
  for (int64_t b : out) total *= b;
  std::vector<int32_t> y(total, 0);
  for (size_t i = 0; i < to.size() && i < from.size(); ++i) y[to[i]] = x[from[i]];
  return y;
}

// Equal, or both NaN.
bool SameFloat(float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

std::vector<int32_t> Values(const Tensor& t) { return {t.as<int32_t>(), t.as<int32_t>() + t.element_count()}; }

TEST(DynamicShapesTest, SetSizeThenReshapeToSeveralDynamicDimensions) {
  NEURON_REQUIRE_SHARED();
  const std::string text = ReadCorpus("xla__tests_dynamic_reshape_test__OutputDoubleDynamicDimensions.hlo");
  Tensor x = Filled(ElementType::kS32, {18}, Iota(18, 100));
  for (auto [n, s] : std::vector<std::pair<int, int>>{{8, 2}, {18, 3}, {2, 1}, {0, 0}}) {
    auto out = CompileAndRun(text, {x, S32Scalar(n), S32Scalar(s)});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 3, 3}));
    EXPECT_EQ(Values((*out)[0]), Relayout(Values(x), {18}, {n}, {2, 3, 3}, {2, s, s})) << n << " " << s;
  }
}

TEST(DynamicShapesTest, SeveralDynamicDimensionsReshapedToOne) {
  NEURON_REQUIRE_SHARED();
  const std::string text = ReadCorpus("xla__tests_dynamic_reshape_test__DoubleDynamicDimensions.hlo");
  Tensor x = Filled(ElementType::kS32, {2, 3, 3}, Iota(18));
  for (int s = 0; s <= 3; ++s) {
    auto out = CompileAndRun(text, {x, S32Scalar(s), S32Scalar(2 * s * s)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values((*out)[0]), Relayout(Values(x), {2, 3, 3}, {2, s, s}, {18}, {2 * s * s})) << s;
  }
}

TEST(DynamicShapesTest, PositionsWithNoSourceAreZero) {
  // More valid positions than valid elements (XLA leaves it undefined):
  // the ones past the elements are zero, like the padding.
  constexpr char kText[] = R"(HloModule z
ENTRY e {
  x = s32[4,4] parameter(0)
  n = s32[] parameter(1)
  d = s32[<=4,4] set-dimension-size(x, n), dimensions={0}
  ROOT r = s32[16] dynamic-reshape(d, n)
})";
  Tensor x = Filled(ElementType::kS32, {4, 4}, Iota(16, 1));
  for (int n : {0, 1, 3, 4}) {
    auto out = CompileAndRun(kText, {x, S32Scalar(n)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values((*out)[0]), Relayout(Values(x), {4, 4}, {n, 4}, {16}, {16})) << n;
  }
}

TEST(DynamicShapesTest, EmptyOperandsAndResultsRun) {
  auto from_empty = CompileAndRun(R"(HloModule k
ENTRY e {
  x = f32[0,3] parameter(0)
  n = s32[] parameter(1)
  ROOT r = f32[<=4] dynamic-reshape(x, n)
})", {Tensor(ElementType::kF32, {0, 3}), S32Scalar(2)});
  ASSERT_TRUE(from_empty.ok()) << from_empty.status();
  for (int i = 0; i < 4; ++i) EXPECT_EQ((*from_empty)[0].as<float>()[i], 0.0f) << i;
  auto to_empty = CompileAndRun(R"(HloModule m
ENTRY e {
  x = f32[6] parameter(0)
  n = s32[] parameter(1)
  ROOT r = f32[0] dynamic-reshape(x, n)
})", {Tensor(ElementType::kF32, {6}), S32Scalar(0)});
  ASSERT_TRUE(to_empty.ok()) << to_empty.status();
  EXPECT_EQ((*to_empty)[0].element_count(), 0);
}

TEST(DynamicShapesTest, StaticOperandReshapedToADynamicResult) {
  NEURON_REQUIRE_SHARED();
  const std::string text = ReadCorpus("xla__hlo_translate_hlo_to_mhlo_tests_import_dynamic_reshape__part1.hlo");
  Tensor x = Filled<float>(ElementType::kF32, {6}, {1.5f, -2, 3, 4, 5, 6});
  for (int n : {6, 4, 0}) {
    auto out = CompileAndRun(text, {x, S32Scalar(n)});
    ASSERT_TRUE(out.ok()) << out.status();
    for (int i = 0; i < 6; ++i) EXPECT_EQ((*out)[0].as<float>()[i], i < n ? x.as<float>()[i] : 0.0f) << n << " " << i;
  }
}

constexpr char kReduce[] = R"(HloModule r
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[3,5] parameter(0)
  n = s32[] parameter(1)
  d = f32[3,<=5] set-dimension-size(x, n), dimensions={1}
  zero = f32[] constant(0)
  low = f32[] constant(-inf)
  sum = f32[3] reduce(d, zero), dimensions={1}, to_apply=add
  big = f32[3] reduce(d, low), dimensions={1}, to_apply=max
  t = f32[<=5,3] transpose(d), dimensions={1,0}
  cols = f32[<=5] reduce(t, zero), dimensions={1}, to_apply=add
  ROOT r = (f32[3], f32[3], f32[<=5]) tuple(sum, big, cols)
})";

TEST(DynamicShapesTest, ReduceIgnoresThePadding) {
  // Past the size: values that would show in a sum or a max (NaN, inf).
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  Tensor x = Filled<float>(ElementType::kF32, {3, 5}, {1, 2, 3, nan, inf, -4, 5, -6, 1e30f, nan, 7, 8, 9, inf, 10});
  for (int n : {0, 1, 3, 5, 9}) {
    auto out = CompileAndRun(kReduce, {x, S32Scalar(n)});
    ASSERT_TRUE(out.ok()) << out.status();
    const int size = std::clamp(n, 0, 5);
    for (int i = 0; i < 3; ++i) {
      float sum = 0, big = -inf;
      for (int j = 0; j < size; ++j) {
        const float v = x.as<float>()[i * 5 + j];
        sum += v;
        big = std::isnan(v) || v > big ? v : big;  // XLA's maximum propagates NaN
      }
      EXPECT_TRUE(SameFloat((*out)[0].as<float>()[i], sum)) << n << " row " << i << ": " << (*out)[0].as<float>()[i];
      EXPECT_TRUE(SameFloat((*out)[1].as<float>()[i], big)) << n << " row " << i << ": " << (*out)[1].as<float>()[i];
    }
    // The column sums keep the dynamic dimension: the padding is zeroed.
    for (int j = 0; j < 5; ++j) {
      float col = 0;
      for (int i = 0; i < 3 && j < size; ++i) col += x.as<float>()[i * 5 + j];
      EXPECT_TRUE(SameFloat((*out)[2].as<float>()[j], col)) << n << " column " << j;
    }
  }
}

TEST(DynamicShapesTest, GetDimensionSizeIsTheRuntimeSize) {
  constexpr char kText[] = R"(HloModule g
ENTRY e {
  x = f32[4,6] parameter(0)
  n = s32[] parameter(1)
  d = f32[4,<=6] set-dimension-size(x, n), dimensions={1}
  r = f32[<=6,4] transpose(d), dimensions={1,0}
  dyn = s32[] get-dimension-size(r), dimensions={0}
  fixed = s32[] get-dimension-size(d), dimensions={0}
  ROOT t = (s32[], s32[]) tuple(dyn, fixed)
})";
  Tensor x(ElementType::kF32, {4, 6});
  for (int n : {0, 2, 6, 7, -1}) {
    auto out = CompileAndRun(kText, {x, S32Scalar(n)});
    ASSERT_TRUE(out.ok()) << out.status();
    // A size outside [0, bound] is clamped into it.
    EXPECT_EQ(*(*out)[0].as<int32_t>(), std::clamp(n, 0, 6)) << n;
    EXPECT_EQ(*(*out)[1].as<int32_t>(), 4);
  }
}

TEST(DynamicShapesTest, ElementwiseAndBroadcastCarryTheSizeAndTheResultIsZeroPadded) {
  constexpr char kText[] = R"(HloModule w
ENTRY e {
  x = f32[2,4] parameter(0)
  y = f32[4] parameter(1)
  n = s32[] parameter(2)
  dx = f32[2,<=4] set-dimension-size(x, n), dimensions={1}
  dy = f32[<=4] set-dimension-size(y, n), dimensions={0}
  by = f32[2,<=4] broadcast(dy), dimensions={1}
  m = f32[2,<=4] multiply(dx, by)
  k = f32[2,1,<=4] reshape(m)
  ROOT r = f32[2,1,<=4] exponential(k)
})";
  Tensor x = Filled<float>(ElementType::kF32, {2, 4}, {1, 2, 3, 4, -1, -2, -3, -4});
  Tensor y = Filled<float>(ElementType::kF32, {4}, {0.5f, 0.25f, -1, 2});
  for (int n : {0, 3, 4}) {
    auto out = CompileAndRun(kText, {x, y, S32Scalar(n)});
    ASSERT_TRUE(out.ok()) << out.status();
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 4; ++j) {
        float want = j < n ? std::exp(x.as<float>()[i * 4 + j] * y.as<float>()[j]) : 0.0f;
        EXPECT_NEAR((*out)[0].as<float>()[i * 4 + j], want, 1e-5f * std::fabs(want)) << n << " " << i << "," << j;
      }
    }
  }
}

TEST(DynamicShapesTest, SliceConcatenateAndReverseLeaveTheDynamicDimensionAlone) {
  constexpr char kText[] = R"(HloModule s
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  x = s32[3,6] parameter(0)
  n = s32[] parameter(1)
  d = s32[3,<=6] set-dimension-size(x, n), dimensions={1}
  head = s32[3,<=4] slice(d), slice={[0:3], [0:4]}
  rows = s32[2,<=4] slice(head), slice={[1:3], [0:4]}
  both = s32[5,<=4] concatenate(head, rows), dimensions={0}
  flip = s32[5,<=4] reverse(both), dimensions={0}
  zero = s32[] constant(0)
  sums = s32[5] reduce(flip, zero), dimensions={1}, to_apply=add
  size = s32[] get-dimension-size(flip), dimensions={1}
  ROOT r = (s32[5], s32[], s32[5,<=4]) tuple(sums, size, flip)
})";
  Tensor x = Filled(ElementType::kS32, {3, 6}, Iota(18, 1));
  for (int n : {0, 2, 4, 6}) {
    auto out = CompileAndRun(kText, {x, S32Scalar(n)});
    ASSERT_TRUE(out.ok()) << out.status();
    const int size = std::min(n, 4);
    // Rows of `both`: x's rows 0, 1, 2, 1, 2; `flip` takes them last first.
    const int source_rows[5] = {2, 1, 2, 1, 0};
    EXPECT_EQ(*(*out)[1].as<int32_t>(), size) << n;
    for (int i = 0; i < 5; ++i) {
      int32_t sum = 0;
      for (int j = 0; j < 4; ++j) {
        const int32_t v = j < size ? x.as<int32_t>()[source_rows[i] * 6 + j] : 0;
        sum += v;
        EXPECT_EQ((*out)[2].as<int32_t>()[i * 4 + j], v) << n << " " << i << "," << j;
      }
      EXPECT_EQ((*out)[0].as<int32_t>()[i], sum) << n << " row " << i;
    }
  }
}

TEST(DynamicShapesTest, DotContractsOverTheRuntimeSizeOnly) {
  constexpr char kText[] = R"(HloModule d
ENTRY e {
  a = f32[2,5] parameter(0)
  b = f32[5,3] parameter(1)
  n = s32[] parameter(2)
  da = f32[2,<=5] set-dimension-size(a, n), dimensions={1}
  db = f32[<=5,3] set-dimension-size(b, n), dimensions={0}
  ROOT c = f32[2,3] dot(da, db), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = Filled<float>(ElementType::kF32, {2, 5}, {1, 2, 3, nan, nan, 4, 5, 6, nan, nan});
  Tensor b = Filled<float>(ElementType::kF32, {5, 3}, {1, 0, 2, 0, 1, 3, -1, 1, 1, nan, nan, nan, nan, nan, nan});
  for (int n : {0, 2, 3}) {
    auto out = CompileAndRun(kText, {a, b, S32Scalar(n)});
    ASSERT_TRUE(out.ok()) << out.status();
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) {
        float want = 0;
        for (int k = 0; k < n; ++k) want += a.as<float>()[i * 5 + k] * b.as<float>()[k * 3 + j];
        EXPECT_FLOAT_EQ((*out)[0].as<float>()[i * 3 + j], want) << n << " " << i << "," << j;
      }
    }
  }
}

TEST(DynamicShapesTest, TheSameResultsAtEveryOptLevel) {
  Tensor x = Filled<float>(ElementType::kF32, {3, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  for (int level : {1, 2, 3}) {
    auto out = CompileAndRun(kReduce, {x, S32Scalar(2)}, level);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].as<float>()[1], 13.0f) << "-O" << level;  // 6 + 7
  }
}

// A refusal: NCC-E0203, one line, naming what is refused.
void ExpectRefused(std::string_view text, std::string_view names) {
  CompileOptions options;
  absl::StatusOr<CompileResult> r = CompileText(text, options, false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(ErrorCodeOf(r.status()), "NCC-E0203") << r.status();
  const std::string message(r.status().message());
  EXPECT_NE(message.find(names), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(DynamicShapesTest, WhatCannotIgnoreThePaddingIsRefusedByName) {
  ExpectRefused(R"(HloModule s
ENTRY e {
  x = f32[8] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=8] set-dimension-size(x, n), dimensions={0}
  ROOT s = f32[<=8] sort(d), dimensions={0}, to_apply=lt
}
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
})", "operator 'sort' reads the dynamic dimension of d");
  ExpectRefused(R"(HloModule s
ENTRY e {
  x = f32[8] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=8] set-dimension-size(x, n), dimensions={0}
  ROOT s = f32[4] slice(d), slice={[4:8]}
})", "slice of dynamic dimension 0 of d must start at 0 with stride 1");
  ExpectRefused(R"(HloModule c
ENTRY e {
  x = f32[8] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=8] set-dimension-size(x, n), dimensions={0}
  ROOT c = f32[16] concatenate(d, x), dimensions={0}
})", "concatenate along dynamic dimension 0 of d");
  ExpectRefused(R"(HloModule v
ENTRY e {
  x = f32[8] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=8] set-dimension-size(x, n), dimensions={0}
  ROOT v = f32[<=8] reverse(d), dimensions={0}
})", "reverse of dynamic dimension 0 of d");
  ExpectRefused(R"(HloModule m
ENTRY e {
  x = f32[2,4] parameter(0)
  n = s32[] parameter(1)
  d = f32[2,<=4] set-dimension-size(x, n), dimensions={1}
  ROOT r = f32[8] reshape(d)
})", "reshape splits or merges dynamic dimension 1 of d");
  ExpectRefused(R"(HloModule p
ENTRY e {
  ROOT x = f32[<=8] parameter(0)
})", "entry parameter x has a dynamic shape");
  ExpectRefused(R"(HloModule u
ENTRY e {
  x = f32[8] parameter(0)
  n = s32[] parameter(1)
  ROOT d = f32[?] set-dimension-size(x, n), dimensions={0}
})", "dynamic shape f32[?] has no usable bound");
  ExpectRefused(R"(HloModule b
ENTRY e {
  x = pred[3000000000] parameter(0)
  n = s32[] parameter(1)
  ROOT d = pred[<=3000000000] set-dimension-size(x, n), dimensions={0}
})", "dynamic shape pred[<=3000000000] has no usable bound");
  ExpectRefused(R"(HloModule c
body {
  x = f32[8] parameter(0)
  n = s32[] constant(3)
  ROOT d = f32[<=8] set-dimension-size(x, n), dimensions={0}
}
ENTRY e {
  x = f32[8] parameter(0)
  ROOT c = f32[<=8] call(x), to_apply=body
})", "in computation 'body'");
  ExpectRefused(R"(HloModule t
ENTRY e {
  x = f32[8] parameter(0)
  n = s64[] parameter(1)
  ROOT d = f32[<=8] set-dimension-size(x, n), dimensions={0}
})", "set-dimension-size needs an operand of its result's shape, an s32[] size");
  ExpectRefused(R"(HloModule g
ENTRY e {
  x = f32[8] parameter(0)
  ROOT g = f32[] get-dimension-size(x), dimensions={0}
})", "get-dimension-size needs one dimension of an array operand and an s32[] result");
  ExpectRefused(R"(HloModule r
ENTRY e {
  x = f32[8] parameter(0)
  ROOT r = f32[<=8] dynamic-reshape(x)
})", "dynamic-reshape needs an array of its result's type and one s32[] size operand");
}

}  // namespace
}  // namespace neuron::compiler
