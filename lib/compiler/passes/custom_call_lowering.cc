// Lowers the custom-calls whose meaning is known to plain HLO, so the rest
// of the compiler and the executor never see them:
//   - SPMD and placement annotations (Sharding, xla.sdy.FuncResultSharding,
//     SPMDFullToShardShape, SPMDShardToFullShape, annotate_device_placement,
//     MoveToHost, MoveToDevice, AwsNeuronTransferWithStaticRing): the
//     identity on one device.
//   - AwsNeuronSoftmax / AwsNeuronSoftmaxBackward (backend_config = the
//     dimension): exp(x - max) / sum(exp(x - max)), and y * (dy - sum(dy * y)).
//   - GEMMs (__cublas$gemm, __cublas$lt$matmul, __onednn$matmul): dot, with
//     the dot dimension numbers of the gemm backend config (alpha 1, beta 0).
//   - Neuron's markers (AwsNeuronModuleMarkerStart/End-Forward/Backward,
//     NeuronBoundaryMarker-Start/End) and AwsNeuronLNCShardingConstraint:
//     the identity on one device, also for several operands and a tuple.
//   - xla_builder.math.Acos: atan2(sqrt(1 - x*x), x); for complex z,
//     -i log(z + i sqrt(1 - z^2)).
//   - xla_builder.math.NextAfter(x, y): the next representable value after
//     x towards y (C's nextafter), on the bits.
//   - The rest of Neuron's family (AwsNeuronGelu, ...GeluApprxTanh,
//     ...GeluBackward, ...Silu, ...SiluBackward, ...Erf, ...RmsNorm,
//     ...ArgMax, ...ArgMin, ...TopK) and XLA's generic TopK: in
//     neuron_custom_calls.cc.
//   - TransformerEngine's fused attention (te_fused_attn_forward_ffi,
//     te_fused_attn_backward_ffi): in te_fused_attention.cc.
//   - domain instructions: the identity.
//   - Convolutions (__cudnn$convForward, __cudnn$convBiasActivationForward
//     with a bias and relu/no activation): convolution (+ bias, + relu).
// Any other target is left alone; the support check reports it by name.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "absl/strings/str_format.h"
#include "lib/compiler/diagnostics.h"
#include "lib/compiler/error_codes.h"
#include "lib/compiler/ir_util.h"
#include "lib/compiler/passes/neuron_custom_calls.h"
#include "lib/compiler/passes/passes.h"
#include "lib/compiler/passes/te_fused_attention.h"
#include "lib/hlo/shape_inference.h"
#include "lib/support/parse.h"

namespace neuron::compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

bool IsIdentityTarget(std::string_view t) {
  return t == "Sharding" || t == "xla.sdy.FuncResultSharding" || t == "SPMDFullToShardShape" ||
         t == "SPMDShardToFullShape" || t == "annotate_device_placement" || t == "MoveToHost" ||
         t == "MoveToDevice" || t == "AwsNeuronTransferWithStaticRing";
}

// Markers with no numerics: each operand passes through.
bool IsMarkerTarget(std::string_view t) {
  return t == "AwsNeuronModuleMarkerStart-Forward" || t == "AwsNeuronModuleMarkerStart-Backward" ||
         t == "AwsNeuronModuleMarkerEnd-Forward" || t == "AwsNeuronModuleMarkerEnd-Backward" ||
         t == "NeuronBoundaryMarker-Start" || t == "NeuronBoundaryMarker-End" || t == "AwsNeuronLNCShardingConstraint";
}

bool IsGemmTarget(std::string_view t) {
  return t == "__cublas$gemm" || t == "__cublas$lt$matmul" || t == "__onednn$matmul";
}

class Lowering {
 public:
  Lowering(hlo::Module& module)
      : module_(module),
        names_(module),
        neuron_{module_, names_, [this](Opcode op, hlo::ElementType type) { return Reducer(op, type); }} {}

