// FusedReduceKernel against a double reference: every subset of reduced
// dims of a rank-3 value, slices from a few elements (many slices, short
// last chunks, partial results combined) to the whole value, one and two
// threads, add and maximum, f32 and bf16 values.
#include "lib/kernels/fused_reduce.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "lib/hlo/load.h"
#include "lib/kernels/element_convert.h"

namespace neuron::kernels {
namespace {

using ET = hlo::ElementType;

constexpr int64_t kA = 3, kB = 5, kC = 7;

// value[i, j, k] = convert(x[i, j, k]) * w[k] - 0.5, reduced over `dims`.
std::string Module(const std::vector<int64_t>& dims, const std::string& op, const std::string& type) {
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < 3; ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept.push_back(d);
  const int64_t sizes[3] = {kA, kB, kC};
  std::vector<int64_t> out_dims;
  for (int64_t d : kept) out_dims.push_back(sizes[d]);
  const std::string out = absl::StrCat(type, "[", absl::StrJoin(out_dims, ","), "]");
  const std::string init = op == "add" ? "0" : "-inf";
  return absl::StrCat(R"(HloModule m
red {
  a = )", type, R"([] parameter(0)
  b = )", type, R"([] parameter(1)
  ROOT r = )", type, "[] ", op, R"((a, b)
}
fused {
  x = f32[3,5,7] parameter(0)
  w = )", type, R"([7] parameter(1)
  xc = )", type, R"([3,5,7] convert(x)
  wb = )", type, R"([3,5,7] broadcast(w), dimensions={2}
  m = )", type, R"([3,5,7] multiply(xc, wb)
  h = )", type, R"([] constant(0.5)
  hb = )", type, R"([3,5,7] broadcast(h), dimensions={}
  v = )", type, R"([3,5,7] subtract(m, hb)
  i = )", type, "[] constant(", init, R"()
  ROOT r = )", out, " reduce(v, i), dimensions={", absl::StrJoin(dims, ","), R"(}, to_apply=red
}
ENTRY e {
  x = f32[3,5,7] parameter(0)
  w = )", type, R"([7] parameter(1)
  ROOT f = )", out, R"( fusion(x, w), kind=kInput, calls=fused
})");
}

Buf Owned(ET type, std::vector<int64_t> dims, std::vector<uint8_t>& storage) {
  Buf b = Buf::Of(type, std::move(dims));
  storage.assign(static_cast<size_t>(b.bytes) + 8, 0);
  b.data = storage.data();
  return b;
}

TEST(FusedReduceTest, MatchesTheReductionOfTheWholeValue) {
  const std::vector<std::vector<int64_t>> subsets = {{0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}, {0, 1, 2}};
  for (const std::string type : {"f32", "bf16"}) {
    const ET et = type == "f32" ? ET::kF32 : ET::kBF16;
    for (const std::string op : {"add", "maximum"}) {
      for (const auto& dims : subsets) {
        auto module = hlo::LoadModule(Module(dims, op, type), "fused.hlo");
        ASSERT_TRUE(module.ok()) << module.status();
        const hlo::Instruction* fusion = (*module)->entry()->root();
        std::vector<uint8_t> xs, ws, outs;
        Buf x = Owned(ET::kF32, {kA, kB, kC}, xs);
        Buf w = Owned(et, {kC}, ws);
        for (int64_t n = 0; n < x.count; ++n) StoreDouble(ET::kF32, x.data, n, std::sin(0.37 * n) * 3);
        for (int64_t k = 0; k < kC; ++k) StoreDouble(et, w.data, k, 0.25 * (k + 1));
        // The value as the fusion computes it, rounded to its type.
        std::vector<double> value(kA * kB * kC);
        for (int64_t n = 0; n < x.count; ++n) {
          auto round = [&](double v) {
            uint8_t tmp[4];
            StoreDouble(et, tmp, 0, v);
            return LoadDouble(et, tmp, 0);
          };
          const double xc = round(LoadDouble(ET::kF32, x.data, n));
          value[n] = round(round(xc * LoadDouble(et, w.data, n % kC)) - 0.5);
        }
        const hlo::Shape& out_shape = fusion->shape();
        std::vector<double> want(static_cast<size_t>(*out_shape.ElementCount()),
                                 op == "add" ? 0.0 : -std::numeric_limits<double>::infinity());
        for (int64_t i = 0; i < kA; ++i)
          for (int64_t j = 0; j < kB; ++j)
            for (int64_t k = 0; k < kC; ++k) {
              const int64_t idx[3] = {i, j, k}, size[3] = {kA, kB, kC};
              int64_t o = 0;
              for (int64_t d = 0; d < 3; ++d)
                if (std::find(dims.begin(), dims.end(), d) == dims.end()) o = o * size[d] + idx[d];
              const double v = value[(i * kB + j) * kC + k];
              want[o] = op == "add" ? want[o] + v : std::max(want[o], v);
            }
        for (int64_t slice_bytes : {int64_t{4}, int64_t{12}, int64_t{40}, int64_t{100}, int64_t{1} << 20}) {
          for (int threads : {1, 2}) {
            SCOPED_TRACE(absl::StrCat(type, " ", op, " dims {", absl::StrJoin(dims, ","), "} slice ",
                                      slice_bytes, " B, threads ", threads));
            auto kernel = FusedReduceKernel::Plan(*fusion, slice_bytes);
            ASSERT_TRUE(kernel.ok()) << kernel.status();
            Buf out = Owned(out_shape.type, out_shape.dims, outs);
            (*kernel)->Run({&x, &w}, out, ExprRunContext{}, threads);
            for (size_t o = 0; o < want.size(); ++o) {
              // bf16 results are the sum rounded once (as the plain reduce).
              const double tolerance = et == ET::kBF16 ? std::abs(want[o]) / 128 + 1e-6 : 1e-4;
              ASSERT_NEAR(LoadDouble(out.type, out.data, static_cast<int64_t>(o)), want[o], tolerance) << o;
            }
          }
        }
      }
    }
  }
}

TEST(FusedReduceTest, RefusesWhatItCannotStream) {
  // A reducer that is not op(p0, p1): the caller runs the computation as a
  // call instead.
  auto module = hlo::LoadModule(R"(HloModule m
red {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  ROOT r = f32[] multiply(s, s)
}
fused {
  x = f32[4,4] parameter(0)
  e = f32[4,4] exponential(x)
  i = f32[] constant(0)
  ROOT r = f32[4] reduce(e, i), dimensions={1}, to_apply=red
}
ENTRY e {
  x = f32[4,4] parameter(0)
  ROOT f = f32[4] fusion(x), kind=kInput, calls=fused
})", "refused.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  auto kernel = FusedReduceKernel::Plan(*(*module)->entry()->root());
  EXPECT_FALSE(kernel.ok());
}

}  // namespace
}  // namespace neuron::kernels
