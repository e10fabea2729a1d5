#include "lib/kernels/reduce_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "lib/kernels/element_convert.h"
#include "lib/kernels/float_sums.h"
#include "lib/kernels/scalar_fn.h"
#include "lib/kernels/simple_reducer.h"
#include "lib/kernels/thread_pool.h"

namespace neuron::kernels {
namespace {

using hlo::Opcode;
using ET = hlo::ElementType;

class ReduceKernel : public ReduceLikeKernel {
 public:
  absl::Status Init(const hlo::Instruction& instr) {
    std::vector<ET> types;
    for (size_t i = 0; i < instr.operand_count() / 2; ++i) types.push_back(instr.operand(i)->shape().type);
    if (instr.to_apply() == nullptr) return absl::InvalidArgumentError("reduce without a reducer");
    return Init(types, instr.operand(0)->shape(), instr.attrs().dimensions, *instr.to_apply());
  }

  // Operands of `types`, each shaped `in`, reduced over `rdims`.
  absl::Status Init(const std::vector<ET>& types, const hlo::Shape& in, const std::vector<int64_t>& rdims,
                    const hlo::Computation& reducer) {
    n_ops_ = static_cast<int>(types.size());
    std::vector<int64_t> strides = RowMajorStrides(in.dims);
    std::vector<int64_t> kept, red;
    for (int64_t d = 0; d < in.rank(); ++d)
      (std::find(rdims.begin(), rdims.end(), d) != rdims.end() ? red : kept).push_back(d);
    auto offsets = [&](const std::vector<int64_t>& dims) {
      std::vector<int64_t> offs = {0};
      for (int64_t d : dims) {
        std::vector<int64_t> next;
        next.reserve(offs.size() * in.dims[d]);
        for (int64_t o : offs)
          for (int64_t i = 0; i < in.dims[d]; ++i) next.push_back(o + i * strides[d]);
        offs.swap(next);
      }
      return offs;
    };
    base_ = offsets(kept);
    reduced_inner_ = !red.empty() && red.back() == in.rank() - 1;
    // Reducing the trailing dimensions reads offsets 0..R-1 of each row: no
    // table then (for a gigabyte of weights it would take twice that).
    trailing_ = reduced_inner_ && red.front() == in.rank() - static_cast<int64_t>(red.size());
    for (int64_t d : red) reduced_count_ *= in.dims[d];
    if (!trailing_) roff_ = offsets(red);
    absl::StatusOr<ScalarFn> fn = ScalarFn::CompileReducer(reducer);
    if (!fn.ok()) return fn.status();
    fn_ = std::make_unique<ScalarFn>(std::move(*fn));
    types_ = types;
    fast_op_ = n_ops_ == 1 ? fn_->simple_binary_op() : Opcode::kUnknown;
    if (fast_op_ != Opcode::kUnknown && !FastOpOk(fast_op_, types_[0])) fast_op_ = Opcode::kUnknown;
    int64_t lanes = std::min<int64_t>(static_cast<int64_t>(base_.size()), ExprProgram::kTile);
    acc_.assign(n_ops_, std::vector<uint64_t>(lanes));
    val_.assign(n_ops_, std::vector<uint64_t>(lanes));
    return absl::OkStatus();
  }

  template <typename T>
  void FastTyped(const Buf& in, const Buf& init, Buf& out) {
    // Accumulate in T (double for floats, int64 for ints).
    const int64_t O = static_cast<int64_t>(base_.size()), R = reduced_count_;
    std::vector<T> a(O);
    std::vector<T> vals;
    T init_v;
    if constexpr (std::is_floating_point_v<T>) init_v = LoadDouble(init.type, init.data, 0);
    else init_v = LoadInt(init.type, init.data, 0);
    std::fill(a.begin(), a.end(), init_v);
    // Convert the input in chunks into T and combine.
    const ET type = in.type;
    auto load = [&](int64_t idx) -> T {
      if constexpr (std::is_floating_point_v<T>) {
        if (type == ET::kF32) return reinterpret_cast<const float*>(in.data)[idx];
        if (type == ET::kF64) return reinterpret_cast<const double*>(in.data)[idx];
        if (type == ET::kBF16) return Bf16ToF32(reinterpret_cast<const uint16_t*>(in.data)[idx]);
        return LoadDouble(type, in.data, idx);
      } else {
        return LoadInt(type, in.data, idx);
      }
    };
    const Opcode op = fast_op_;
    const bool contiguous = trailing_ && R > 1;
    // Outputs [o0, o1) of the reduction; the two halves go to two threads
    // when the input is big.
    auto run = [&](int64_t o0, int64_t o1) {
      if (contiguous && type == ET::kF32 && op == Opcode::kAdd) {
        const float* p = reinterpret_cast<const float*>(in.data);
        for (int64_t o = o0; o < o1; ++o) a[o] = static_cast<T>(a[o] + SumF32InDouble(p + base_[o], R));
      } else if (reduced_inner_) {
        for (int64_t o = o0; o < o1; ++o) {
          T s = a[o];
          const int64_t b = base_[o];
          for (int64_t r = 0; r < R; ++r) s = Combine<T>(op, s, load(b + Roff(r)));
          a[o] = s;
        }
      } else {
        for (int64_t r = 0; r < R; ++r) {
          const int64_t ro = Roff(r);
          for (int64_t o = o0; o < o1; ++o) a[o] = Combine<T>(op, a[o], load(base_[o] + ro));
        }
      }
    };
    if (threads_ >= 2 && O >= 2 && O * R >= (1 << 20)) {
      ThreadPool::Global().Run(2, [&](int part) { part == 0 ? run(0, O / 2) : run(O / 2, O); });
    } else {
      run(0, O);
    }
    for (int64_t o = 0; o < O; ++o) {
      if constexpr (std::is_floating_point_v<T>) StoreDouble(out.type, out.data, o, a[o]);
      else StoreInt(out.type, out.data, o, a[o]);
    }
  }

