// Bounded dynamic shapes (XLA's `<=N` dimensions) made static, in the
// spirit of XLA's dynamic padder (xla/service/dynamic_padder.cc): every
// array keeps its bound-sized buffer, and each dynamic dimension's runtime
// size becomes an explicit s32 scalar the pass tracks beside the array.
// Elements past the size are padding with no defined value; what reads
// across a dynamic dimension is rewritten so that padding cannot matter:
//   - set-dimension-size(x, n): x itself, with size n (clamped to
//     [0, bound] so that no size can address past the buffer);
//   - get-dimension-size(x): the tracked size, or the static bound;
//   - dynamic-reshape(x, sizes...): the valid elements of x, in row-major
//     order, placed at the valid positions of the result (a gather from
//     indices computed with iota and integer arithmetic: linear in the
//     element count, and exact for every element type); positions with no
//     source are zero;
//   - reduce over a dynamic dimension: padding set to the reduce's init
//     value (select with an iota < size mask), as XLA's padder does;
//   - dot contracting a dynamic dimension: padding of both operands set to
//     zero (garbage could be inf or NaN, which 0 * x would not hide);
//   - elementwise ops, broadcast, transpose and a reshape that keeps the
//     dynamic dimension whole only carry the sizes along, as do slice,
//     concatenate and reverse where they leave the dynamic dimension alone
//     (a slice from 0 with stride 1 shortens it: min(size, limit));
//   - the entry result: padding zeroed, the array returned at its bound
//     (the runtime's results have fixed shapes; see neuron-compile(1)).
// Any other operator reading a dynamic dimension, a dynamic entry
// parameter (the runtime cannot pass a size), unbounded ('?') dimensions
// and dynamic shapes inside called computations are refused with NCC-E0203
// naming the operator.
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "lib/compiler/diagnostics.h"
#include "lib/compiler/error_codes.h"
#include "lib/compiler/ir_util.h"
#include "lib/compiler/passes/passes.h"

namespace neuron::compiler {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

// Per dimension of an array: its runtime size (an s32 scalar), or nullptr
// where the dimension is static.
using DimSizes = std::vector<Instruction*>;

bool HasDynamicDims(const Shape& s) {
  if (s.IsTuple()) return std::any_of(s.tuple.begin(), s.tuple.end(), HasDynamicDims);
  return std::any_of(s.dynamic.begin(), s.dynamic.end(), [](bool b) { return b; });
}

void ClearDynamicDims(Shape& s) {
  s.dynamic.clear();
  for (Shape& e : s.tuple) ClearDynamicDims(e);
}

// An unbounded dimension ('?') has no bound to allocate, and sizes are
// s32: a bound past 2^31-1 could not be compared with one.
bool HasUnusableBound(const Shape& s) {
  if (s.IsTuple()) return std::any_of(s.tuple.begin(), s.tuple.end(), HasUnusableBound);
  for (size_t d = 0; d < s.dims.size(); ++d) {
    if (s.IsDynamicDim(d) && (s.dims[d] < 0 || s.dims[d] > INT32_MAX)) return true;
  }
  return false;
}

bool IsS32Scalar(const Instruction* inst) {
  return inst->shape().type == ElementType::kS32 && inst->shape().IsScalar();
}

bool UsesDynamicShapes(const Instruction& inst) {
  return inst.opcode() == Opcode::kSetDimensionSize || inst.opcode() == Opcode::kGetDimensionSize ||
         inst.opcode() == Opcode::kDynamicReshape || HasDynamicDims(inst.shape());
}

class DynamicPadder {
 public:
  DynamicPadder(hlo::Module& module, hlo::Computation* entry) : c_(entry), names_(module) {}

  absl::Status Run() {
    for (Instruction* inst : c_->PostOrder()) {
      if (absl::Status s = Visit(inst); !s.ok()) return s;
    }
    MaskRoot();
    // The bound-sized operand is the array; its size lives on in sizes_.
    for (Instruction* sds : set_sizes_) sds->ReplaceAllUsesWith(sds->operand(0));
    for (Instruction* inst : c_->instructions()) ClearDynamicDims(inst->mutable_shape());
    return absl::OkStatus();
  }