  absl::StatusOr<bool> Run() {
    bool changed = false;
    for (hlo::Computation* c : module_.computations()) {
      for (Instruction* inst : c->PostOrder()) {
        if (inst->opcode() == Opcode::kDomain && inst->operand_count() == 1 &&
            inst->operand(0)->shape().Compatible(inst->shape())) {
          inst->ReplaceAllUsesWith(inst->operand(0));  // sharding domains mean nothing on one device
          changed = true;
          continue;
        }
        if (inst->opcode() != Opcode::kCustomCall) continue;
        absl::StatusOr<Instruction*> lowered = Lower(c, inst);
        if (!lowered.ok()) return lowered.status();
        if (!*lowered) continue;
        changed = true;
        if (inst->shape().IsTuple() && (*lowered)->shape().IsTuple()) {
          (*lowered)->attrs().metadata = inst->attrs().metadata;  // e.g. topk's (values, indices)
          inst->ReplaceAllUsesWith(*lowered);
        } else if (inst->shape().IsTuple()) {
          if (absl::Status s = ReplaceTupleResult(inst, *lowered); !s.ok()) return s;
        } else {
          bool is_new = std::find(inst->operands().begin(), inst->operands().end(), *lowered) ==
                        inst->operands().end();
          if (is_new) (*lowered)->attrs().metadata = inst->attrs().metadata;
          inst->ReplaceAllUsesWith(*lowered);
        }
      }
    }
    return changed;
  }

 private:
  absl::StatusOr<Instruction*> Lower(hlo::Computation* c, Instruction* cc) {
    const std::string& target = cc->attrs().custom_call_target;
    if (IsIdentityTarget(target)) {
      if (cc->operand_count() == 1 && cc->operand(0)->shape().Compatible(cc->shape())) return cc->operand(0);
      return nullptr;  // reshaping annotations stay unsupported
    }
    if (IsMarkerTarget(target)) return Marker(c, cc);
    if (target == "AwsNeuronSoftmax") return Softmax(c, cc);
    if (target == "AwsNeuronSoftmaxBackward") return SoftmaxBackward(c, cc);
    if (IsGemmTarget(target)) return Gemm(c, cc);
    if (target == "__cudnn$convForward" || target == "__cudnn$convBiasActivationForward") {
      return Convolution(c, cc);
    }
    if (target == "xla_builder.math.Acos") return Acos(c, cc);
    if (target == "xla_builder.math.NextAfter") return NextAfter(c, cc);
    if (IsNeuronFamilyTarget(target)) return LowerNeuronCustomCall(neuron_, c, cc);
    if (IsTransformerEngineAttentionTarget(target)) return LowerTransformerEngineAttention(neuron_, c, cc);
    return nullptr;
  }

  // One operand: itself; several: the tuple of them, when the result is.
  absl::StatusOr<Instruction*> Marker(hlo::Computation* c, Instruction* cc) {
    if (cc->operand_count() == 1 && cc->operand(0)->shape().Compatible(cc->shape())) return cc->operand(0);
    const Shape& s = cc->shape();
    bool same = s.IsTuple() && s.tuple.size() == cc->operand_count();
    for (size_t i = 0; same && i < cc->operand_count(); ++i) same = cc->operand(i)->shape().Compatible(s.tuple[i]);
    if (!same) return Bad(cc, "expected its result to be its operands (one, or a tuple of them)");
    return AddInstruction(c, Opcode::kTuple, names_.Get("tuple"), s, cc->operands());
  }

