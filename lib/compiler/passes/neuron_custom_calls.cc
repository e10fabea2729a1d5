// Neuron's own custom-calls, as torch-neuronx (torch_neuronx/xla_impl/ops.py)
// and the Neuron compiler's list of recognized targets name them, lowered to
// plain HLO:
//   - AwsNeuronGelu(x): the exact (erf) form, x/2 (1 + erf(x/sqrt 2)).
//   - AwsNeuronGeluApprxTanh(x): x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
//   - AwsNeuronGeluBackward(x): the derivative gelu'(x) = Phi(x) + x phi(x);
//     torch-neuronx multiplies it by the incoming gradient itself.
//   - AwsNeuronSilu(x): x sigmoid(x).
//   - AwsNeuronSiluBackward(x): silu'(x) = s (1 + x (1 - s)), s = sigmoid(x),
//     in GeluBackward's convention (one operand, the derivative): the
//     Neuron compiler hands each of these six activations only its operand
//     0 (and the element count) to an elementwise kernel.
//   - AwsNeuronErf(x): erf(x).
//   - AwsNeuronRmsNorm(x, weight, eps), backend_config = the dimension:
//     x * rsqrt(mean(x^2 over dim) + eps) * weight (weight along dim).
//   - AwsNeuronArgMax / AwsNeuronArgMin(x), backend_config = the dimension:
//     the first index of the largest / smallest element along it (NaN
//     counts as both, as torch), as the result's integer type.
//   - AwsNeuronTopK(x), backend_config = k: (values, indices) of the k
//     largest along the last dimension, sorted, as torch.topk.
//   - TopK (XLA's generic target): the same, k from the result shape,
//     smallest first when its comparator is LT/LE or largest=false.
//   - ResizeNearest / ResizeNearestGrad (torch-neuronx's upsample_nearest2d,
//     NHWC, backend_config "00": neither align_corners nor half-pixel
//     centers): out[n, o, p, c] = in[n, o*IH/OH, p*IW/OW, c] (floor), as two
//     gathers; the gradient sums each output's gradient into its source,
//     as two scatter-adds.
// Narrow floating types (bf16, f16, f8) compute in f32 and round once at
// the end. Everything else Neuron names (dropout, native kernels, NKI ops,
// collective matmuls, RmsNormBackward whose saved operand is the forward
// output) is left for the support check to refuse by name.
#include "lib/compiler/passes/neuron_custom_calls.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_format.h"
#include "lib/compiler/diagnostics.h"
#include "lib/compiler/error_codes.h"
#include "lib/support/parse.h"

namespace neuron::compiler {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

class NeuronLowering {
 public:
  NeuronLowering(NeuronLoweringContext& ctx, hlo::Computation* c, Instruction* cc) : ctx_(ctx), c_(c), cc_(cc) {}

  absl::StatusOr<Instruction*> Lower() {
    const std::string& t = cc_->attrs().custom_call_target;
    if (t == "AwsNeuronRmsNorm") return RmsNorm();
    if (t == "AwsNeuronArgMax") return ArgMinMax(/*max=*/true);
    if (t == "AwsNeuronArgMin") return ArgMinMax(/*max=*/false);
    if (t == "AwsNeuronTopK") return TopK(/*generic=*/false);
    if (t == "TopK") return TopK(/*generic=*/true);
    if (t == "ResizeNearest") return ResizeNearest(/*grad=*/false);
    if (t == "ResizeNearestGrad") return ResizeNearest(/*grad=*/true);
    return Activation(t);
  }

 private:
  absl::Status Bad(std::string_view what) {
    return CompileError(kErrBadCustomCall, absl::StrFormat("custom-call '%s': %s", cc_->attrs().custom_call_target, what),
                        cc_);
  }

  Instruction* Add(Opcode op, Shape s, const std::vector<Instruction*>& operands) {
    return AddInstruction(c_, op, ctx_.names.Get(std::string(hlo::OpcodeName(op))), std::move(s), operands);
  }
  Instruction* Unary(Opcode op, Instruction* x) { return Add(op, Shape::Array(x->shape().type, x->shape().dims), {x}); }
  Instruction* Binary(Opcode op, Instruction* a, Instruction* b) {
    return Add(op, Shape::Array(a->shape().type, a->shape().dims), {a, b});
  }
  Instruction* Splat(ElementType type, const std::vector<int64_t>& dims, double v) {
    Instruction* k = AddScalarConstant(c_, ctx_.names, type, v);
    Instruction* b = Add(Opcode::kBroadcast, Shape::Array(type, dims), {k});
    b->attrs().has_dimensions = true;
    return b;
  }
  Instruction* Like(Instruction* x, double v) { return Splat(x->shape().type, x->shape().dims, v); }
  Instruction* Convert(Instruction* x, ElementType type) {
    if (x->shape().type == type) return x;
    return Add(Opcode::kConvert, Shape::Array(type, x->shape().dims), {x});
  }
  static ElementType ComputeType(ElementType t) {
    return t == ElementType::kF32 || t == ElementType::kF64 ? t : ElementType::kF32;
  }