 private:
  const DimSizes* SizesOf(const Instruction* inst) const {
    auto it = sizes_.find(inst);
    return it == sizes_.end() ? nullptr : &it->second;
  }

  void SetSizes(const Instruction* inst, DimSizes sizes) {
    if (std::any_of(sizes.begin(), sizes.end(), [](Instruction* s) { return s != nullptr; })) {
      sizes_[inst] = std::move(sizes);
    }
  }

  Instruction* Add(Opcode op, Shape shape, const std::vector<Instruction*>& operands) {
    return AddInstruction(c_, op, names_.Get(std::string(hlo::OpcodeName(op))), std::move(shape), operands);
  }
  Instruction* S32(int64_t v) { return AddScalarConstant(c_, names_, ElementType::kS32, static_cast<double>(v)); }
  Instruction* Splat(Instruction* scalar, const std::vector<int64_t>& dims) {
    Instruction* b = Add(Opcode::kBroadcast, Shape::Array(scalar->shape().type, dims), {scalar});
    b->attrs().has_dimensions = true;
    return b;
  }
  Instruction* Iota(const std::vector<int64_t>& dims, int64_t dim) {
    Instruction* i = Add(Opcode::kIota, Shape::Array(ElementType::kS32, dims), {});
    i->attrs().iota_dimension = dim;
    return i;
  }
  Instruction* Arith(Opcode op, Instruction* a, Instruction* b) { return Add(op, a->shape(), {a, b}); }
  Instruction* Compare(Instruction* a, Instruction* b, hlo::ComparisonDirection dir) {
    Instruction* cmp = Add(Opcode::kCompare, Shape::Array(ElementType::kPred, a->shape().dims), {a, b});
    cmp->attrs().comparison_direction = dir;
    return cmp;
  }
  // The size of dimension d: tracked, or the static bound as a constant.
  Instruction* SizeOrBound(const DimSizes* sizes, const Shape& s, size_t d) {
    if (sizes && (*sizes)[d]) return (*sizes)[d];
    return S32(s.dims[d]);
  }

  // pred[dims]: true where every dimension in `which` (all when empty)
  // indexes below its runtime size; nullptr when none of them is dynamic.
  Instruction* ValidMask(const std::vector<int64_t>& dims, const DimSizes& sizes, const std::vector<int64_t>& which) {
    Instruction* mask = nullptr;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (!sizes[d]) continue;
      if (!which.empty() && std::find(which.begin(), which.end(), static_cast<int64_t>(d)) == which.end()) continue;
      Instruction* lt =
          Compare(Iota(dims, static_cast<int64_t>(d)), Splat(sizes[d], dims), hlo::ComparisonDirection::kLt);
      mask = mask ? Arith(Opcode::kAnd, mask, lt) : lt;
    }
    return mask;
  }

  // x with its padding along `which` replaced by `fill` (a scalar).
  Instruction* Masked(Instruction* x, const std::vector<int64_t>& which, Instruction* fill) {
    const DimSizes* sizes = SizesOf(x);
    if (!sizes) return x;
    Instruction* mask = ValidMask(x->shape().dims, *sizes, which);
    if (!mask) return x;
    return Add(Opcode::kSelect, Shape::Array(x->shape().type, x->shape().dims), {mask, x, Splat(fill, x->shape().dims)});
  }
  Instruction* Zero(ElementType type) { return AddScalarConstant(c_, names_, type, 0.0); }

