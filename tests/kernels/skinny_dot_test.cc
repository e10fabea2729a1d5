// The skinny dot's plans against a double-precision reference of dot's
// definition: the matrix on either side, free dims before and after its
// contracting dims, contracting dims paired in any order, batch dims, the
// layouts it must permute (contracting dims apart, batch dims not first),
// every narrow weight type, f32 and bf16 results, one and two threads.
#include "lib/kernels/skinny_dot.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "lib/kernels/element_convert.h"
#include "lib/kernels/bf16_pair_product.h"
#include "lib/kernels/gemm.h"
#include "lib/kernels/kept_transpose.h"
#include "lib/kernels/low_precision_gemm.h"
#include "lib/kernels/skinny_product.h"
#include "lib/support/host_memory.h"

namespace neuron::kernels {
namespace {

using ET = hlo::ElementType;

struct Case {
  std::string name;
  std::vector<int64_t> lhs, rhs;
  hlo::DotDims dims;
};

int64_t Count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<int64_t> Free(const std::vector<int64_t>& dims, const std::vector<int64_t>& batch,
                          const std::vector<int64_t>& contracting) {
  std::vector<int64_t> f;
  for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i)
    if (std::find(batch.begin(), batch.end(), i) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), i) == contracting.end())
      f.push_back(i);
  return f;
}

// Row-major offset of a multi-index.
int64_t Offset(const std::vector<int64_t>& dims, const std::vector<int64_t>& index) {
  int64_t o = 0;
  for (size_t i = 0; i < dims.size(); ++i) o = o * dims[i] + index[i];
  return o;
}

// Steps a multi-index over `bounds`; false after the last.
bool Next(std::vector<int64_t>& index, const std::vector<int64_t>& bounds) {
  for (int64_t i = static_cast<int64_t>(index.size()) - 1; i >= 0; --i) {
    if (++index[i] < bounds[i]) return true;
    index[i] = 0;
  }
  return false;
}

// dot by its definition: output dims are batch, lhs free, rhs free.
std::vector<double> ReferenceDot(const Case& c, const std::vector<double>& lhs, const std::vector<double>& rhs,
                                 std::vector<int64_t>* out_dims) {
  const hlo::DotDims& d = c.dims;
  const std::vector<int64_t> lf = Free(c.lhs, d.lhs_batch, d.lhs_contracting);
  const std::vector<int64_t> rf = Free(c.rhs, d.rhs_batch, d.rhs_contracting);
  std::vector<int64_t> od, cd;
  for (int64_t b : d.lhs_batch) od.push_back(c.lhs[b]);
  for (int64_t f : lf) od.push_back(c.lhs[f]);
  for (int64_t f : rf) od.push_back(c.rhs[f]);
  for (int64_t k : d.lhs_contracting) cd.push_back(c.lhs[k]);
  *out_dims = od;
  std::vector<double> out(Count(od), 0.0);
  std::vector<int64_t> oi(od.size(), 0);
  do {
    std::vector<int64_t> li(c.lhs.size()), ri(c.rhs.size());
    size_t p = 0;
    for (size_t t = 0; t < d.lhs_batch.size(); ++t, ++p) li[d.lhs_batch[t]] = ri[d.rhs_batch[t]] = oi[p];
    for (int64_t f : lf) li[f] = oi[p++];
    for (int64_t f : rf) ri[f] = oi[p++];
    std::vector<int64_t> ci(cd.size(), 0);
    double sum = 0;
    do {
      for (size_t t = 0; t < cd.size(); ++t) li[d.lhs_contracting[t]] = ri[d.rhs_contracting[t]] = ci[t];
      sum += lhs[Offset(c.lhs, li)] * rhs[Offset(c.rhs, ri)];
    } while (!cd.empty() && Next(ci, cd));
    out[Offset(od, oi)] = sum;
  } while (!od.empty() && Next(oi, od));
  return out;
}

Buf Filled(ET type, const std::vector<int64_t>& dims, const std::vector<double>& values, std::vector<uint8_t>& store) {
  Buf b = Buf::Of(type, dims);
  store.assign(static_cast<size_t>(b.bytes), 0);
  for (int64_t i = 0; i < b.count; ++i) StoreDouble(type, store.data(), i, values[i]);
  b.data = store.data();
  return b;
}