  // reduce over `dim` then broadcast back to x's shape.
  Instruction* ReduceBroadcast(Instruction* x, int64_t dim, Opcode op, double init) {
    return AddReduceBroadcast(c_, ctx_.names, x, dim, ctx_.reducer(op, x->shape().type), init);
  }

  // backend_config as a dimension of `rank` dimensions; empty = the last.
  absl::StatusOr<int64_t> Dimension(int64_t rank) {
    const std::string& text = cc_->attrs().backend_config;
    if (text.empty()) return rank - 1;
    absl::StatusOr<int64_t> d = ParseSigned(text);
    if (d.ok() && *d < 0) *d += rank;
    if (!d.ok() || *d < 0 || *d >= rank) {
      return Bad(absl::StrFormat("backend_config '%s' is not a dimension of a rank-%d operand", text, rank));
    }
    return *d;
  }

  absl::StatusOr<Instruction*> Activation(const std::string& t) {
    if (cc_->operand_count() != 1 || !hlo::IsFloatingPoint(cc_->shape().type) ||
        !cc_->operand(0)->shape().Compatible(cc_->shape())) {
      return Bad("expected one floating-point operand of the result's shape");
    }
    ElementType out = cc_->shape().type;
    Instruction* x = Convert(cc_->operand(0), ComputeType(out));
    Instruction* y = nullptr;
    if (t == "AwsNeuronErf") {
      y = Unary(Opcode::kErf, x);
    } else if (t == "AwsNeuronGelu") {
      y = Binary(Opcode::kMultiply, Binary(Opcode::kMultiply, x, Like(x, 0.5)), Phi2(x));
    } else if (t == "AwsNeuronGeluApprxTanh") {
      Instruction* x3 = Binary(Opcode::kMultiply, Binary(Opcode::kMultiply, x, x), x);
      Instruction* inner = Binary(Opcode::kAdd, x, Binary(Opcode::kMultiply, x3, Like(x, 0.044715)));
      Instruction* th = Unary(Opcode::kTanh, Binary(Opcode::kMultiply, inner, Like(x, std::sqrt(2.0 / M_PI))));
      y = Binary(Opcode::kMultiply, Binary(Opcode::kMultiply, x, Like(x, 0.5)), Binary(Opcode::kAdd, th, Like(x, 1.0)));
    } else if (t == "AwsNeuronGeluBackward") {
      // Phi(x) + x phi(x), phi(x) = exp(-x^2/2) / sqrt(2 pi).
      Instruction* cdf = Binary(Opcode::kMultiply, Phi2(x), Like(x, 0.5));
      Instruction* e = Unary(Opcode::kExp, Binary(Opcode::kMultiply, Binary(Opcode::kMultiply, x, x), Like(x, -0.5)));
      Instruction* pdf = Binary(Opcode::kMultiply, e, Like(x, 1.0 / std::sqrt(2.0 * M_PI)));
      y = Binary(Opcode::kAdd, cdf, Binary(Opcode::kMultiply, x, pdf));
    } else if (t == "AwsNeuronSilu") {
      y = Binary(Opcode::kMultiply, x, Unary(Opcode::kLogistic, x));
    } else if (t == "AwsNeuronSiluBackward") {
      Instruction* s = Unary(Opcode::kLogistic, x);
      Instruction* one_minus = Binary(Opcode::kSubtract, Like(x, 1.0), s);
      y = Binary(Opcode::kMultiply, s, Binary(Opcode::kAdd, Like(x, 1.0), Binary(Opcode::kMultiply, x, one_minus)));
    } else {
      return nullptr;
    }
    return Convert(y, out);
  }

  // 1 + erf(x / sqrt 2).
  Instruction* Phi2(Instruction* x) {
    Instruction* erf = Unary(Opcode::kErf, Binary(Opcode::kMultiply, x, Like(x, M_SQRT1_2)));
    return Binary(Opcode::kAdd, erf, Like(x, 1.0));
  }