  absl::Status Refuse(const Instruction* inst, std::string_view why) {
    return CompileError(kErrDynamicShape, std::string(why), inst);
  }
  absl::Status RefuseRead(const Instruction* inst, const Instruction* operand) {
    return Refuse(inst, absl::StrFormat("operator '%s' reads the dynamic dimension of %s (%s): it cannot yet ignore "
                                        "the padding past the runtime size",
                                        inst->opcode_text(), operand->name(), operand->shape().ToString(false)));
  }
  const Instruction* DynamicOperand(const Instruction* inst) const {
    for (const Instruction* o : inst->operands()) {
      if (SizesOf(o)) return o;
    }
    return nullptr;
  }

  absl::Status Visit(Instruction* inst) {
    switch (inst->opcode()) {
      case Opcode::kParameter:
        if (HasDynamicDims(inst->shape())) {
          return Refuse(inst, absl::StrFormat("entry parameter %s has a dynamic shape %s: the runtime passes arrays "
                                              "of a fixed shape and no size; set it with set-dimension-size",
                                              inst->name(), inst->shape().ToString(false)));
        }
        return absl::OkStatus();
      case Opcode::kSetDimensionSize: return SetDimensionSize(inst);
      case Opcode::kGetDimensionSize: return GetDimensionSize(inst);
      case Opcode::kDynamicReshape: return DynamicReshape(inst);
      default: break;
    }
    const Instruction* dynamic = DynamicOperand(inst);
    if (!dynamic) return absl::OkStatus();
    if (hlo::IsElementwise(inst->opcode()) ||
        (inst->opcode() == Opcode::kBitcastConvert && inst->shape().rank() == inst->operand(0)->shape().rank())) {
      return Elementwise(inst);
    }
    switch (inst->opcode()) {
      case Opcode::kBroadcast: return Broadcast(inst);
      case Opcode::kTranspose: return Transpose(inst);
      case Opcode::kReshape: return Reshape(inst);
      case Opcode::kReduce: return Reduce(inst);
      case Opcode::kSlice: return Slice(inst);
      case Opcode::kConcatenate: return Concatenate(inst);
      case Opcode::kReverse: return Reverse(inst);
      case Opcode::kDot: return Dot(inst);
      case Opcode::kTuple:
        if (inst == c_->root()) return absl::OkStatus();  // MaskRoot masks each element
        return Refuse(inst, "a tuple of arrays with dynamic dimensions is only supported as the entry result");
      default: return RefuseRead(inst, dynamic);
    }
  }

  absl::Status SetDimensionSize(Instruction* inst) {
    const Shape& s = inst->shape();
    const int64_t d = inst->attrs().dimensions.empty() ? -1 : inst->attrs().dimensions[0];
    if (d < 0 || d >= s.rank() || inst->operand_count() != 2 || !IsS32Scalar(inst->operand(1)) ||
        !s.IsArray() || !inst->operand(0)->shape().Compatible(s)) {
      return Refuse(inst, "set-dimension-size needs an operand of its result's shape, an s32[] size and one "
                          "dimension of the operand");
    }
    DimSizes sizes = SizesOf(inst->operand(0)) ? *SizesOf(inst->operand(0)) : DimSizes(s.rank(), nullptr);
    Instruction* n = inst->operand(1);
    sizes[d] = Add(Opcode::kClamp, n->shape(), {S32(0), n, S32(s.dims[d])});
    SetSizes(inst, std::move(sizes));
    set_sizes_.push_back(inst);
    return absl::OkStatus();
  }

  absl::Status GetDimensionSize(Instruction* inst) {
    const Instruction* x = inst->operand(0);
    const int64_t d = inst->attrs().dimensions.empty() ? -1 : inst->attrs().dimensions[0];
    if (d < 0 || d >= x->shape().rank() || !x->shape().IsArray() || !IsS32Scalar(inst)) {
      return Refuse(inst, "get-dimension-size needs one dimension of an array operand and an s32[] result");
    }
    inst->ReplaceAllUsesWith(SizeOrBound(SizesOf(x), x->shape(), d));
    return absl::OkStatus();
  }

