// Constant folding: evaluates elementwise arithmetic, converts, reshapes
// and broadcasts whose operands are all constants, replacing them with a
// constant. Results are capped at kMaxFoldElements so folding never turns a
// cheap broadcast into a huge literal.
#include <cmath>
#include <cstring>

#include "lib/compiler/ir_util.h"
#include "lib/compiler/passes/passes.h"

namespace neuron::compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;

constexpr int64_t kMaxFoldElements = 1024;
constexpr int64_t kMaxFoldedBroadcastElements = 16;

bool Foldable(const Instruction& inst) {
  if (inst.operand_count() == 0 || !inst.shape().IsArray()) return false;
  for (const Instruction* o : inst.operands()) {
    if (o->opcode() != Opcode::kConstant || !o->attrs().literal || o->attrs().literal->elided() ||
        !o->shape().IsArray()) {
      return false;
    }
    if (hlo::IsComplex(o->shape().type)) return false;
  }
  std::optional<int64_t> n = inst.shape().ElementCount();
  if (!n || *n > kMaxFoldElements || hlo::IsComplex(inst.shape().type)) return false;
  // A broadcast is cheaper than the constant it would become (and fusion
  // copies it into its consumers); fold only tiny ones.
  if (inst.opcode() == Opcode::kBroadcast && *n > kMaxFoldedBroadcastElements) return false;
  switch (inst.opcode()) {
    case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kDivide:
    case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kNegate: case Opcode::kAbs:
    case Opcode::kExp: case Opcode::kLog: case Opcode::kSqrt: case Opcode::kRsqrt:
    case Opcode::kTanh: case Opcode::kConvert: case Opcode::kReshape: case Opcode::kBroadcast:
    case Opcode::kCompare: case Opcode::kSelect:
      return true;
    default:
      return false;
  }
}