  absl::StatusOr<Instruction*> RmsNorm() {
    if (cc_->operand_count() != 3 || !hlo::IsFloatingPoint(cc_->shape().type) ||
        !cc_->operand(0)->shape().Compatible(cc_->shape()) || cc_->shape().rank() == 0) {
      return Bad("expected (input, weight, epsilon) operands, a floating-point input of the result's shape");
    }
    const Shape& s = cc_->shape();
    absl::StatusOr<int64_t> dim = Dimension(s.rank());
    if (!dim.ok()) return dim.status();
    Instruction* w = cc_->operand(1);
    Instruction* eps = cc_->operand(2);
    bool w_vector = w->shape().rank() == 1 && w->shape().dims[0] == s.dims[*dim];
    if ((!w_vector && w->shape().dims != s.dims) || !hlo::IsFloatingPoint(w->shape().type)) {
      return Bad(absl::StrFormat("weight %s is neither a vector along dimension %d nor of the input's shape",
                                 w->shape().ToString(false), *dim));
    }
    if (!eps->shape().IsScalar() || !hlo::IsFloatingPoint(eps->shape().type)) {
      return Bad("epsilon must be a floating-point scalar");
    }
    ElementType ct = ComputeType(s.type);
    Instruction* x = Convert(cc_->operand(0), ct);
    Instruction* mean = Binary(Opcode::kMultiply, ReduceBroadcast(Binary(Opcode::kMultiply, x, x), *dim, Opcode::kAdd, 0.0),
                               Like(x, 1.0 / static_cast<double>(s.dims[*dim])));
    Instruction* e = Add(Opcode::kBroadcast, Shape::Array(ct, s.dims), {Convert(eps, ct)});
    e->attrs().has_dimensions = true;
    Instruction* r = Unary(Opcode::kRsqrt, Binary(Opcode::kAdd, mean, e));
    Instruction* wb = Convert(w, ct);
    if (w_vector) {
      wb = Add(Opcode::kBroadcast, Shape::Array(ct, s.dims), {wb});
      wb->attrs().dimensions = {*dim};
      wb->attrs().has_dimensions = true;
    }
    return Convert(Binary(Opcode::kMultiply, Binary(Opcode::kMultiply, x, r), wb), s.type);
  }

  // A topk instruction over the last dimension of x.
  Instruction* TopKOf(Instruction* x, int64_t k, bool largest, ElementType index_type) {
    std::vector<int64_t> dims = x->shape().dims;
    dims.back() = k;
    Instruction* t = AddInstruction(c_, Opcode::kTopK, ctx_.names.Get("topk"),
                                    Shape::Tuple({Shape::Array(x->shape().type, dims), Shape::Array(index_type, dims)}), {x});
    t->attrs().k = k;
    t->attrs().largest = largest;
    return t;
  }

  absl::StatusOr<Instruction*> ArgMinMax(bool max) {
    if (cc_->operand_count() != 1 || !cc_->shape().IsArray() || !hlo::IsInteger(cc_->shape().type) ||
        cc_->operand(0)->shape().rank() == 0 || !cc_->operand(0)->shape().IsArray() ||
        hlo::IsComplex(cc_->operand(0)->shape().type) || cc_->operand(0)->shape().type == ElementType::kPred) {
      return Bad("expected one real operand of rank >= 1 and an integer result");
    }
    Instruction* x = cc_->operand(0);
    const Shape& xs = x->shape();
    absl::StatusOr<int64_t> dim = Dimension(xs.rank());
    if (!dim.ok()) return dim.status();
    std::vector<int64_t> perm, kept;
    for (int64_t d = 0; d < xs.rank(); ++d) {
      if (d != *dim) perm.push_back(d), kept.push_back(xs.dims[d]);
    }
    perm.push_back(*dim);
    if (cc_->shape().dims != kept) {
      return Bad(absl::StrFormat("result %s is not the operand %s without dimension %d", cc_->shape().ToString(false),
                                 xs.ToString(false), *dim));
    }
    if (xs.dims[*dim] == 0) return Bad("the reduced dimension is empty");
    if (*dim != xs.rank() - 1) {
      std::vector<int64_t> td;
      for (int64_t d : perm) td.push_back(xs.dims[d]);
      Instruction* t = Add(Opcode::kTranspose, Shape::Array(xs.type, td), {x});
      t->attrs().dimensions = perm;
      t->attrs().has_dimensions = true;
      x = t;
    }
    // top-1 picks the first of equal elements and counts NaN as largest; a
    // float argmin is the argmax of -x, so that NaN is picked there too.
    bool largest = max;
    if (!max && hlo::IsFloatingPoint(xs.type)) {
      x = Unary(Opcode::kNegate, x);
      largest = true;
    }
    Instruction* top = TopKOf(x, 1, largest, ElementType::kS64);
    std::vector<int64_t> one = kept;
    one.push_back(1);
    Instruction* idx = AddInstruction(c_, Opcode::kGetTupleElement, ctx_.names.Get("get-tuple-element"),
                                      Shape::Array(ElementType::kS64, one), {top});
    idx->attrs().tuple_index = 1;
    Instruction* flat = Add(Opcode::kReshape, Shape::Array(ElementType::kS64, kept), {idx});
    return Convert(flat, cc_->shape().type);
  }