  absl::Status DynamicReshape(Instruction* inst) {
    Instruction* x = inst->operand(0);
    const Shape& in = x->shape();
    const Shape& out = inst->shape();
    if (!in.IsArray() || !out.IsArray() || in.type != out.type ||
        inst->operand_count() != static_cast<size_t>(out.rank()) + 1 ||
        !std::all_of(inst->operands().begin() + 1, inst->operands().end(), IsS32Scalar)) {
      return Refuse(inst, "dynamic-reshape needs an array of its result's type and one s32[] size operand per "
                          "dimension of the result");
    }
    const int64_t n_in = in.ElementCount().value_or(-1);
    const int64_t n_out = out.ElementCount().value_or(-1);
    if (n_in < 0 || n_out < 0 || n_in > INT32_MAX || n_out > INT32_MAX) {
      return Refuse(inst, "dynamic-reshape of more than 2^31 elements (its indices are s32)");
    }
    DimSizes out_sizes(out.rank(), nullptr);
    for (int64_t k = 0; k < out.rank(); ++k) {
      if (!out.IsDynamicDim(k)) continue;  // a static dimension's size operand must equal it
      Instruction* n = inst->operand(k + 1);
      out_sizes[k] = Add(Opcode::kClamp, n->shape(), {S32(0), n, S32(out.dims[k])});
    }
    const DimSizes* in_sizes = SizesOf(x);
    Shape static_out = Shape::Array(out.type, out.dims);
    Instruction* result = nullptr;
    if (n_in == 0 || n_out == 0) {
      result = Splat(Zero(out.type), out.dims);  // nothing to move (and no element to gather from)
    } else if (!in_sizes && n_in == n_out &&
               std::none_of(out_sizes.begin(), out_sizes.end(), [](Instruction* s) { return s != nullptr; })) {
      result = Add(Opcode::kReshape, static_out, {x});
    } else {
      result = Relayout(x, in_sizes, out.dims, out_sizes);
    }
    inst->ReplaceAllUsesWith(result);
    SetSizes(result, std::move(out_sizes));
    return absl::OkStatus();
  }

  // The valid elements of x (row-major over its runtime sizes) at the valid
  // positions of an array of bound `dims` with runtime sizes `out_sizes`:
  // each output position's row-major rank among the valid ones is turned
  // back into an index of x, and x is gathered there.
  Instruction* Relayout(Instruction* x, const DimSizes* in_sizes, const std::vector<int64_t>& dims,
                        const DimSizes& out_sizes) {
    const Shape& in = x->shape();
    const int64_t n_in = *in.ElementCount();
    const int64_t n_out = *Shape::Array(in.type, dims).ElementCount();
    // Rank of each output position among the valid ones: sum o_k * L_k,
    // L_k the product of the runtime sizes of the dimensions after k.
    Instruction* rank = Splat(S32(0), dims);
    Instruction* stride = S32(1);
    for (int64_t k = static_cast<int64_t>(dims.size()) - 1; k >= 0; --k) {
      rank = Arith(Opcode::kAdd, rank, Arith(Opcode::kMultiply, Iota(dims, k), Splat(stride, dims)));
      Instruction* size = out_sizes[k] ? out_sizes[k] : S32(dims[k]);
      stride = Arith(Opcode::kMultiply, stride, size);
    }
    // The same rank among x's valid elements, back to x's flat index:
    // i_j = (rank / M_j) mod s_j, M_j the product of x's sizes after j
    // (divisors kept >= 1: an empty dimension has no valid rank anyway).
    Instruction* flat = Splat(S32(0), dims);
    Instruction* inner = S32(1);
    int64_t bound_stride = 1;
    for (int64_t j = in.rank() - 1; j >= 0; --j) {
      Instruction* size = SizeOrBound(in_sizes, in, j);
      Instruction* one = S32(1);
      Instruction* divisor = Arith(Opcode::kMaximum, inner, one);
      Instruction* modulus = Arith(Opcode::kMaximum, size, one);
      Instruction* index = Arith(Opcode::kRemainder, Arith(Opcode::kDivide, rank, Splat(divisor, dims)),
                                 Splat(modulus, dims));
      flat = Arith(Opcode::kAdd, flat, Arith(Opcode::kMultiply, index, Splat(S32(bound_stride), dims)));
      inner = Arith(Opcode::kMultiply, inner, size);
      bound_stride *= in.dims[j];
    }
    Instruction* indices = Add(Opcode::kReshape, Shape::Array(ElementType::kS32, {n_out, 1}), {flat});
    Instruction* source = Add(Opcode::kReshape, Shape::Array(in.type, {n_in}), {x});
    Instruction* g = Add(Opcode::kGather, Shape::Array(in.type, {n_out}), {source, indices});
    hlo::GatherDims gd;
    gd.collapsed_slice_dims = {0};
    gd.start_index_map = {0};
    gd.index_vector_dim = 1;
    g->attrs().gather = gd;
    g->attrs().gather_slice_sizes = {1};
    Instruction* moved = Add(Opcode::kReshape, Shape::Array(in.type, dims), {g});
    // Positions with no source (padding, or past x's valid count when the
    // sizes disagree, which XLA leaves undefined) are zero, not a wrapped
    // copy of some element.
    Instruction* valid = Compare(rank, Splat(inner, dims), hlo::ComparisonDirection::kLt);
    if (Instruction* in_bounds = ValidMask(dims, out_sizes, {})) valid = Arith(Opcode::kAnd, valid, in_bounds);
    return Add(Opcode::kSelect, moved->shape(), {valid, moved, Splat(Zero(in.type), dims)});
  }

