#include "lib/kernels/window_ops.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "lib/kernels/element_convert.h"
#include "lib/kernels/scalar_fn.h"
#include "lib/kernels/simple_reducer.h"
#include "lib/kernels/thread_pool.h"
#include "lib/kernels/window_walk.h"

namespace neuron::kernels {
namespace {

using hlo::Opcode;
using ET = hlo::ElementType;
using Dir = hlo::ComparisonDirection;

// bf16 storage, apart from uint16_t so the conversions below know it.
struct Bf16 {
  uint16_t bits;
};

// A stored value in the accumulator's type A, and back (bf16 rounds to
// nearest even, integers wrap).
template <typename A, typename S>
inline A Widen(S v) {
  if constexpr (std::is_same_v<S, Bf16>) return static_cast<A>(Bf16ToF32(v.bits));
  else return static_cast<A>(v);
}
template <typename D, typename A>
inline D Narrow(A v) {
  if constexpr (std::is_same_v<D, Bf16>) return Bf16{F32ToBf16(static_cast<float>(v))};
  else return static_cast<D>(v);
}

// Integer arithmetic wraps, as the reducer's does.
template <typename T>
inline T WrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

// The simple reducers as types, so each inner loop is compiled (and
// vectorised) for its one operation. Each is Combine's step.
struct MaxOp {
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      const bool keep = (a > b) | (a != a);  // NaN propagates, the accumulator's first
      return keep ? a : b;
    } else {
      return a > b ? a : b;
    }
  }
};
struct MinOp {
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      const bool keep = (a < b) | (a != a);
      return keep ? a : b;
    } else {
      return a < b ? a : b;
    }
  }
};
struct AddOp {
  template <typename T>
  static T Apply(T a, T b) { return WrapAdd(a, b); }
};
struct MulOp {
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    } else {
      return a * b;
    }
  }
};
struct AndOp {
  template <typename T>
  static T Apply(T a, T b) { return a & b; }
};
struct OrOp {
  template <typename T>
  static T Apply(T a, T b) { return a | b; }
};

// Splits the outer positions over the pool when the work is big.
template <typename Body>
void SplitOuter(const WindowWalk& walk, int threads, const Body& body) {
  constexpr double kParallelWork = 1 << 18;
  const int64_t n = walk.outer_count();
  const double work = static_cast<double>(n) * static_cast<double>(walk.lanes()) *
                      std::max(1.0, walk.taps_per_output());
  const int parts = static_cast<int>(std::min<int64_t>(
      {threads, ThreadPool::Global().max_parallelism(), n}));
  if (parts < 2 || work < kParallelWork) {
    body(0, n);
    return;
  }
  ThreadPool::Global().Run(parts, [&](int p) { body(n / parts * p + std::min<int64_t>(p, n % parts),
                                                    n / parts * (p + 1) + std::min<int64_t>(p + 1, n % parts)); });
}

// A strided walk's window at the cursor, into acc: the outer taps' input
// rows are combined first, whole and contiguous, into row (the reducers
// here are associative and commutative), then the lane dim's taps read row
// with the window's stride. A 3x3 pool reads 3 rows and 3 strided runs
// instead of 9 strided runs.
template <typename S, typename A, typename Op>
void CombineStrided(const WindowWalk& walk, WindowWalk::Cursor& cursor, const S* in,
                    A* __restrict row, A* __restrict acc) {
  const int64_t width = walk.lane_input_size();
  bool any = false;
  cursor.ForEachTap([&](int64_t off) {
    const S* __restrict src = in + off;
    if (!any) {
      for (int64_t x = 0; x < width; ++x) row[x] = Widen<A>(src[x]);
      any = true;
      return;
    }
    for (int64_t x = 0; x < width; ++x) row[x] = Op::Apply(row[x], Widen<A>(src[x]));
  });
  if (!any) return;
  const int64_t step = walk.lane_stride();
  for (const WindowWalk::LaneRun& r : walk.runs()) {
    A* __restrict a = acc + r.first;
    const A* __restrict s = row + r.input;
    const int64_t n = r.end - r.first;
    // Strides 1 and 2 (pools) as constants, so their loads vectorise.
    if (step == 1) {
      for (int64_t i = 0; i < n; ++i) a[i] = Op::Apply(a[i], s[i]);
    } else if (step == 2) {
      for (int64_t i = 0; i < n; ++i) a[i] = Op::Apply(a[i], s[2 * i]);
    } else {
      for (int64_t i = 0; i < n; ++i) a[i] = Op::Apply(a[i], s[i * step]);
    }
  }
}