  absl::StatusOr<Instruction*> TopK(bool generic) {
    const Shape& s = cc_->shape();
    if (cc_->operand_count() != 1 || !s.IsTuple() || s.tuple.size() != 2 || !s.tuple[0].IsArray() ||
        !s.tuple[1].IsArray() || !hlo::IsInteger(s.tuple[1].type)) {
      return Bad("expected one operand and a (values, indices) result");
    }
    Instruction* x = cc_->operand(0);
    const Shape& xs = x->shape();
    if (xs.rank() == 0 || !xs.IsArray() || hlo::IsComplex(xs.type) || s.tuple[0].type != xs.type ||
        s.tuple[0].dims != s.tuple[1].dims || s.tuple[0].rank() != xs.rank()) {
      return Bad("the values must have the operand's type and rank, the indices the values' shape");
    }
    int64_t k = s.tuple[0].dims.back();
    for (int64_t d = 0; d + 1 < xs.rank(); ++d) {
      if (s.tuple[0].dims[d] != xs.dims[d]) return Bad("the leading dimensions of the result differ from the operand's");
    }
    if (k > xs.dims.back()) return Bad(absl::StrFormat("k = %d is more than the %d elements of a row", k, xs.dims.back()));
    bool largest = true;
    if (!generic) {
      absl::StatusOr<int64_t> config_k = ParseSigned(cc_->attrs().backend_config);
      if (!cc_->attrs().backend_config.empty() && (!config_k.ok() || *config_k != k)) {
        return Bad(absl::StrFormat("backend_config '%s' is not the result's k = %d", cc_->attrs().backend_config, k));
      }
    } else {
      largest = cc_->attrs().largest;
      if (!cc_->called_computations().empty()) {
        const Instruction* root = cc_->called_computations()[0]->root();
        if (!root || root->opcode() != Opcode::kCompare || !root->attrs().comparison_direction) {
          return Bad("its comparator is not a single compare");
        }
        hlo::ComparisonDirection d = *root->attrs().comparison_direction;
        if (d == hlo::ComparisonDirection::kEq || d == hlo::ComparisonDirection::kNe) {
          return Bad("its comparator is not an ordering (GT, GE, LT, LE)");
        }
        largest = d == hlo::ComparisonDirection::kGt || d == hlo::ComparisonDirection::kGe;
      }
    }
    return TopKOf(x, k, largest, s.tuple[1].type);
  }

  // s32[n] constant: the source of each of `out` positions among `in`.
  Instruction* NearestSources(int64_t in, int64_t out) {
    Shape shape = Shape::Array(ElementType::kS32, {out});
    Instruction* k = AddInstruction(c_, Opcode::kConstant, ctx_.names.Get("constant"), shape);
    hlo::Literal lit = hlo::Literal::Zeros(shape);
    for (int64_t o = 0; o < out; ++o) lit.SetInt(o, std::min(o * in / out, in - 1));
    k->attrs().literal = std::move(lit);
    return k;
  }

  // x gathered at `idx` along `dim` (of 4).
  Instruction* GatherAlong(Instruction* x, Instruction* idx, int64_t dim) {
    std::vector<int64_t> dims = x->shape().dims;
    std::vector<int64_t> sizes = dims;
    sizes[dim] = 1;
    dims[dim] = idx->shape().dims[0];
    Instruction* g = Add(Opcode::kGather, Shape::Array(x->shape().type, dims), {x, idx});
    hlo::GatherDims gd;
    for (int64_t d = 0; d < 4; ++d) {
      if (d != dim) gd.offset_dims.push_back(d);
    }
    gd.collapsed_slice_dims = {dim};
    gd.start_index_map = {dim};
    gd.index_vector_dim = 1;
    g->attrs().gather = gd;
    g->attrs().gather_slice_sizes = sizes;
    return g;
  }