  absl::Status Elementwise(Instruction* inst) {
    DimSizes sizes(inst->shape().rank(), nullptr);
    for (const Instruction* o : inst->operands()) {
      const DimSizes* s = SizesOf(o);
      if (!s || s->size() != sizes.size()) continue;  // scalar operands of select/clamp
      for (size_t d = 0; d < sizes.size(); ++d) {
        if (!sizes[d]) sizes[d] = (*s)[d];
      }
    }
    SetSizes(inst, std::move(sizes));
    return absl::OkStatus();
  }

  absl::Status Broadcast(Instruction* inst) {
    const DimSizes& in = *SizesOf(inst->operand(0));
    DimSizes sizes(inst->shape().rank(), nullptr);
    const std::vector<int64_t>& map = inst->attrs().dimensions;
    for (size_t i = 0; i < in.size() && i < map.size(); ++i) sizes[map[i]] = in[i];
    SetSizes(inst, std::move(sizes));
    return absl::OkStatus();
  }

  absl::Status Transpose(Instruction* inst) {
    const DimSizes& in = *SizesOf(inst->operand(0));
    DimSizes sizes(inst->shape().rank(), nullptr);
    const std::vector<int64_t>& perm = inst->attrs().dimensions;
    for (size_t j = 0; j < sizes.size() && j < perm.size(); ++j) sizes[j] = in[perm[j]];
    SetSizes(inst, std::move(sizes));
    return absl::OkStatus();
  }

  // A reshape keeps dynamic dimension d when some result dimension k has
  // the same extent and the same number of elements before it: then the
  // index along k is the index along d, and the padding stays in place.
  absl::Status Reshape(Instruction* inst) {
    const Instruction* x = inst->operand(0);
    const DimSizes& in = *SizesOf(x);
    const std::vector<int64_t>& from = x->shape().dims;
    const std::vector<int64_t>& to = inst->shape().dims;
    DimSizes sizes(to.size(), nullptr);
    for (size_t d = 0; d < from.size(); ++d) {
      if (!in[d]) continue;
      const int64_t before = std::accumulate(from.begin(), from.begin() + d, int64_t{1}, std::multiplies<>());
      bool kept = false;
      int64_t to_before = 1;
      for (size_t k = 0; k < to.size() && !kept; ++k) {
        if (to_before == before && to[k] == from[d]) {
          sizes[k] = in[d];
          kept = true;
        }
        to_before *= to[k];
      }
      if (!kept) {
        return Refuse(inst, absl::StrFormat("reshape splits or merges dynamic dimension %d of %s (%s); use "
                                            "dynamic-reshape, which moves the valid elements",
                                            d, x->name(), x->shape().ToString(false)));
      }
    }
    SetSizes(inst, std::move(sizes));
    return absl::OkStatus();
  }