// out = the reducer over each window, taps combined lane by lane into
// accumulators of type A and stored once.
template <typename S, typename A, typename D, typename Op>
void ReduceWindowTyped(const WindowWalk& walk, const S* in, A init, D* out, int threads) {
  const int64_t lanes = walk.lanes();
  SplitOuter(walk, threads, [&](int64_t j0, int64_t j1) {
    if (j0 >= j1) return;
    std::vector<A> acc_storage(lanes), row_storage(walk.lane_input_size());
    A* __restrict acc = acc_storage.data();
    A* __restrict row = row_storage.data();
    WindowWalk::Cursor cursor(walk, j0);
    for (int64_t j = j0; j < j1; ++j) {
      std::fill_n(acc, lanes, init);
      if (!walk.strided()) {
        cursor.ForEachTap([&](int64_t off) {
          const S* __restrict src = in + off;
          for (int64_t i = 0; i < lanes; ++i) acc[i] = Op::Apply(acc[i], Widen<A>(src[i]));
        });
      } else {
        CombineStrided<S, A, Op>(walk, cursor, in, row, acc);
      }
      D* __restrict dst = out + j * lanes;
      for (int64_t i = 0; i < lanes; ++i) dst[i] = Narrow<D>(acc[i]);
      if (j + 1 < j1) cursor.Next();
    }
  });
}

template <typename S, typename A, typename D>
void ReduceWindowOp(Opcode op, const WindowWalk& walk, const S* in, A init, D* out, int threads) {
  switch (op) {
    case Opcode::kMaximum: return ReduceWindowTyped<S, A, D, MaxOp>(walk, in, init, out, threads);
    case Opcode::kMinimum: return ReduceWindowTyped<S, A, D, MinOp>(walk, in, init, out, threads);
    case Opcode::kAdd: return ReduceWindowTyped<S, A, D, AddOp>(walk, in, init, out, threads);
    case Opcode::kMultiply: return ReduceWindowTyped<S, A, D, MulOp>(walk, in, init, out, threads);
    default: break;
  }
  if constexpr (std::is_integral_v<A>) {
    if (op == Opcode::kAnd) return ReduceWindowTyped<S, A, D, AndOp>(walk, in, init, out, threads);
    if (op == Opcode::kOr) return ReduceWindowTyped<S, A, D, OrOp>(walk, in, init, out, threads);
  }
}

class ReduceWindowKernel : public ReduceLikeKernel {
 public:
  absl::Status Init(const hlo::Instruction& instr) {
    n_ops_ = static_cast<int>(instr.operand_count() / 2);
    const hlo::Shape& out0 = instr.shape().IsTuple() ? instr.shape().tuple[0] : instr.shape();
    const std::vector<int64_t>& in_dims = instr.operand(0)->shape().dims;
    absl::StatusOr<ScalarFn> fn = ScalarFn::CompileReducer(*instr.to_apply());
    if (!fn.ok()) return fn.status();
    fn_ = std::make_unique<ScalarFn>(std::move(*fn));
    for (int i = 0; i < n_ops_; ++i) types_.push_back(instr.operand(i)->shape().type);
    fast_op_ = n_ops_ == 1 ? fn_->simple_binary_op() : Opcode::kUnknown;
    if (fast_op_ != Opcode::kUnknown &&
        (!FastOpOk(fast_op_, types_[0]) || out0.type != types_[0] ||
         instr.operand(1)->shape().type != types_[0]))
      fast_op_ = Opcode::kUnknown;
    return walk_.Init(in_dims, out0.dims, instr.attrs().window, /*lanes=*/fast_op_ != Opcode::kUnknown);
  }