  // The reducer runs as Combine's typed step (accumulating in double or
  // int64, stored once in the output's type, whatever it is).
  bool simple() const { return fast_op_ != Opcode::kUnknown; }

  void Run(const std::vector<const Buf*>& ins, const std::vector<Buf*>& outs, int threads) override {
    threads_ = threads;
    if (fast_op_ != Opcode::kUnknown) {
      if (DomainOf(types_[0]) == Domain::kI64) FastTyped<int64_t>(*ins[0], *ins[1], *outs[0]);
      else FastTyped<double>(*ins[0], *ins[1], *outs[0]);
      return;
    }
    // General: lanes of outputs, reducer applied once per reduced index.
    const int64_t O = static_cast<int64_t>(base_.size()), R = reduced_count_;
    std::vector<const void*> params(2 * n_ops_);
    std::vector<const void*> results(n_ops_);
    for (int64_t o0 = 0; o0 < O; o0 += ExprProgram::kTile) {
      int64_t n = std::min<int64_t>(ExprProgram::kTile, O - o0);
      for (int i = 0; i < n_ops_; ++i) {
        uint64_t init = LoadSlot(types_[i], ins[n_ops_ + i]->data, 0);
        if (DomainOf(types_[i]) == Domain::kF32) {
          float f;
          std::memcpy(&f, &init, 4);
          std::fill_n(reinterpret_cast<float*>(acc_[i].data()), n, f);
        } else {
          std::fill_n(acc_[i].begin(), n, init);
        }
      }
      for (int64_t r = 0; r < R; ++r) {
        for (int i = 0; i < n_ops_; ++i) {
          const Buf& in = *ins[i];
          int es = in.elem_size;
          Domain dom = DomainOf(in.type);
          for (int64_t l = 0; l < n; ++l) {
            int64_t idx = base_[o0 + l] + Roff(r);
            if (dom == Domain::kF32) LoadToDomain(in.type, in.data + idx * es, 1, reinterpret_cast<float*>(val_[i].data()) + l);
            else LoadToDomain(in.type, in.data + idx * es, 1, &val_[i][l]);
          }
        }
        // Accumulators and values as lane arrays (f32 lanes are packed).
        for (int i = 0; i < n_ops_; ++i) {
          params[i] = acc_[i].data();
          params[n_ops_ + i] = val_[i].data();
        }
        fn_->EvalLanes(params.data(), n, results.data());
        for (int i = 0; i < n_ops_; ++i) {
          size_t bytes = (DomainOf(types_[i]) == Domain::kF32 ? 4 : 8) * n;
          std::memmove(acc_[i].data(), results[i], bytes);
        }
      }
      for (int i = 0; i < n_ops_; ++i) {
        Buf& out = *outs[i];
        StoreFromDomain(out.type, acc_[i].data(), n, out.data + o0 * out.elem_size);
      }
    }
  }

 private:
  int n_ops_ = 1;
  int threads_ = 2;
  // Offset of the r-th reduced element within an output's row.
  int64_t Roff(int64_t r) const { return trailing_ ? r : roff_[r]; }
  std::vector<int64_t> base_, roff_;  // roff_ empty when trailing_
  bool trailing_ = false;
  int64_t reduced_count_ = 1;
  bool reduced_inner_ = false;
  std::unique_ptr<ScalarFn> fn_;
  std::vector<ET> types_;
  Opcode fast_op_ = Opcode::kUnknown;
  std::vector<std::vector<uint64_t>> acc_, val_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ReduceLikeKernel>> PlanSimpleReduce(hlo::ElementType type,
                                                                   const hlo::Shape& in,
                                                                   const std::vector<int64_t>& dims,
                                                                   const hlo::Computation& reducer) {
  auto k = std::make_unique<ReduceKernel>();
  absl::Status s = k->Init({type}, in, dims, reducer);
  if (!s.ok()) return s;
  if (!k->simple()) return absl::UnimplementedError("not a simple reducer (add, multiply, maximum, minimum, and, or)");
  return std::unique_ptr<ReduceLikeKernel>(std::move(k));
}

absl::StatusOr<std::unique_ptr<ReduceLikeKernel>> PlanReduce(const hlo::Instruction& instr) {
  auto k = std::make_unique<ReduceKernel>();
  absl::Status s = k->Init(instr);
  if (!s.ok()) return s;
  return std::unique_ptr<ReduceLikeKernel>(std::move(k));
}

}  // namespace neuron::kernels