  // A slice from 0 with stride 1 along a dynamic dimension keeps the valid
  // prefix: size min(size, limit). Any other start or stride would mix
  // padding in.
  absl::Status Slice(Instruction* inst) {
    DimSizes sizes = *SizesOf(inst->operand(0));
    const std::vector<hlo::SliceDim>& slice = inst->attrs().slice;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (!sizes[d]) continue;
      if (d >= slice.size() || slice[d].start != 0 || slice[d].stride != 1) {
        return Refuse(inst, absl::StrFormat("slice of dynamic dimension %d of %s must start at 0 with stride 1 "
                                            "(elsewhere it would take padding for values)",
                                            d, inst->operand(0)->name()));
      }
      if (slice[d].limit < inst->operand(0)->shape().dims[d]) {
        sizes[d] = Arith(Opcode::kMinimum, sizes[d], S32(slice[d].limit));
      }
    }
    SetSizes(inst, std::move(sizes));
    return absl::OkStatus();
  }

  // Joined along a static dimension, the arrays keep their dynamic ones.
  absl::Status Concatenate(Instruction* inst) {
    const int64_t along = inst->attrs().dimensions.empty() ? -1 : inst->attrs().dimensions[0];
    DimSizes sizes(inst->shape().rank(), nullptr);
    for (const Instruction* o : inst->operands()) {
      const DimSizes* s = SizesOf(o);
      if (!s) continue;
      if (along >= 0 && along < static_cast<int64_t>(s->size()) && (*s)[along]) {
        return Refuse(inst, absl::StrFormat("concatenate along dynamic dimension %d of %s would leave padding "
                                            "between the pieces",
                                            along, o->name()));
      }
      for (size_t d = 0; d < sizes.size() && d < s->size(); ++d) {
        if (!sizes[d]) sizes[d] = (*s)[d];
      }
    }
    SetSizes(inst, std::move(sizes));
    return absl::OkStatus();
  }

  // Reversing a dynamic dimension would bring its padding to the front.
  absl::Status Reverse(Instruction* inst) {
    const DimSizes& sizes = *SizesOf(inst->operand(0));
    for (int64_t d : inst->attrs().dimensions) {
      if (d >= 0 && d < static_cast<int64_t>(sizes.size()) && sizes[d]) {
        return Refuse(inst, absl::StrFormat("reverse of dynamic dimension %d of %s would bring the padding to "
                                            "the front",
                                            d, inst->operand(0)->name()));
      }
    }
    SetSizes(inst, sizes);
    return absl::OkStatus();
  }

  absl::Status Reduce(Instruction* inst) {
    const size_t n = inst->operand_count() / 2;
    const std::vector<int64_t>& reduced = inst->attrs().dimensions;
    const DimSizes* first = nullptr;
    for (size_t i = 0; i < n; ++i) {
      Instruction* x = inst->operand(i);
      if (const DimSizes* s = SizesOf(x)) {
        first = first ? first : s;
        inst->ReplaceOperand(i, Masked(x, reduced, inst->operand(n + i)));
      }
    }
    if (!first) return absl::OkStatus();
    DimSizes kept;
    for (size_t d = 0; d < first->size(); ++d) {
      if (std::find(reduced.begin(), reduced.end(), static_cast<int64_t>(d)) == reduced.end()) {
        kept.push_back((*first)[d]);
      }
    }
    if (inst->shape().IsTuple() && std::any_of(kept.begin(), kept.end(), [](Instruction* s) { return s; })) {
      return Refuse(inst, "a variadic reduce keeping a dynamic dimension is not supported");
    }
    SetSizes(inst, std::move(kept));
    return absl::OkStatus();
  }

  absl::Status Dot(Instruction* inst) {
    if (!inst->attrs().dot) return RefuseRead(inst, DynamicOperand(inst));
    const hlo::DotDims& dd = *inst->attrs().dot;
    DimSizes sizes;
    auto free_sizes = [&](const Instruction* x, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
      const DimSizes* s = SizesOf(x);
      for (int64_t d = 0; d < x->shape().rank(); ++d) {
        if (std::find(batch.begin(), batch.end(), d) != batch.end()) continue;
        if (std::find(contracting.begin(), contracting.end(), d) != contracting.end()) continue;
        sizes.push_back(s ? (*s)[d] : nullptr);
      }
    };
    const DimSizes* ls = SizesOf(inst->operand(0));
    const DimSizes* rs = SizesOf(inst->operand(1));
    for (size_t i = 0; i < dd.lhs_batch.size(); ++i) {
      Instruction* s = ls ? (*ls)[dd.lhs_batch[i]] : nullptr;
      sizes.push_back(s ? s : (rs ? (*rs)[dd.rhs_batch[i]] : nullptr));
    }
    free_sizes(inst->operand(0), dd.lhs_batch, dd.lhs_contracting);
    free_sizes(inst->operand(1), dd.rhs_batch, dd.rhs_contracting);
    Instruction* lhs = inst->operand(0);
    Instruction* rhs = inst->operand(1);
    inst->ReplaceOperand(0, Masked(lhs, dd.lhs_contracting, Zero(lhs->shape().type)));
    inst->ReplaceOperand(1, Masked(rhs, dd.rhs_contracting, Zero(rhs->shape().type)));
    SetSizes(inst, std::move(sizes));
    return absl::OkStatus();
  }

  // The entry result, padding zeroed: results come back at their bounds.
  void MaskRoot() {
    Instruction* root = c_->root();
    if (SizesOf(root)) {
      c_->set_root(Masked(root, {}, Zero(root->shape().type)));
      return;
    }
    if (root->opcode() != Opcode::kTuple || !DynamicOperand(root)) return;
    std::vector<Instruction*> elements;
    for (Instruction* e : root->operands()) elements.push_back(Masked(e, {}, Zero(e->shape().type)));
    Shape shape = root->shape();
    ClearDynamicDims(shape);
    c_->set_root(Add(Opcode::kTuple, shape, elements));
  }

  hlo::Computation* c_;
  NameUniquer names_;
  absl::flat_hash_map<const Instruction*, DimSizes> sizes_;
  std::vector<Instruction*> set_sizes_;
};