// Integer division by zero and shifts have type-specific rules we do not
// model; fold integer arithmetic only where it is plainly defined.
std::optional<double> Eval(const Instruction& inst, const std::vector<double>& v, bool is_int) {
  switch (inst.opcode()) {
    case Opcode::kAdd: return v[0] + v[1];
    case Opcode::kSubtract: return v[0] - v[1];
    case Opcode::kMultiply: return v[0] * v[1];
    case Opcode::kDivide:
      if (is_int) {
        if (v[1] == 0) return std::nullopt;
        return std::trunc(v[0] / v[1]);
      }
      return v[0] / v[1];
    case Opcode::kMaximum: return std::max(v[0], v[1]);
    case Opcode::kMinimum: return std::min(v[0], v[1]);
    case Opcode::kNegate: return -v[0];
    case Opcode::kAbs: return std::fabs(v[0]);
    case Opcode::kExp: return std::exp(v[0]);
    case Opcode::kLog: return std::log(v[0]);
    case Opcode::kSqrt: return std::sqrt(v[0]);
    case Opcode::kRsqrt: return 1.0 / std::sqrt(v[0]);
    case Opcode::kTanh: return std::tanh(v[0]);
    case Opcode::kConvert: return v[0];
    case Opcode::kSelect: return v[0] != 0 ? v[1] : v[2];
    case Opcode::kCompare: {
      switch (*inst.attrs().comparison_direction) {
        case hlo::ComparisonDirection::kEq: return v[0] == v[1];
        case hlo::ComparisonDirection::kNe: return v[0] != v[1];
        case hlo::ComparisonDirection::kGe: return v[0] >= v[1];
        case hlo::ComparisonDirection::kGt: return v[0] > v[1];
        case hlo::ComparisonDirection::kLe: return v[0] <= v[1];
        case hlo::ComparisonDirection::kLt: return v[0] < v[1];
      }
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

std::optional<hlo::Literal> Fold(const Instruction& inst) {
  const hlo::Shape out_shape = hlo::Shape::Array(inst.shape().type, inst.shape().dims);
  hlo::Literal out = hlo::Literal::Zeros(out_shape);
  const int64_t n = *out_shape.ElementCount();
  if (inst.opcode() == Opcode::kReshape) {
    const hlo::Literal& in = *inst.operand(0)->attrs().literal;
    if (in.shape().type != out_shape.type || in.data().size() != out.data().size()) return std::nullopt;
    out.mutable_data() = in.data();
    return out;
  }
  if (inst.opcode() == Opcode::kBroadcast) {
    const hlo::Literal& in = *inst.operand(0)->attrs().literal;
    const std::vector<int64_t>& map = inst.attrs().dimensions;
    const hlo::Shape& is = in.shape();
    if (is.type != out_shape.type || map.size() != is.dims.size()) return std::nullopt;
    std::vector<int64_t> index(out_shape.dims.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t src = 0;
      for (size_t d = 0; d < map.size(); ++d) src = src * is.dims[d] + index[map[d]];
      std::memcpy(out.mutable_data().data() + i * hlo::StorageBytes(is.type),
                  in.data().data() + src * hlo::StorageBytes(is.type), hlo::StorageBytes(is.type));
      for (int64_t d = static_cast<int64_t>(index.size()) - 1; d >= 0; --d) {
        if (++index[d] < out_shape.dims[d]) break;
        index[d] = 0;
      }
    }
    return out;
  }
  hlo::ElementType operand_type = inst.operand(0)->shape().type;
  bool is_int = hlo::IsInteger(operand_type) || hlo::IsInteger(out_shape.type) ||
                operand_type == hlo::ElementType::kPred;
  if (is_int && (inst.opcode() == Opcode::kExp || inst.opcode() == Opcode::kLog ||
                 inst.opcode() == Opcode::kSqrt || inst.opcode() == Opcode::kRsqrt ||
                 inst.opcode() == Opcode::kTanh)) {
    return std::nullopt;
  }
  // 64-bit integers do not survive a trip through double.
  if (BitWidth(operand_type) > 32 && hlo::IsInteger(operand_type)) return std::nullopt;
  std::vector<double> v(inst.operand_count());
  for (int64_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < inst.operand_count(); ++k) {
      const hlo::Literal& lit = *inst.operand(k)->attrs().literal;
      v[k] = lit.GetDouble(lit.element_count() == 1 ? 0 : i);
    }
    std::optional<double> r = Eval(inst, v, is_int && inst.opcode() != Opcode::kConvert);
    if (!r) return std::nullopt;
    if (hlo::IsInteger(out_shape.type) || out_shape.type == hlo::ElementType::kPred) {
      if (!std::isfinite(*r)) return std::nullopt;
      out.SetInt(i, static_cast<int64_t>(*r));
    } else {
      out.SetDouble(i, *r);
    }
  }
  return out;
}

class ConstantFolding : public Pass {
 public:
  std::string_view Name() const override { return "constant-folding"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override {
    bool changed = false;
    for (hlo::Computation* c : module.computations()) {
      for (Instruction* inst : c->PostOrder()) {
        if (!Foldable(*inst)) continue;
        // Every operand must have exactly the result's element count (or be
        // a scalar) for the elementwise walk.
        if (inst->opcode() != Opcode::kBroadcast && inst->opcode() != Opcode::kReshape) {
          bool shapes_ok = true;
          for (const Instruction* o : inst->operands()) {
            if (!o->shape().IsScalar() && o->shape().dims != inst->shape().dims) shapes_ok = false;
          }
          if (!shapes_ok) continue;
        }
        std::optional<hlo::Literal> lit = Fold(*inst);
        if (!lit) continue;
        if (!inst->control_predecessors().empty()) continue;
        // The folded constant takes the name; the dead original is dropped
        // when the pipeline compacts the module.
        hlo::Instruction* folded = AddInstruction(c, Opcode::kConstant, inst->name(), inst->shape());
        folded->attrs().literal = std::move(*lit);
        folded->attrs().metadata = inst->attrs().metadata;
        inst->ReplaceAllUsesWith(folded);
        inst->set_name(inst->name() + ".dead");
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeConstantFoldingPass() { return std::make_unique<ConstantFolding>(); }

}  // namespace neuron::compiler