  void Run(const std::vector<const Buf*>& ins, const std::vector<Buf*>& outs, int threads) override {
    if (outs[0]->count == 0) return;
    if (fast_op_ == Opcode::kUnknown) return RunPerElement(ins, outs);
    const Buf& in = *ins[0];
    const Buf& init = *ins[1];
    Buf& out = *outs[0];
    const bool sums = fast_op_ == Opcode::kAdd || fast_op_ == Opcode::kMultiply;
    switch (in.type) {
      case ET::kF32: {
        auto* src = reinterpret_cast<const float*>(in.data);
        auto* dst = reinterpret_cast<float*>(out.data);
        const double v = LoadDouble(init.type, init.data, 0);
        // Products and sums in double, as the plain reduce has them.
        if (sums) ReduceWindowOp<float, double, float>(fast_op_, walk_, src, v, dst, threads);
        else ReduceWindowOp<float, float, float>(fast_op_, walk_, src, static_cast<float>(v), dst, threads);
        return;
      }
      case ET::kBF16: {
        auto* src = reinterpret_cast<const Bf16*>(in.data);
        auto* dst = reinterpret_cast<Bf16*>(out.data);
        const double v = LoadDouble(init.type, init.data, 0);
        if (sums) ReduceWindowOp<Bf16, double, Bf16>(fast_op_, walk_, src, v, dst, threads);
        else ReduceWindowOp<Bf16, float, Bf16>(fast_op_, walk_, src, static_cast<float>(v), dst, threads);
        return;
      }
      case ET::kF64:
        ReduceWindowOp<double, double, double>(fast_op_, walk_, reinterpret_cast<const double*>(in.data),
                                               LoadDouble(init.type, init.data, 0),
                                               reinterpret_cast<double*>(out.data), threads);
        return;
      case ET::kS32:
        ReduceWindowOp<int32_t, int32_t, int32_t>(fast_op_, walk_, reinterpret_cast<const int32_t*>(in.data),
                                                  static_cast<int32_t>(LoadInt(init.type, init.data, 0)),
                                                  reinterpret_cast<int32_t*>(out.data), threads);
        return;
      case ET::kS64:
        ReduceWindowOp<int64_t, int64_t, int64_t>(fast_op_, walk_, reinterpret_cast<const int64_t*>(in.data),
                                                  LoadInt(init.type, init.data, 0),
                                                  reinterpret_cast<int64_t*>(out.data), threads);
        return;
      default:
        break;
    }
    // Other types: through double or int64 copies of the operand and result.
    if (DomainOf(in.type) == Domain::kI64) RunWidened<int64_t>(in, init, out, threads);
    else RunWidened<double>(in, init, out, threads);
  }

 private:
  template <typename W>
  void RunWidened(const Buf& in, const Buf& init, Buf& out, int threads) {
    std::vector<W> wide_in(in.count), wide_out(out.count);
    for (int64_t i = 0; i < in.count; ++i) {
      if constexpr (std::is_integral_v<W>) wide_in[i] = LoadInt(in.type, in.data, i);
      else wide_in[i] = LoadDouble(in.type, in.data, i);
    }
    W v;
    if constexpr (std::is_integral_v<W>) v = LoadInt(init.type, init.data, 0);
    else v = LoadDouble(init.type, init.data, 0);
    ReduceWindowOp<W, W, W>(fast_op_, walk_, wide_in.data(), v, wide_out.data(), threads);
    for (int64_t i = 0; i < out.count; ++i) {
      if constexpr (std::is_integral_v<W>) StoreInt(out.type, out.data, i, wide_out[i]);
      else StoreDouble(out.type, out.data, i, wide_out[i]);
    }
  }

  // Any reducer, variadic too: the computation once per output and tap.
  void RunPerElement(const std::vector<const Buf*>& ins, const std::vector<Buf*>& outs) {
    std::vector<uint64_t> acc(n_ops_), params(2 * n_ops_), res(n_ops_);
    const int64_t count = walk_.outer_count();
    WindowWalk::Cursor cursor(walk_, 0);
    for (int64_t o = 0; o < count; ++o) {
      for (int i = 0; i < n_ops_; ++i) acc[i] = LoadSlot(types_[i], ins[n_ops_ + i]->data, 0);
      cursor.ForEachTap([&](int64_t off) {
        for (int i = 0; i < n_ops_; ++i) {
          params[i] = acc[i];
          params[n_ops_ + i] = LoadSlot(types_[i], ins[i]->data, off);
        }
        fn_->EvalScalar(params.data(), res.data());
        acc.swap(res);
      });
      for (int i = 0; i < n_ops_; ++i) StoreSlot(outs[i]->type, outs[i]->data, o, acc[i]);
      if (o + 1 < count) cursor.Next();
    }
  }

  int n_ops_ = 1;
  WindowWalk walk_;
  std::unique_ptr<ScalarFn> fn_;
  std::vector<ET> types_;
  Opcode fast_op_ = Opcode::kUnknown;
};

// select(best, candidate) as a compare of the two values.
template <Dir kDir>
struct Keeps {
  template <typename T>
  static bool Apply(T best, T v) {
    if constexpr (kDir == Dir::kGe) return best >= v;
    else if constexpr (kDir == Dir::kGt) return best > v;
    else if constexpr (kDir == Dir::kLe) return best <= v;
    else return best < v;
  }
};

// scatter = add, in the type's own arithmetic as the computation does it
// (bf16 rounds each sum).
template <typename S>
inline S ScatterAdd(S target, S v) {
  if constexpr (std::is_same_v<S, Bf16>) return Bf16{F32ToBf16(Bf16ToF32(target.bits) + Bf16ToF32(v.bits))};
  else return WrapAdd(target, v);
}