  // nextafter(x, y) on the sign-magnitude bits b of x: NaN if either is;
  // y if x == y; the smallest subnormal with y's sign if x is zero; else
  // b - 1 when the step shrinks |x| (y is nearer zero or across it), b + 1.
  absl::StatusOr<Instruction*> NextAfter(hlo::Computation* c, Instruction* cc) {
    hlo::ElementType t = cc->shape().type;
    if (cc->operand_count() != 2 || (t != hlo::ElementType::kF32 && t != hlo::ElementType::kF64 &&
                                     t != hlo::ElementType::kF16 && t != hlo::ElementType::kBF16) ||
        !cc->operand(0)->shape().Compatible(cc->shape()) || !cc->operand(1)->shape().Compatible(cc->shape())) {
      return Bad(cc, "expected two f16, bf16, f32 or f64 operands of the result's shape");
    }
    const std::vector<int64_t>& dims = cc->shape().dims;
    int bits = hlo::BitWidth(t);
    hlo::ElementType it = bits == 64 ? hlo::ElementType::kS64 : bits == 32 ? hlo::ElementType::kS32 : hlo::ElementType::kS16;
    Instruction* x = cc->operand(0);
    Instruction* y = cc->operand(1);
    auto as_int = [&](Instruction* v) {
      return AddInstruction(c, Opcode::kBitcastConvert, names_.Get("bitcast-convert"), Shape::Array(it, dims), {v});
    };
    auto compare = [&](Instruction* a, Instruction* b, hlo::ComparisonDirection d) {
      Instruction* r = AddInstruction(c, Opcode::kCompare, names_.Get("compare"), Shape::Array(hlo::ElementType::kPred, dims), {a, b});
      r->attrs().comparison_direction = d;
      return r;
    };
    auto select = [&](Instruction* p, Instruction* a, Instruction* b) {
      return AddInstruction(c, Opcode::kSelect, names_.Get("select"), Shape::Array(a->shape().type, dims), {p, a, b});
    };
    auto pred_or = [&](Instruction* a, Instruction* b) {
      return AddInstruction(c, Opcode::kOr, names_.Get("or"), Shape::Array(hlo::ElementType::kPred, dims), {a, b});
    };
    using D = hlo::ComparisonDirection;
    Instruction* xb = as_int(x);
    Instruction* yb = as_int(y);
    // The sign bit as a value of `it`: the most negative integer.
    Instruction* sign_bit = AddScalarConstant(c, names_, it, 0);
    sign_bit->attrs().literal->SetInt(0, bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1)));
    Instruction* sign = AddInstruction(c, Opcode::kBroadcast, names_.Get("broadcast"), Shape::Array(it, dims), {sign_bit});
    sign->attrs().has_dimensions = true;
    Instruction* magnitude = AddInstruction(c, Opcode::kNot, names_.Get("not"), Shape::Array(it, dims), {sign});
    Instruction* x_abs = Binary(c, Opcode::kAnd, xb, magnitude);
    Instruction* y_abs = Binary(c, Opcode::kAnd, yb, magnitude);
    Instruction* x_sign = Binary(c, Opcode::kAnd, xb, sign);
    Instruction* y_sign = Binary(c, Opcode::kAnd, yb, sign);
    Instruction* zero = Splat(c, it, dims, 0);
    Instruction* one = Splat(c, it, dims, 1);
    Instruction* shrink = pred_or(compare(x_abs, y_abs, D::kGt), compare(x_sign, y_sign, D::kNe));
    Instruction* stepped = Binary(c, Opcode::kAdd, xb, select(shrink, Splat(c, it, dims, -1), one));
    Instruction* from_zero = Binary(c, Opcode::kOr, y_sign, one);
    Instruction* r = select(compare(x_abs, zero, D::kEq), from_zero, stepped);
    r = select(compare(x, y, D::kEq), yb, r);
    r = AddInstruction(c, Opcode::kBitcastConvert, names_.Get("bitcast-convert"), Shape::Array(t, dims), {r});
    Instruction* nan = pred_or(compare(x, x, D::kNe), compare(y, y, D::kNe));
    return select(nan, Binary(c, Opcode::kAdd, x, y), r);  // x + y is NaN, quiet
  }

  // acos(x) = atan2(sqrt(1 - x*x), x); NaN outside [-1, 1] as acos.
  absl::StatusOr<Instruction*> Acos(hlo::Computation* c, Instruction* cc) {
    if (hlo::IsComplex(cc->shape().type)) return ComplexAcos(c, cc);
    if (cc->operand_count() != 1 || !hlo::IsFloatingPoint(cc->shape().type) ||
        !cc->operand(0)->shape().Compatible(cc->shape())) {
      return Bad(cc, "expected one floating-point operand of the result's shape");
    }
    Instruction* x = cc->operand(0);
    Shape s = Shape::Array(x->shape().type, x->shape().dims);
    Instruction* one = AddScalarConstant(c, names_, s.type, 1.0);
    Instruction* ones = AddInstruction(c, Opcode::kBroadcast, names_.Get("broadcast"), s, {one});
    ones->attrs().has_dimensions = true;
    Instruction* sq = Binary(c, Opcode::kMultiply, x, x);
    Instruction* rest = Binary(c, Opcode::kSubtract, ones, sq);
    Instruction* root = AddInstruction(c, Opcode::kSqrt, names_.Get("sqrt"), s, {rest});
    return Binary(c, Opcode::kAtan2, root, x);
  }

  // acos(z) = -i log(z + i sqrt(1 - z^2)), written with real/imag parts:
  // with w = sqrt(1 - z^2), z + i w = (re z - im w) + i (im z + re w), and
  // -i L = im L - i re L.
  absl::StatusOr<Instruction*> ComplexAcos(hlo::Computation* c, Instruction* cc) {
    if (cc->operand_count() != 1 || !cc->operand(0)->shape().Compatible(cc->shape())) {
      return Bad(cc, "expected one complex operand of the result's shape");
    }
    Instruction* z = cc->operand(0);
    const std::vector<int64_t>& dims = z->shape().dims;
    Shape cs = Shape::Array(z->shape().type, dims);
    Shape rs = Shape::Array(hlo::ComplexComponentType(z->shape().type), dims);
    auto part = [&](Opcode op, Instruction* v) { return AddInstruction(c, op, names_.Get(std::string(hlo::OpcodeName(op))), rs, {v}); };
    auto make_complex = [&](Instruction* re, Instruction* im) {
      return AddInstruction(c, Opcode::kComplex, names_.Get("complex"), cs, {re, im});
    };
    auto splat = [&](double v) {
      Instruction* k = AddScalarConstant(c, names_, rs.type, v);
      Instruction* b = AddInstruction(c, Opcode::kBroadcast, names_.Get("broadcast"), rs, {k});
      b->attrs().has_dimensions = true;
      return b;
    };
    Instruction* one = make_complex(splat(1.0), splat(0.0));
    Instruction* w = AddInstruction(c, Opcode::kSqrt, names_.Get("sqrt"), cs, {Binary(c, Opcode::kSubtract, one, Binary(c, Opcode::kMultiply, z, z))});
    Instruction* a = make_complex(Binary(c, Opcode::kSubtract, part(Opcode::kReal, z), part(Opcode::kImag, w)),
                                  Binary(c, Opcode::kAdd, part(Opcode::kImag, z), part(Opcode::kReal, w)));
    Instruction* l = AddInstruction(c, Opcode::kLog, names_.Get("log"), cs, {a});
    return make_complex(part(Opcode::kImag, l), part(Opcode::kNegate, part(Opcode::kReal, l)));
  }

  // The lowered instruction must be well formed; vendor variants we do
  // not model (e.g. vectorized int8 layouts) fail here, by name.
  absl::StatusOr<Instruction*> Checked(Instruction* cc, Instruction* lowered) {
    absl::StatusOr<std::optional<Shape>> inferred = hlo::InferShape(*lowered);
    if (!inferred.ok()) return Bad(cc, absl::StrFormat("this form is not supported (%s)", std::string(inferred.status().message())));
    if (*inferred && !(*inferred)->Compatible(lowered->shape())) {
      return Bad(cc, absl::StrFormat("the result %s does not match the operation's %s", lowered->shape().ToString(false),
                                     (*inferred)->ToString(false)));
    }
    return lowered;
  }

  absl::Status Bad(const Instruction* cc, std::string_view what) {
    return CompileError(kErrBadCustomCall,
                        absl::StrFormat("custom-call '%s': %s", cc->attrs().custom_call_target, what), cc);
  }

  absl::StatusOr<int64_t> SoftmaxDim(const Instruction* cc) {
    const Shape& s = cc->operand(0)->shape();
    std::string text = cc->attrs().backend_config;
    if (text.empty()) return s.rank() - 1;
    absl::StatusOr<int64_t> d = ParseSigned(text);
    if (!d.ok() || *d < 0 || *d >= s.rank()) {
      return Bad(cc, absl::StrFormat("backend_config '%s' is not a dimension of %s", text, s.ToString()));
    }
    return *d;
  }

  hlo::Computation* Reducer(Opcode op, hlo::ElementType type) {
    auto key = std::make_pair(op, type);
    auto it = reducers_.find(key);
    if (it != reducers_.end()) return it->second;
    return reducers_[key] = AddScalarReducer(module_, names_, op, type);
  }

  // reduce over `dim` then broadcast back to x's shape.
  Instruction* ReduceBroadcast(hlo::Computation* c, Instruction* x, int64_t dim, Opcode op, double init) {
    return AddReduceBroadcast(c, names_, x, dim, Reducer(op, x->shape().type), init);
  }

  Instruction* Binary(hlo::Computation* c, Opcode op, Instruction* a, Instruction* b) {
    return AddInstruction(c, op, names_.Get(std::string(hlo::OpcodeName(op))), Shape::Array(a->shape().type, a->shape().dims), {a, b});
  }

  absl::StatusOr<Instruction*> Softmax(hlo::Computation* c, Instruction* cc) {
    if (cc->operand_count() != 1 || !hlo::IsFloatingPoint(cc->shape().type)) {
      return Bad(cc, "expected one floating-point operand");
    }
    absl::StatusOr<int64_t> dim = SoftmaxDim(cc);
    if (!dim.ok()) return dim.status();
    Instruction* x = cc->operand(0);
    Instruction* max = ReduceBroadcast(c, x, *dim, Opcode::kMaximum, -INFINITY);
    Instruction* shifted = Binary(c, Opcode::kSubtract, x, max);
    Instruction* e = AddInstruction(c, Opcode::kExp, names_.Get("exponential"),
                                    Shape::Array(x->shape().type, x->shape().dims), {shifted});
    Instruction* sum = ReduceBroadcast(c, e, *dim, Opcode::kAdd, 0.0);
    return Binary(c, Opcode::kDivide, e, sum);
  }

  absl::StatusOr<Instruction*> SoftmaxBackward(hlo::Computation* c, Instruction* cc) {
    if (cc->operand_count() != 2 || !cc->operand(0)->shape().Compatible(cc->operand(1)->shape())) {
      return Bad(cc, "expected (gradient, softmax output) operands of one shape");
    }
    absl::StatusOr<int64_t> dim = SoftmaxDim(cc);
    if (!dim.ok()) return dim.status();
    Instruction* dy = cc->operand(0);
    Instruction* y = cc->operand(1);
    Instruction* prod = Binary(c, Opcode::kMultiply, dy, y);
    Instruction* sum = ReduceBroadcast(c, prod, *dim, Opcode::kAdd, 0.0);
    Instruction* diff = Binary(c, Opcode::kSubtract, dy, sum);
    return Binary(c, Opcode::kMultiply, y, diff);
  }

  static std::vector<int64_t> JsonDims(const nlohmann::json& j, const char* key) {
    std::vector<int64_t> out;
    auto it = j.find(key);
    if (it == j.end() || !it->is_array()) return out;
    for (const auto& v : *it) {
      if (v.is_number_integer()) out.push_back(v.get<int64_t>());
      if (v.is_string()) {
        absl::StatusOr<int64_t> d = ParseSigned(v.get<std::string>());
        if (d.ok()) out.push_back(*d);
      }
    }
    return out;
  }

  absl::StatusOr<Instruction*> Gemm(hlo::Computation* c, Instruction* cc) {
    if (cc->operand_count() < 2) return Bad(cc, "expected lhs and rhs operands");
    Shape result = cc->shape().IsTuple() ? (cc->shape().tuple.empty() ? Shape() : cc->shape().tuple[0]) : cc->shape();
    if (!result.IsArray()) return Bad(cc, "expected an array result");
    hlo::DotDims dims;
    nlohmann::json config = nlohmann::json::parse(cc->attrs().backend_config, nullptr, false);
    if (!config.is_discarded() && config.is_object()) {
      const nlohmann::json& g = config.contains("gemm_backend_config") ? config["gemm_backend_config"] : config;
      if (g.contains("dot_dimension_numbers")) {
        const nlohmann::json& d = g["dot_dimension_numbers"];
        dims.lhs_contracting = JsonDims(d, "lhs_contracting_dimensions");
        dims.rhs_contracting = JsonDims(d, "rhs_contracting_dimensions");
        dims.lhs_batch = JsonDims(d, "lhs_batch_dimensions");
        dims.rhs_batch = JsonDims(d, "rhs_batch_dimensions");
      }
      if (g.contains("beta") && g["beta"].is_number() && g["beta"].get<double>() != 0) {
        return Bad(cc, "beta != 0 (accumulating into the output) is not supported");
      }
      if (g.contains("alpha_real") && g["alpha_real"].is_number() && g["alpha_real"].get<double>() != 1) {
        return Bad(cc, "alpha != 1 is not supported");
      }
    }
    if (dims.lhs_contracting.empty()) {
      if (cc->operand(0)->shape().rank() != 2 || cc->operand(1)->shape().rank() != 2) {
        return Bad(cc, "backend_config has no dot_dimension_numbers");
      }
      dims.lhs_contracting = {1};
      dims.rhs_contracting = {0};
    }
    Instruction* dot = AddInstruction(c, Opcode::kDot, names_.Get("dot"), result,
                                      {cc->operand(0), cc->operand(1)});
    dot->attrs().dot = dims;
    return Checked(cc, dot);
  }

  // cuDNN's NCHW_VECT_C layouts carry one more dimension than the dim
  // labels: the last, a vector of `v` features of the labelled feature
  // dimension (feature = f * v + lane). Moves the lanes next to `feature` and
  // merges them into it.
  Instruction* Unvectorize(hlo::Computation* c, Instruction* x, int64_t feature) {
    const Shape& s = x->shape();
    int64_t r = s.rank();
    std::vector<int64_t> perm, dims;
    for (int64_t d = 0; d + 1 < r; ++d) {
      perm.push_back(d);
      if (d == feature) perm.push_back(r - 1);
    }
    for (int64_t d : perm) dims.push_back(s.dims[d]);
    Instruction* t = AddInstruction(c, Opcode::kTranspose, names_.Get("transpose"), Shape::Array(s.type, dims), {x});
    t->attrs().dimensions = perm;
    t->attrs().has_dimensions = true;
    dims.erase(dims.begin() + feature + 1);
    dims[feature] = s.dims[feature] * s.dims[r - 1];
    return AddInstruction(c, Opcode::kReshape, names_.Get("reshape"), Shape::Array(s.type, dims), {t});
  }

  // The inverse for the result: splits `feature` into (features / v, v) and
  // moves the lanes last, giving `vectorized`.
  Instruction* Vectorize(hlo::Computation* c, Instruction* x, int64_t feature, const Shape& vectorized) {
    const Shape& s = x->shape();
    int64_t lanes = vectorized.dims.back();
    std::vector<int64_t> split = s.dims;
    split[feature] /= lanes;
    split.insert(split.begin() + feature + 1, lanes);
    Instruction* r = AddInstruction(c, Opcode::kReshape, names_.Get("reshape"), Shape::Array(s.type, split), {x});
    std::vector<int64_t> perm;
    for (int64_t d = 0; d < static_cast<int64_t>(split.size()); ++d) {
      if (d != feature + 1) perm.push_back(d);
    }
    perm.push_back(feature + 1);
    Instruction* t = AddInstruction(c, Opcode::kTranspose, names_.Get("transpose"), Shape::Array(s.type, vectorized.dims), {r});
    t->attrs().dimensions = perm;
    t->attrs().has_dimensions = true;
    return t;
  }

  Instruction* Splat(hlo::Computation* c, hlo::ElementType type, const std::vector<int64_t>& dims, double v) {
    Instruction* k = AddScalarConstant(c, names_, type, v);
    Instruction* b = AddInstruction(c, Opcode::kBroadcast, names_.Get("broadcast"), Shape::Array(type, dims), {k});
    b->attrs().has_dimensions = true;
    return b;
  }

  Instruction* Convert(hlo::Computation* c, Instruction* x, hlo::ElementType type) {
    if (x->shape().type == type) return x;
    return AddInstruction(c, Opcode::kConvert, names_.Get("convert"), Shape::Array(type, x->shape().dims), {x});
  }

  // cuDNN convolutions. Integer (int8) ones compute in f32, as cuDNN does,
  // then round to nearest and saturate to the result type.
  absl::StatusOr<Instruction*> Convolution(hlo::Computation* c, Instruction* cc) {
    const hlo::Attributes& a = cc->attrs();
    if (cc->operand_count() < 2 || !a.conv || !a.has_window) {
      return Bad(cc, "expected input and kernel operands with window and dim_labels");
    }
    Shape result = cc->shape().IsTuple() ? (cc->shape().tuple.empty() ? Shape() : cc->shape().tuple[0]) : cc->shape();
    if (!result.IsArray()) return Bad(cc, "expected an array result");
    bool with_bias = a.custom_call_target == "__cudnn$convBiasActivationForward";
    if (!with_bias && cc->operand_count() != 2) return Bad(cc, "expected two operands");
    if (with_bias && cc->operand_count() != 3) {
      return Bad(cc, "only the (input, kernel, bias) form is supported, not a side input");
    }
    std::string activation = "kNone";
    double scale = 1;
    nlohmann::json config = nlohmann::json::parse(a.backend_config, nullptr, false);
    if (!config.is_discarded() && config.is_object()) {
      const nlohmann::json& k = config.contains("cudnn_conv_backend_config") ? config["cudnn_conv_backend_config"] : config;
      if (k.contains("activation_mode") && k["activation_mode"].is_string()) activation = k["activation_mode"];
      // The proto enum by number: 0 kNone, 2 kRelu.
      if (activation == "0") activation = "kNone";
      if (activation == "2") activation = "kRelu";
      if (k.contains("activation_mode") && k["activation_mode"].is_number_integer()) {
        int64_t mode = k["activation_mode"].get<int64_t>();
        activation = mode == 0 ? "kNone" : mode == 2 ? "kRelu" : std::to_string(mode);
      }
      if (k.contains("conv_result_scale") && k["conv_result_scale"].is_number()) scale = k["conv_result_scale"].get<double>();
      if (k.contains("reordered_int8_nchw_vect") && k["reordered_int8_nchw_vect"].is_boolean() &&
          k["reordered_int8_nchw_vect"].get<bool>()) {
        return Bad(cc, "filters reordered for cuDNN (reordered_int8_nchw_vect) are not supported");
      }
    }
    if (activation != "kNone" && activation != "kRelu") {
      return Bad(cc, absl::StrFormat("activation_mode '%s' is not supported (kNone, kRelu)", activation));
    }
    const hlo::ConvDims& cd = *a.conv;
    const int64_t labelled = static_cast<int64_t>(cd.input_spatial.size()) + 2;
    Instruction* input = cc->operand(0);
    Instruction* kernel = cc->operand(1);
    bool vectorized = input->shape().rank() == labelled + 1;
    if (vectorized) {
      if (kernel->shape().rank() != labelled + 1 || result.rank() != labelled + 1 ||
          input->shape().dims.back() != kernel->shape().dims.back() || result.dims.back() <= 0) {
        return Bad(cc, "a vectorized (NCHW_VECT_C) form needs input, kernel and result each with one trailing lane dimension");
      }
      input = Unvectorize(c, input, cd.input_feature);
      kernel = Unvectorize(c, kernel, cd.kernel_input_feature);
    }
    Shape conv_shape = result;
    if (vectorized) {
      conv_shape.dims.pop_back();
      if (cd.output_feature < 0 || cd.output_feature >= static_cast<int64_t>(conv_shape.dims.size())) {
        return Bad(cc, "output feature dimension out of range");
      }
      conv_shape.dims[cd.output_feature] *= result.dims.back();
    }
    conv_shape.layout.reset();
    bool integer = hlo::IsInteger(result.type);
    hlo::ElementType compute = integer ? hlo::ElementType::kF32 : result.type;
    if (integer) {
      input = Convert(c, input, compute);
      kernel = Convert(c, kernel, compute);
    }
    Instruction* conv = AddInstruction(c, Opcode::kConvolution, names_.Get("convolution"),
                                       Shape::Array(compute, conv_shape.dims), {input, kernel});
    conv->attrs().conv = a.conv;
    conv->attrs().window = a.window;
    conv->attrs().has_window = true;
    conv->attrs().feature_group_count = a.feature_group_count;
    conv->attrs().batch_group_count = a.batch_group_count;
    if (absl::StatusOr<Instruction*> ok = Checked(cc, conv); !ok.ok()) return ok.status();
    const std::vector<int64_t>& dims = conv_shape.dims;
    Instruction* out = conv;
    if (scale != 1) {
      if (!hlo::IsFloatingPoint(compute)) return Bad(cc, "conv_result_scale needs a floating-point computation");
      out = Binary(c, Opcode::kMultiply, out, Splat(c, compute, dims, scale));
    }
    if (with_bias) {
      Instruction* bias = cc->operand(2);
      if (bias->shape().rank() != 1 || bias->shape().dims[0] != dims[cd.output_feature] ||
          (!integer && bias->shape().type != result.type) || !hlo::IsArrayType(bias->shape().type)) {
        return Bad(cc, "bias must be a vector of the output features");
      }
      Instruction* b = AddInstruction(c, Opcode::kBroadcast, names_.Get("broadcast"), Shape::Array(compute, dims),
                                      {Convert(c, bias, compute)});
      b->attrs().dimensions = {cd.output_feature};
      b->attrs().has_dimensions = true;
      out = Binary(c, Opcode::kAdd, out, b);
    }
    if (activation == "kRelu") out = Binary(c, Opcode::kMaximum, out, Splat(c, compute, dims, 0.0));
    if (integer) {
      Shape fs = Shape::Array(compute, dims);
      out = AddInstruction(c, Opcode::kRoundNearestEven, names_.Get("round-nearest-even"), fs, {out});
      double lo = hlo::IsSignedInt(result.type) ? -std::ldexp(1.0, hlo::BitWidth(result.type) - 1) : 0.0;
      double hi = (hlo::IsSignedInt(result.type) ? std::ldexp(1.0, hlo::BitWidth(result.type) - 1)
                                                 : std::ldexp(1.0, hlo::BitWidth(result.type))) - 1;
      out = AddInstruction(c, Opcode::kClamp, names_.Get("clamp"), fs, {Splat(c, compute, dims, lo), out, Splat(c, compute, dims, hi)});
      out = Convert(c, out, result.type);
    }
    if (vectorized) out = Vectorize(c, out, cd.output_feature, result);
    return out;
  }

  // A tuple-shaped GEMM/convolution returns (result, scratch): users read
  // element 0 through get-tuple-element; the scratch must be unused.
  absl::Status ReplaceTupleResult(Instruction* cc, Instruction* value) {
    if (cc->parent() && cc->parent()->root() == cc) return Bad(cc, "its tuple result is the computation's root");
    std::vector<Instruction*> users = cc->users();
    for (Instruction* u : users) {
      if (u->opcode() != Opcode::kGetTupleElement) return Bad(cc, "its result is used other than through get-tuple-element");
      if (u->attrs().tuple_index == 0) {
        u->ReplaceAllUsesWith(value);
      } else if (!u->users().empty()) {
        return Bad(cc, "its scratch output is used");
      }
    }
    return absl::OkStatus();
  }

  hlo::Module& module_;
  NameUniquer names_;
  std::map<std::pair<Opcode, hlo::ElementType>, hlo::Computation*> reducers_;
  NeuronLoweringContext neuron_;
};

class CustomCallLowering : public Pass {
 public:
  std::string_view Name() const override { return "custom-call-lowering"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override { return Lowering(module).Run(); }
};

}  // namespace

std::unique_ptr<Pass> MakeCustomCallLoweringPass() { return std::make_unique<CustomCallLowering>(); }

}  // namespace neuron::compiler
