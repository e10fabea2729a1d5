#include "lib/kernels/fused_reduce.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "lib/kernels/element_convert.h"
#include "lib/kernels/expr_program.h"
#include "lib/kernels/scalar_fn.h"
#include "lib/kernels/simple_reducer.h"
#include "lib/kernels/thread_pool.h"

namespace neuron::kernels {

using hlo::Opcode;
using ET = hlo::ElementType;

struct FusedReduceKernel::Acc {
  uint8_t* slice = nullptr;    // E's values of one slice
  uint8_t* partial = nullptr;  // one slice's results (double or int64)
  uint8_t* acc = nullptr;      // a block's results so far
};

absl::StatusOr<std::unique_ptr<FusedReduceKernel>> FusedReduceKernel::Plan(const hlo::Instruction& fusion,
                                                                           int64_t slice_bytes) {
  const hlo::Computation* comp = fusion.to_apply();
  const hlo::Instruction* root = comp ? comp->root() : nullptr;
  if (root == nullptr || root->opcode() != Opcode::kReduce || root->operand_count() != 2 ||
      !root->shape().IsArray() || root->to_apply() == nullptr)
    return absl::UnimplementedError("not a one-operand reduce");
  const hlo::Instruction& value = *root->operand(0);
  const hlo::Instruction& init = *root->operand(1);
  const hlo::Shape& vs = value.shape();
  std::optional<int64_t> count = vs.ElementCount();
  if (!vs.IsArray() || vs.rank() == 0 || !count || *count == 0)
    return absl::UnimplementedError("reduced value is not a non-empty array");

  auto k = std::unique_ptr<FusedReduceKernel>(new FusedReduceKernel());
  if (init.opcode() == Opcode::kParameter) {
    k->init_parameter_ = static_cast<int>(init.attrs().parameter_number);
    if (k->init_parameter_ < 0 || k->init_parameter_ >= static_cast<int>(fusion.operand_count()))
      return absl::UnimplementedError("init value parameter out of range");
  } else if (init.opcode() == Opcode::kConstant && init.attrs().literal && !init.attrs().literal->elided() &&
             init.attrs().literal->data().size() == static_cast<size_t>(hlo::StorageBytes(init.shape().type))) {
    k->init_constant_ = init.attrs().literal->data();
  } else {
    return absl::UnimplementedError("init value is neither a parameter nor a constant");
  }
  k->init_type_ = init.shape().type;

  absl::StatusOr<ScalarFn> reducer = ScalarFn::CompileReducer(*root->to_apply());
  if (!reducer.ok()) return reducer.status();
  k->op_ = reducer->simple_binary_op();
  k->value_type_ = vs.type;
  if (k->op_ == Opcode::kUnknown || !FastOpOk(k->op_, vs.type))
    return absl::UnimplementedError("not a simple reducer");
  k->integral_ = DomainOf(vs.type) == Domain::kI64;
  k->value_size_ = hlo::StorageBytes(vs.type);

  absl::StatusOr<ExprProgram> program = ExprProgram::CompileValue(value, /*lanes_mode=*/false);
  if (!program.ok()) return program.status();
  for (const ExprInput& in : program->inputs())
    if (in.parameter >= static_cast<int>(fusion.operand_count()) ||
        (in.parameter >= 0 && !fusion.operand(in.parameter)->shape().IsArray()))
      return absl::UnimplementedError("fused value reads a parameter that is not an array");
  k->values_ = std::make_unique<ElementwiseKernel>(std::move(*program));

  // Split E: the first dim whose trailing block fits a slice.
  const auto& rdims = root->attrs().dimensions;
  auto reduced = [&](int64_t d) { return std::find(rdims.begin(), rdims.end(), d) != rdims.end(); };
  k->dims_ = vs.dims;
  k->strides_ = RowMajorStrides(vs.dims);
  const int64_t rank = vs.rank();
  const int64_t es = k->value_size_;
  int64_t d = 0;
  while (d + 1 < rank && k->strides_[d] * es > slice_bytes) ++d;
  k->split_ = d;
  k->inner_ = k->strides_[d];
  k->chunk_ = std::clamp<int64_t>(slice_bytes / std::max<int64_t>(1, k->inner_ * es), 1, vs.dims[d]);
  k->chunks_ = (vs.dims[d] + k->chunk_ - 1) / k->chunk_;
  k->split_kept_ = !reduced(d);
  int64_t kept_lead = 1, reduced_lead = 1;
  for (int64_t j = 0; j < d; ++j) {
    if (reduced(j)) {
      k->reduced_lead_.push_back(j);
      reduced_lead *= vs.dims[j];
    } else {
      k->kept_lead_.push_back(j);
      kept_lead *= vs.dims[j];
    }
  }
  for (int64_t j = d + 1; j < rank; ++j)
    if (!reduced(j)) k->kept_inner_ *= vs.dims[j];
  k->blocks_ = kept_lead * (k->split_kept_ ? k->chunks_ : 1);
  k->slices_per_block_ = reduced_lead * (k->split_kept_ ? 1 : k->chunks_);
  k->block_outputs_ = (k->split_kept_ ? k->chunk_ : 1) * k->kept_inner_;

  // The slice's own reduction: dim 0 is `split_`, then the whole dims.
  std::vector<int64_t> slice_rdims;
  if (!k->split_kept_) slice_rdims.push_back(0);
  for (int64_t j = d + 1; j < rank; ++j)
    if (reduced(j)) slice_rdims.push_back(j - d);
  auto slice_reduce = [&](int64_t rows) {
    std::vector<int64_t> sdims = {rows};
    sdims.insert(sdims.end(), vs.dims.begin() + d + 1, vs.dims.end());
    return PlanSimpleReduce(vs.type, hlo::Shape::Array(vs.type, sdims), slice_rdims, *root->to_apply());
  };
  const int64_t last_rows = vs.dims[d] - (k->chunks_ - 1) * k->chunk_;
  const bool combine = k->slices_per_block_ > 1;
  for (int s = 0; s < 2; ++s) {
    absl::StatusOr<std::unique_ptr<ReduceLikeKernel>> full = slice_reduce(k->chunk_);
    if (!full.ok()) return full.status();
    k->full_[s] = std::move(*full);
    if (last_rows != k->chunk_) {
      absl::StatusOr<std::unique_ptr<ReduceLikeKernel>> last = slice_reduce(last_rows);
      if (!last.ok()) return last.status();
      k->last_[s] = std::move(*last);
    }
    k->slice_[s].resize(static_cast<size_t>(k->chunk_ * k->inner_ * es));
    if (combine) {
      k->partial_[s].resize(static_cast<size_t>(k->block_outputs_ * 8));
      k->acc_[s].resize(static_cast<size_t>(k->block_outputs_ * 8));
    }
  }
  return k;
}

namespace {

// Combines n partial results into acc (double or int64 lanes).
template <typename T>
void CombineInto(Opcode op, const uint8_t* partial, int64_t n, uint8_t* acc) {
  const T* p = reinterpret_cast<const T*>(partial);
  T* a = reinterpret_cast<T*>(acc);
  for (int64_t i = 0; i < n; ++i) a[i] = Combine<T>(op, a[i], p[i]);
}

// The element offset of `flat` (row-major over `dims_of`) in E.
int64_t OffsetOf(int64_t flat, const std::vector<int64_t>& which, const std::vector<int64_t>& dims,
                 const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (size_t i = which.size(); i-- > 0;) {
    const int64_t dim = which[i];
    offset += (flat % dims[dim]) * strides[dim];
    flat /= dims[dim];
  }
  return offset;
}

}  // namespace

FusedReduceKernel::Block FusedReduceKernel::BlockAt(int64_t block) const {
  Block b;
  b.chunk = split_kept_ ? block % chunks_ : 0;
  const int64_t kept_flat = split_kept_ ? block / chunks_ : block;
  const int64_t rows = dims_[split_];
  b.value_start = OffsetOf(kept_flat, kept_lead_, dims_, strides_);
  b.first_output = (kept_flat * (split_kept_ ? rows : 1) + b.chunk * chunk_) * kept_inner_;
  b.outputs = (split_kept_ ? std::min(chunk_, rows - b.chunk * chunk_) : 1) * kept_inner_;
  return b;
}

void FusedReduceKernel::ReduceSlices(int slot, int64_t block, int64_t first, int64_t last,
                                     const std::vector<const Buf*>& operands, Buf& out, const Acc& acc,
                                     const ExprRunContext& ctx, bool combine) {
  const int64_t rows = dims_[split_];
  const Block b = BlockAt(block);
  const int64_t block_chunk = b.chunk;
  const int64_t block_start = b.value_start;
  const int64_t out_first = b.first_output;
  Buf init = Buf::Of(init_type_, {});
  init.data = init_parameter_ >= 0 ? operands[init_parameter_]->data : init_constant_.data();
  for (int64_t s = first; s < last; ++s) {
    const int64_t chunk = split_kept_ ? block_chunk : s % chunks_;
    const int64_t reduced_flat = split_kept_ ? s : s / chunks_;
    const int64_t cc = std::min(chunk_, rows - chunk * chunk_);
    const int64_t begin = block_start + OffsetOf(reduced_flat, reduced_lead_, dims_, strides_) +
                          chunk * chunk_ * inner_;
    Buf slice = Buf::Of(value_type_, {cc * inner_});
    slice.data = acc.slice;
    values_->RunSlice(slot, operands, slice, begin, begin + cc * inner_, ctx);
    ReduceLikeKernel& reduce = cc == chunk_ ? *full_[slot] : *last_[slot];
    const int64_t outputs = (split_kept_ ? cc : 1) * kept_inner_;
    if (!combine) {
      Buf o = Buf::Of(out.type, {outputs});
      o.data = out.data + out_first * out.elem_size;
      reduce.Run({&slice, &init}, {&o}, 1);
      continue;
    }
    Buf partial = Buf::Of(integral_ ? ET::kS64 : ET::kF64, {outputs});
    partial.data = s == first ? acc.acc : acc.partial;
    reduce.Run({&slice, &init}, {&partial}, 1);
    if (s == first) continue;
    if (integral_) CombineInto<int64_t>(op_, acc.partial, outputs, acc.acc);
    else CombineInto<double>(op_, acc.partial, outputs, acc.acc);
  }
}

void FusedReduceKernel::Store(const Acc& acc, int64_t block, Buf& out) const {
  const Block b = BlockAt(block);
  const int64_t n = b.outputs;
  const int64_t first = b.first_output;
  if (integral_) {
    const int64_t* a = reinterpret_cast<const int64_t*>(acc.acc);
    for (int64_t i = 0; i < n; ++i) StoreInt(out.type, out.data, first + i, a[i]);
  } else {
    const double* a = reinterpret_cast<const double*>(acc.acc);
    for (int64_t i = 0; i < n; ++i) StoreDouble(out.type, out.data, first + i, a[i]);
  }
}

void FusedReduceKernel::Run(const std::vector<const Buf*>& operands, Buf& out, const ExprRunContext& ctx,
                            int threads) {
  const bool combine = slices_per_block_ > 1;
  // The scratch is taken here, on the step's thread, whose scope owns it.
  std::array<Acc, 2> acc;
  for (int s = 0; s < 2; ++s) {
    acc[s].slice = slice_[s].data();
    acc[s].partial = combine ? partial_[s].data() : nullptr;
    acc[s].acc = combine ? acc_[s].data() : nullptr;
  }
  const bool two = threads >= 2 && ThreadPool::Global().max_parallelism() >= 2;
  if (two && blocks_ >= 2) {
    // Each worker its half of the output blocks.
    ThreadPool::Global().Run(2, [&](int part) {
      const int64_t b0 = blocks_ * part / 2, b1 = blocks_ * (part + 1) / 2;
      for (int64_t b = b0; b < b1; ++b) {
        ReduceSlices(part, b, 0, slices_per_block_, operands, out, acc[part], ctx, combine);
        if (combine) Store(acc[part], b, out);
      }
    });
    return;
  }
  if (two && blocks_ == 1 && slices_per_block_ >= 2) {
    // One block (a full reduction): each worker half its slices, then the
    // two results combined.
    ThreadPool::Global().Run(2, [&](int part) {
      const int64_t s0 = slices_per_block_ * part / 2, s1 = slices_per_block_ * (part + 1) / 2;
      ReduceSlices(part, 0, s0, s1, operands, out, acc[part], ctx, true);
    });
    const int64_t n = block_outputs_;
    if (integral_) CombineInto<int64_t>(op_, acc[1].acc, n, acc[0].acc);
    else CombineInto<double>(op_, acc[1].acc, n, acc[0].acc);
    Store(acc[0], 0, out);
    return;
  }
  for (int64_t b = 0; b < blocks_; ++b) {
    ReduceSlices(0, b, 0, slices_per_block_, operands, out, acc[0], ctx, combine);
    if (combine) Store(acc[0], b, out);
  }
}

}  // namespace neuron::kernels
