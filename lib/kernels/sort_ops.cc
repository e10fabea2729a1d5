#include "lib/kernels/sort_ops.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>

#include "lib/kernels/element_convert.h"

namespace neuron::kernels {
namespace {

// Key for a total order over floats/ints that agrees with IEEE < on
// non-NaN values; NaNs sort last (positive) or first (negative).
double SortKey(ElementType t, const uint8_t* data, int64_t i) {
  return LoadDouble(t, data, i);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SortKernel>> SortKernel::Plan(const hlo::Instruction& instr) {
  auto k = std::unique_ptr<SortKernel>(new SortKernel());
  k->dim_ = instr.attrs().dimensions.empty() ? 0 : instr.attrs().dimensions[0];
  absl::StatusOr<ScalarFn> fn = ScalarFn::Compile(*instr.to_apply());
  if (!fn.ok()) return fn.status();
  k->cmp_ = std::make_unique<ScalarFn>(std::move(*fn));
  const hlo::Instruction* root = instr.to_apply()->root();
  if (root->opcode() == hlo::Opcode::kCompare && root->operand(0)->opcode() == hlo::Opcode::kParameter &&
      root->operand(1)->opcode() == hlo::Opcode::kParameter) {
    int64_t a = root->operand(0)->attrs().parameter_number;
    int64_t b = root->operand(1)->attrs().parameter_number;
    auto dir = root->attrs().comparison_direction;
    hlo::ElementType t = root->operand(0)->shape().type;
    bool ok_type = t != hlo::ElementType::kU64 && !hlo::IsComplex(t);
    if (ok_type && dir && ((a == 0 && b == 1) || (a == 1 && b == 0))) {
      bool lt = *dir == hlo::ComparisonDirection::kLt;
      bool gt = *dir == hlo::ComparisonDirection::kGt;
      if (lt || gt) {
        bool asc = lt == (a == 0);
        k->fast_ = asc ? 1 : -1;
        k->total_order_ = root->attrs().comparison_type == "TOTALORDER";
      }
    }
  }
  return k;
}

void SortKernel::Run(const std::vector<const Buf*>& ins, const std::vector<Buf*>& outs) {
  const Buf& key = *ins[0];
  int64_t r = key.rank();
  int64_t len = r ? key.dims[dim_] : 1;
  std::vector<int64_t> strides = RowMajorStrides(key.dims);
  int64_t stride = r ? strides[dim_] : 1;
  int64_t rows = len ? key.count / len : 0;
  std::vector<int64_t> perm(len);
  std::vector<double> keys(len);
  std::vector<int64_t> ikeys(len);
  const size_t nops = ins.size();
  std::vector<uint64_t> params(2 * nops);
  uint64_t res[4];
  bool int_keys = DomainOf(key.type) == Domain::kI64;
  for (int64_t row = 0; row < rows; ++row) {
    // Base offset of this row: outer index * (len*stride) + inner index.
    int64_t outer = row / stride, inner = row % stride;
    int64_t base = outer * len * stride + inner;
    std::iota(perm.begin(), perm.end(), 0);
    if (fast_ != 0) {
      if (int_keys) {
        for (int64_t i = 0; i < len; ++i) ikeys[i] = LoadInt(key.type, key.data, base + i * stride);
        if (fast_ > 0) std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return ikeys[a] < ikeys[b]; });
        else std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return ikeys[a] > ikeys[b]; });
      } else {
        for (int64_t i = 0; i < len; ++i) keys[i] = SortKey(key.type, key.data, base + i * stride);
        if (total_order_) {
          for (int64_t i = 0; i < len; ++i) {
            int64_t bits = std::bit_cast<int64_t>(keys[i]);
            ikeys[i] = bits ^ ((bits >> 63) & 0x7fffffffffffffffll);
          }
          if (fast_ > 0) std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return ikeys[a] < ikeys[b]; });
          else std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return ikeys[a] > ikeys[b]; });
        } else {
          if (fast_ > 0) std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return keys[a] < keys[b]; });
          else std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return keys[a] > keys[b]; });
        }
      }
    } else {
      std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
        for (size_t o = 0; o < nops; ++o) {
          params[2 * o] = LoadSlot(ins[o]->type, ins[o]->data, base + a * stride);
          params[2 * o + 1] = LoadSlot(ins[o]->type, ins[o]->data, base + b * stride);
        }
        cmp_->EvalScalar(params.data(), res);
        return res[0] != 0;
      });
    }
    for (size_t o = 0; o < nops; ++o) {
      const int es = ins[o]->elem_size;
      for (int64_t i = 0; i < len; ++i)
        std::memcpy(outs[o]->data + (base + i * stride) * es, ins[o]->data + (base + perm[i] * stride) * es, es);
    }
  }
}

void TopK(const Buf& in, int64_t k, bool largest, Buf& values, Buf& indices) {
  int64_t len = in.rank() ? in.dims.back() : 1;
  int64_t rows = len ? in.count / len : 0;
  std::vector<int64_t> perm(len);
  std::vector<double> keys(len);
  const int es = in.elem_size;
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t i = 0; i < len; ++i) keys[i] = LoadDouble(in.type, in.data, row * len + i);
    std::iota(perm.begin(), perm.end(), 0);
    auto better = [&](int64_t a, int64_t b) {
      double x = keys[a], y = keys[b];
      // NaN counts as largest.
      bool xn = std::isnan(x), yn = std::isnan(y);
      if (xn != yn) return largest ? xn : yn;
      if (x != y) return largest ? x > y : x < y;
      return a < b;
    };
    std::partial_sort(perm.begin(), perm.begin() + std::min(k, len), perm.end(), better);
    for (int64_t i = 0; i < k && i < len; ++i) {
      std::memcpy(values.data + (row * k + i) * es, in.data + (row * len + perm[i]) * es, es);
      StoreInt(indices.type, indices.data, row * k + i, perm[i]);
    }
  }
}

}  // namespace neuron::kernels