// For each source element, the window's selected operand element (the
// first tap, replaced by each later tap that select does not keep against
// it) receives the source value added; sources in order.
template <typename S, typename A, typename Keep>
void SelectAndScatterTyped(const WindowWalk& walk, const S* operand, const S* source, S init,
                           S* out, int64_t out_count) {
  std::fill_n(out, out_count, init);
  const int64_t lanes = walk.lanes();
  const int64_t count = walk.outer_count();
  if (lanes == 0 || count == 0) return;
  std::vector<A> best_storage(lanes);
  std::vector<int64_t> where_storage(lanes);
  std::vector<uint8_t> seen_storage(lanes);
  A* __restrict best = best_storage.data();
  int64_t* __restrict where = where_storage.data();
  uint8_t* __restrict seen = seen_storage.data();
  WindowWalk::Cursor cursor(walk, 0);
  for (int64_t j = 0; j < count; ++j) {
    const S* src_row = source + j * lanes;
    if (!walk.strided()) {
      // Rows: every lane sees the same taps; where[i] is the tap's row.
      bool any = false;
      cursor.ForEachTap([&](int64_t off) {
        const S* __restrict row = operand + off;
        if (!any) {
          for (int64_t i = 0; i < lanes; ++i) best[i] = Widen<A>(row[i]);
          std::fill_n(where, lanes, off);
          any = true;
          return;
        }
        for (int64_t i = 0; i < lanes; ++i) {
          const A v = Widen<A>(row[i]);
          const bool take = !Keep::Apply(best[i], v);
          best[i] = take ? v : best[i];
          where[i] = take ? off : where[i];
        }
      });
      if (any)
        for (int64_t i = 0; i < lanes; ++i) out[where[i] + i] = ScatterAdd(out[where[i] + i], src_row[i]);
    } else {
      std::fill_n(seen, lanes, 0);
      const int64_t step = walk.lane_stride();
      cursor.ForEachTap([&](int64_t off) {
        for (const WindowWalk::LaneRun& r : walk.runs()) {
          int64_t at = off + r.input;
          for (int64_t o = r.first; o < r.end; ++o, at += step) {
            const A v = Widen<A>(operand[at]);
            if (!seen[o] || !Keep::Apply(best[o], v)) {
              best[o] = v;
              where[o] = at;
              seen[o] = 1;
            }
          }
        }
      });
      for (int64_t o = 0; o < lanes; ++o)
        if (seen[o]) out[where[o]] = ScatterAdd(out[where[o]], src_row[o]);
    }
    if (j + 1 < count) cursor.Next();
  }
}

template <typename S, typename A>
void SelectAndScatterDir(Dir dir, const WindowWalk& walk, const Buf& operand, const Buf& source,
                         const Buf& init, Buf& out) {
  auto* op = reinterpret_cast<const S*>(operand.data);
  auto* src = reinterpret_cast<const S*>(source.data);
  S v;
  std::memcpy(&v, init.data, sizeof(S));
  auto* dst = reinterpret_cast<S*>(out.data);
  switch (dir) {
    case Dir::kGe: return SelectAndScatterTyped<S, A, Keeps<Dir::kGe>>(walk, op, src, v, dst, out.count);
    case Dir::kGt: return SelectAndScatterTyped<S, A, Keeps<Dir::kGt>>(walk, op, src, v, dst, out.count);
    case Dir::kLe: return SelectAndScatterTyped<S, A, Keeps<Dir::kLe>>(walk, op, src, v, dst, out.count);
    case Dir::kLt: return SelectAndScatterTyped<S, A, Keeps<Dir::kLt>>(walk, op, src, v, dst, out.count);
    default: return;
  }
}

bool OrderingDirection(Dir dir) {
  return dir == Dir::kGe || dir == Dir::kGt || dir == Dir::kLe || dir == Dir::kLt;
}

bool TypedSelectAndScatterType(ET type) {
  return type == ET::kF32 || type == ET::kBF16 || type == ET::kF64 || type == ET::kS32 ||
         type == ET::kS64;
}

// Whether every parameter of comp is a scalar of `type`.
bool ParametersAre(const hlo::Computation& comp, ET type) {
  for (const hlo::Instruction* p : comp.parameters())
    if (p == nullptr || !p->shape().IsArray() || p->shape().type != type) return false;
  return true;
}