  // updates summed into zeros of `dims` at `idx` along `dim` (of 4).
  Instruction* ScatterAddAlong(Instruction* updates, Instruction* idx, int64_t dim, const std::vector<int64_t>& dims) {
    ElementType t = updates->shape().type;
    Instruction* zeros = Splat(t, dims, 0.0);
    Instruction* s = Add(Opcode::kScatter, Shape::Array(t, dims), {zeros, idx, updates});
    hlo::ScatterDims sd;
    for (int64_t d = 0; d < 4; ++d) {
      if (d != dim) sd.update_window_dims.push_back(d);
    }
    sd.inserted_window_dims = {dim};
    sd.scatter_dims_to_operand_dims = {dim};
    sd.index_vector_dim = 1;
    s->attrs().scatter = sd;
    s->AddCalledComputation(ctx_.reducer(Opcode::kAdd, t));
    return s;
  }

  absl::StatusOr<Instruction*> ResizeNearest(bool grad) {
    const Shape& s = cc_->shape();
    if (cc_->operand_count() != 1 || s.rank() != 4 || cc_->operand(0)->shape().rank() != 4 ||
        cc_->operand(0)->shape().type != s.type || !hlo::IsArrayType(s.type) || hlo::IsComplex(s.type) ||
        cc_->operand(0)->shape().dims[0] != s.dims[0] || cc_->operand(0)->shape().dims[3] != s.dims[3]) {
      return Bad("expected one NHWC operand and an NHWC result of its batch, features and type");
    }
    std::string config = cc_->attrs().backend_config;
    if (config.size() == 4 && config.front() == '"' && config.back() == '"') config = config.substr(1, 2);
    if (config != "00" && !config.empty()) {
      return Bad(absl::StrFormat("backend_config '%s': only \"00\" (no align_corners, no half-pixel centers) is supported",
                                 cc_->attrs().backend_config));
    }
    Instruction* x = cc_->operand(0);
    const std::vector<int64_t>& in = grad ? s.dims : x->shape().dims;    // the image's sizes
    const std::vector<int64_t>& out = grad ? x->shape().dims : s.dims;  // the resized sizes
    for (int d : {1, 2}) {
      if (in[d] == 0 && out[d] != 0) return Bad("resizing an empty image");
    }
    Instruction* rows = NearestSources(in[1], out[1]);
    Instruction* cols = NearestSources(in[2], out[2]);
    if (!grad) return GatherAlong(GatherAlong(x, rows, 1), cols, 2);
    std::vector<int64_t> mid = {s.dims[0], out[1], in[2], s.dims[3]};
    bool narrow = s.type != ComputeType(s.type) && hlo::IsFloatingPoint(s.type);
    Instruction* g = narrow ? Convert(x, ElementType::kF32) : x;  // sums in f32, rounded once
    Instruction* summed = ScatterAddAlong(ScatterAddAlong(g, cols, 2, mid), rows, 1, s.dims);
    return Convert(summed, s.type);
  }

  NeuronLoweringContext& ctx_;
  hlo::Computation* c_;
  Instruction* cc_;
};

}  // namespace

bool IsNeuronFamilyTarget(std::string_view t) {
  return t == "AwsNeuronGelu" || t == "AwsNeuronGeluApprxTanh" || t == "AwsNeuronGeluBackward" || t == "AwsNeuronSilu" ||
         t == "AwsNeuronSiluBackward" || t == "AwsNeuronErf" || t == "AwsNeuronRmsNorm" || t == "AwsNeuronArgMax" ||
         t == "AwsNeuronArgMin" || t == "AwsNeuronTopK" || t == "TopK" || t == "ResizeNearest" ||
         t == "ResizeNearestGrad";
}

absl::StatusOr<Instruction*> LowerNeuronCustomCall(NeuronLoweringContext& ctx, hlo::Computation* c, Instruction* cc) {
  if (!IsNeuronFamilyTarget(cc->attrs().custom_call_target)) return nullptr;
  return NeuronLowering(ctx, c, cc).Lower();
}

}  // namespace neuron::compiler