class DynamicPadderPass : public Pass {
 public:
  std::string_view Name() const override { return "dynamic-padder"; }

  absl::StatusOr<bool> Run(hlo::Module& module) override {
    hlo::Computation* entry = module.entry();
    bool any = false;
    for (const hlo::Computation* c : module.computations()) {
      for (const Instruction* inst : c->instructions()) {
        if (!UsesDynamicShapes(*inst)) continue;
        if (HasUnusableBound(inst->shape())) {
          return CompileError(kErrDynamicShape,
                              absl::StrFormat("dynamic shape %s has no usable bound: a '?' dimension has none to "
                                              "pad to, and sizes are s32 (bounds up to 2^31-1)",
                                              inst->shape().ToString(false)),
                              inst);
        }
        if (c != entry) {
          return CompileError(kErrDynamicShape,
                              absl::StrFormat("dynamic shape %s in computation '%s': only the entry "
                                              "computation may use bounded dynamic dimensions",
                                              inst->shape().ToString(false), c->name()),
                              inst);
        }
        any = true;
      }
    }
    if (!any) return false;
    DynamicPadder padder(module, entry);
    if (absl::Status s = padder.Run(); !s.ok()) return s;
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeDynamicPadderPass() { return std::make_unique<DynamicPadderPass>(); }

}  // namespace neuron::compiler