class SelectAndScatterKernel : public ReduceLikeKernel {
 public:
  absl::Status Init(const hlo::Instruction& instr) {
    if (instr.called_computations().size() != 2)
      return absl::InvalidArgumentError("select-and-scatter needs select and scatter");
    const hlo::Computation& select = *instr.called_computations()[0];
    const hlo::Computation& scatter = *instr.called_computations()[1];
    absl::StatusOr<ScalarFn> sel = ScalarFn::Compile(select);
    if (!sel.ok()) return sel.status();
    absl::StatusOr<ScalarFn> sc = ScalarFn::Compile(scatter);
    if (!sc.ok()) return sc.status();
    select_ = std::make_unique<ScalarFn>(std::move(*sel));
    scatter_ = std::make_unique<ScalarFn>(std::move(*sc));
    const ET type = instr.operand(0)->shape().type;
    const bool same_types = instr.operand(1)->shape().type == type &&
                            instr.operand(2)->shape().type == type && instr.shape().type == type;
    const std::optional<Dir> dir = select_->simple_compare();
    typed_ = same_types && TypedSelectAndScatterType(type) && dir && OrderingDirection(*dir) &&
             scatter_->simple_binary_op() == Opcode::kAdd && ParametersAre(select, type) &&
             ParametersAre(scatter, type);
    if (typed_) dir_ = *dir;
    return walk_.Init(instr.operand(0)->shape().dims, instr.operand(1)->shape().dims,
                      instr.attrs().window, /*lanes=*/typed_);
  }

  void Run(const std::vector<const Buf*>& ins, const std::vector<Buf*>& outs, int threads) override {
    const Buf& operand = *ins[0];
    const Buf& source = *ins[1];
    const Buf& init = *ins[2];
    Buf& out = *outs[0];
    if (!typed_) return RunPerElement(operand, source, init, out);
    switch (operand.type) {
      case ET::kF32: return SelectAndScatterDir<float, float>(dir_, walk_, operand, source, init, out);
      case ET::kBF16: return SelectAndScatterDir<Bf16, float>(dir_, walk_, operand, source, init, out);
      case ET::kF64: return SelectAndScatterDir<double, double>(dir_, walk_, operand, source, init, out);
      case ET::kS32: return SelectAndScatterDir<int32_t, int32_t>(dir_, walk_, operand, source, init, out);
      case ET::kS64: return SelectAndScatterDir<int64_t, int64_t>(dir_, walk_, operand, source, init, out);
      default: return RunPerElement(operand, source, init, out);
    }
  }

 private:
  // Any select and scatter: the computations once per tap and source.
  void RunPerElement(const Buf& operand, const Buf& source, const Buf& init, Buf& out) {
    const uint64_t init_slot = LoadSlot(init.type, init.data, 0);
    for (int64_t i = 0; i < out.count; ++i) StoreSlot(out.type, out.data, i, init_slot);
    if (source.count == 0) return;
    uint64_t params[2], res[2];
    WindowWalk::Cursor cursor(walk_, 0);
    for (int64_t s = 0; s < source.count; ++s) {
      int64_t best = -1;
      uint64_t best_v = 0;
      cursor.ForEachTap([&](int64_t off) {
        const uint64_t v = LoadSlot(operand.type, operand.data, off);
        if (best < 0) {
          best = off;
          best_v = v;
          return;
        }
        params[0] = best_v;
        params[1] = v;
        select_->EvalScalar(params, res);
        if (!res[0]) {
          best = off;
          best_v = v;
        }
      });
      if (best >= 0) {
        params[0] = LoadSlot(out.type, out.data, best);
        params[1] = LoadSlot(source.type, source.data, s);
        scatter_->EvalScalar(params, res);
        StoreSlot(out.type, out.data, best, res[0]);
      }
      if (s + 1 < source.count) cursor.Next();
    }
  }

  WindowWalk walk_;
  std::unique_ptr<ScalarFn> select_, scatter_;
  bool typed_ = false;
  Dir dir_ = Dir::kGe;
};

template <typename K>
absl::StatusOr<std::unique_ptr<ReduceLikeKernel>> Make(const hlo::Instruction& instr) {
  auto k = std::make_unique<K>();
  absl::Status s = k->Init(instr);
  if (!s.ok()) return s;
  return std::unique_ptr<ReduceLikeKernel>(std::move(k));
}

}  // namespace

absl::StatusOr<std::unique_ptr<ReduceLikeKernel>> PlanReduceWindow(const hlo::Instruction& instr) {
  return Make<ReduceWindowKernel>(instr);
}
absl::StatusOr<std::unique_ptr<ReduceLikeKernel>> PlanSelectAndScatter(const hlo::Instruction& instr) {
  return Make<SelectAndScatterKernel>(instr);
}

}  // namespace neuron::kernels