hlo::DotDims Dims(std::vector<int64_t> lb, std::vector<int64_t> lc, std::vector<int64_t> rb, std::vector<int64_t> rc) {
  hlo::DotDims d;
  d.lhs_batch = std::move(lb);
  d.lhs_contracting = std::move(lc);
  d.rhs_batch = std::move(rb);
  d.rhs_contracting = std::move(rc);
  return d;
}

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"matrix rhs [n, k]", {3, 24}, {40, 24}, Dims({}, {1}, {}, {1})},
      {"matrix rhs [k, n]", {3, 24}, {24, 40}, Dims({}, {1}, {}, {0})},
      {"q einsum: free dims either side", {1, 3, 24}, {4, 24, 16}, Dims({}, {2}, {}, {1})},
      {"kv einsum: matrix lhs", {2, 1, 24, 16}, {1, 3, 24}, Dims({}, {2}, {}, {2})},
      {"matrix lhs [n, k]", {40, 24}, {5, 24}, Dims({}, {1}, {}, {1})},
      {"two contracting dims", {1, 3, 4, 16}, {4, 16, 40}, Dims({}, {2, 3}, {}, {0, 1})},
      {"contracting dims paired crosswise", {3, 16, 4}, {4, 16, 40}, Dims({}, {1, 2}, {}, {1, 0})},
      {"batch dims", {2, 3, 24}, {2, 24, 40}, Dims({0}, {2}, {0}, {1})},
      {"batch dims, matrix lhs", {2, 40, 24}, {2, 3, 24}, Dims({0}, {2}, {0}, {2})},
      {"contracting dims apart (permuted)", {3, 4, 6}, {4, 40, 6}, Dims({}, {1, 2}, {}, {0, 2})},
      {"batch dim not first (permuted)", {2, 3, 24}, {24, 2, 40}, Dims({0}, {2}, {1}, {0})},
      {"sixteen rows, odd sizes", {16, 37}, {37, 29}, Dims({}, {1}, {}, {0})},
      {"one row, many outputs over threads", {1, 512}, {16, 512, 64}, Dims({}, {1}, {}, {1})},
      {"eleven rows over threads, [n, k]", {11, 300}, {2, 700, 300}, Dims({}, {1}, {}, {2})},
      {"eleven rows over threads, [k, n]", {11, 300}, {300, 1400}, Dims({}, {1}, {}, {0})},
      // A [k, n] matrix's rows split over the threads: whole AMX tiles,
      // uneven runs, one row of x.
      {"eleven rows over threads, [k, n] in whole tiles", {11, 512}, {512, 1024}, Dims({}, {1}, {}, {0})},
      {"three rows over threads, [k, n] in uneven runs", {3, 96}, {96, 800}, Dims({}, {1}, {}, {0})},
      {"one row over threads, [k, n]", {1, 700}, {700, 200}, Dims({}, {1}, {}, {0})},
      // Blocks of [k, q] (heads) taken together by the AMX tiles: one
      // thread, over threads (whole blocks each), the matrix on the left.
      {"q einsum in tile blocks", {1, 11, 128}, {4, 128, 64}, Dims({}, {2}, {}, {1})},
      {"q einsum in tile blocks over threads", {1, 11, 256}, {4, 256, 96}, Dims({}, {2}, {}, {1})},
      // Blocks that do not divide among the threads split by rows instead.
      {"q einsum in three tile blocks over threads", {1, 11, 256}, {3, 256, 96}, Dims({}, {2}, {}, {1})},
      {"kv einsum in tile blocks over threads", {2, 1, 256, 160}, {1, 5, 256}, Dims({}, {2}, {}, {2})},
  };
  return cases;
}

TEST(SkinnyDotTest, EveryLayoutAndTypeMatchesTheDefinition) {
  for (const Case& c : Cases()) {
    for (ET w_type : {ET::kBF16, ET::kF16, ET::kF8E4M3FN, ET::kF8E5M2}) {
      for (ET x_type : {ET::kBF16, ET::kF32}) {
        for (int threads : {1, 2}) {
          SetGemmThreads(threads);
          // Which operand is the matrix: the one with more free elements.
          const bool w_is_lhs = c.name.find("matrix lhs") != std::string::npos ||
                                c.name.find("kv einsum") != std::string::npos;
          const ET lhs_type = w_is_lhs ? w_type : x_type, rhs_type = w_is_lhs ? x_type : w_type;
          // Where the CPU has a bf16 matmul, oneDNN takes bf16 x bf16.
          if (lhs_type == rhs_type && LowPrecisionGemmAvailable(lhs_type)) continue;
          // Multiples of 1/4 up to 1.5 and of 1/2 up to 2: exact in every
          // type here, and every sum exact in f32.
          std::vector<double> lv(Count(c.lhs)), rv(Count(c.rhs));
          for (size_t i = 0; i < lv.size(); ++i) lv[i] = static_cast<double>(static_cast<int64_t>((i * 7) % 13) - 6) * 0.25;
          for (size_t i = 0; i < rv.size(); ++i) rv[i] = static_cast<double>(static_cast<int64_t>((i * 5) % 9) - 4) * 0.5;
          std::vector<int64_t> out_dims;
          const std::vector<double> want = ReferenceDot(c, lv, rv, &out_dims);
          const std::string where = c.name + ": lhs " + std::string(hlo::ElementTypeName(lhs_type)) + "[" +
                                    absl::StrJoin(c.lhs, ",") + "], rhs " + std::string(hlo::ElementTypeName(rhs_type)) +
                                    "[" + absl::StrJoin(c.rhs, ",") + "], " + std::to_string(threads) + " threads";
          for (ET out_type : {ET::kF32, ET::kBF16}) {
            const hlo::Shape ls{lhs_type, c.lhs}, rs{rhs_type, c.rhs}, os{out_type, out_dims};
            std::unique_ptr<DotKernel> kernel = PlanSkinnyDot(ls, rs, c.dims, os);
            ASSERT_NE(kernel, nullptr) << where;
            std::vector<uint8_t> lstore, rstore, ostore;
            Buf lhs = Filled(lhs_type, c.lhs, lv, lstore), rhs = Filled(rhs_type, c.rhs, rv, rstore);
            Buf out = Filled(out_type, out_dims, std::vector<double>(Count(out_dims), -99.0), ostore);
            kernel->Run(lhs, rhs, out);
            for (int64_t i = 0; i < out.count; ++i) {
              const double got = LoadDouble(out_type, out.data, i);
              if (out_type == ET::kF32) {
                ASSERT_EQ(got, want[i]) << where << " at " << i;
              } else {
                ASSERT_NEAR(got, want[i], std::abs(want[i]) / 128 + 1e-9) << where << " (bf16 result) at " << i;
              }
            }
          }
        }
      }
    }
  }
  SetGemmThreads(1);
}

TEST(SkinnyDotTest, F32MatricesTheGeneralDotWouldPermuteAreReadInPlace) {
  struct F32Case {
    Case c;
    bool planned;
  };
  const std::vector<F32Case> cases = {
      {{"q einsum", {1, 3, 24}, {4, 24, 16}, Dims({}, {2}, {}, {1})}, true},
      {{"kv einsum: matrix lhs", {2, 1, 24, 16}, {1, 3, 24}, Dims({}, {2}, {}, {2})}, true},
      // The general dot reads these in place already.
      {{"[k, n]", {3, 24}, {24, 40}, Dims({}, {1}, {}, {0})}, false},
      {{"[n, k]", {3, 24}, {40, 24}, Dims({}, {1}, {}, {1})}, false},
      // Here both would permute: left to the general dot.
      {{"contracting dims apart", {3, 4, 6}, {4, 40, 6}, Dims({}, {1, 2}, {}, {0, 2})}, false},
  };
  for (const F32Case& fc : cases) {
    const Case& c = fc.c;
    const bool w_is_lhs = c.name.find("matrix lhs") != std::string::npos;
    std::vector<double> lv(Count(c.lhs)), rv(Count(c.rhs));
    for (size_t i = 0; i < lv.size(); ++i) lv[i] = static_cast<double>(static_cast<int64_t>((i * 7) % 13) - 6) * 0.25;
    for (size_t i = 0; i < rv.size(); ++i) rv[i] = static_cast<double>(static_cast<int64_t>((i * 5) % 9) - 4) * 0.5;
    std::vector<int64_t> out_dims;
    const std::vector<double> want = ReferenceDot(c, lv, rv, &out_dims);
    const ET lhs_type = w_is_lhs ? ET::kF32 : ET::kBF16, rhs_type = w_is_lhs ? ET::kBF16 : ET::kF32;
    for (ET x_type : {ET::kBF16, ET::kF32}) {
      const hlo::Shape ls{w_is_lhs ? lhs_type : x_type, c.lhs}, rs{w_is_lhs ? x_type : rhs_type, c.rhs};
      std::unique_ptr<DotKernel> kernel = PlanSkinnyDot(ls, rs, c.dims, {ET::kF32, out_dims});
      ASSERT_EQ(kernel != nullptr, fc.planned) << c.name;
      if (kernel == nullptr) continue;
      std::vector<uint8_t> lstore, rstore, ostore;
      Buf lhs = Filled(ls.type, c.lhs, lv, lstore), rhs = Filled(rs.type, c.rhs, rv, rstore);
      Buf out = Filled(ET::kF32, out_dims, std::vector<double>(Count(out_dims), -99.0), ostore);
      kernel->Run(lhs, rhs, out);
      for (int64_t i = 0; i < out.count; ++i) ASSERT_EQ(LoadDouble(ET::kF32, out.data, i), want[i]) << c.name << " at " << i;
    }
  }
}

// A bf16 [k, n] matrix (alone, as blocks of heads, on the left) seen at one
// version call after call, or a module's constant, is read through its
// kept transpose from the second call on; new contents at a new version
// are never answered from the old transpose.
TEST(SkinnyDotTest, FrozenKnMatricesAreReadThroughAKeptTranspose) {
  const std::vector<Case> cases = {
      {"[k, n]", {11, 96}, {96, 160}, Dims({}, {1}, {}, {0})},
      {"[k, n], odd sizes", {5, 37}, {37, 29}, Dims({}, {1}, {}, {0})},
      {"q einsum heads [n/q][k][q]", {1, 11, 64}, {4, 64, 32}, Dims({}, {2}, {}, {1})},
      {"kv einsum, matrix lhs", {2, 1, 64, 32}, {1, 5, 64}, Dims({}, {2}, {}, {2})},
  };
  const bool kept_expected = Bf16TilesAvailable() && HostMemoryAvailable() != 0;
  for (const Case& c : cases) {
    for (int threads : {1, 2}) {
      SetGemmThreads(threads);
      const bool w_is_lhs = c.name.find("matrix lhs") != std::string::npos;
      std::vector<int64_t> out_dims;
      std::vector<double> lv(Count(c.lhs)), rv(Count(c.rhs));
      (void)ReferenceDot(c, lv, rv, &out_dims);
      const hlo::Shape ls{ET::kBF16, c.lhs}, rs{ET::kBF16, c.rhs};
      std::unique_ptr<DotKernel> kernel;
      std::vector<uint8_t> lstore, rstore, ostore;
      // Versions 11 then 12 on one kernel; then a fresh kernel whose
      // matrix is a constant (no version: its role says it never changes).
      for (int round = 0; round < 3; ++round) {
        const bool constant = round == 2;
        if (round != 1) kernel = PlanSkinnyDot(ls, rs, c.dims, {ET::kF32, out_dims});
        ASSERT_NE(kernel, nullptr) << c.name;
        // Exact in bf16, every sum exact in f32; each round other values.
        for (size_t i = 0; i < lv.size(); ++i)
          lv[i] = static_cast<double>(static_cast<int64_t>((i * 7 + round) % 13) - 6) * 0.25;
        for (size_t i = 0; i < rv.size(); ++i)
          rv[i] = static_cast<double>(static_cast<int64_t>((i * 5 + round) % 9) - 4) * 0.5;
        const std::vector<double> want = ReferenceDot(c, lv, rv, &out_dims);
        Buf lhs = Filled(ET::kBF16, c.lhs, lv, lstore), rhs = Filled(ET::kBF16, c.rhs, rv, rstore);
        Buf& matrix = w_is_lhs ? lhs : rhs;
        if (constant) matrix.role = Buf::Role::kConstant;
        else matrix.version = 11 + round;
        const uint64_t kept_before = KeptTranspose::KeptBytes();
        for (int call = 1; call <= 3; ++call) {
          Buf out = Filled(ET::kF32, out_dims, std::vector<double>(Count(out_dims), -99.0), ostore);
          kernel->Run(lhs, rhs, out);
          for (int64_t i = 0; i < out.count; ++i) {
            ASSERT_EQ(LoadDouble(ET::kF32, out.data, i), want[i])
                << c.name << ", round " << round << ", call " << call << ", " << threads << " threads, at " << i;
          }
        }
        if (kept_expected && round != 1) {
          EXPECT_GT(KeptTranspose::KeptBytes(), kept_before) << c.name << ", round " << round << ": none kept";
        }
      }
    }
  }
  SetGemmThreads(1);
}

TEST(SkinnyDotTest, LeavesWhatItDoesNotServeToTheGeneralDot) {
  const hlo::DotDims d = Dims({}, {1}, {}, {0});
  // Seventeen rows, f32 weights, f64, an integer matrix.
  EXPECT_EQ(PlanSkinnyDot({ET::kF32, {kSkinnyRows + 1, 8}}, {ET::kBF16, {8, 8}}, d, {ET::kF32, {kSkinnyRows + 1, 8}}),
            nullptr);
  EXPECT_EQ(PlanSkinnyDot({ET::kF32, {2, 8}}, {ET::kF32, {8, 8}}, d, {ET::kF32, {2, 8}}), nullptr);
  EXPECT_EQ(PlanSkinnyDot({ET::kF64, {2, 8}}, {ET::kBF16, {8, 8}}, d, {ET::kF64, {2, 8}}), nullptr);
  EXPECT_EQ(PlanSkinnyDot({ET::kF32, {2, 8}}, {ET::kS8, {8, 8}}, d, {ET::kF32, {2, 8}}), nullptr);
}

}  // namespace
}  // namespace neuron::kernels
