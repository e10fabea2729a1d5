// Mixed-precision accumulation for fused elementwise chains (the default;
// --disable-mixed-precision-accumulation turns it off): inside a kLoop
// fusion, arithmetic on bf16/f16/fp8 values runs on f32 values and rounds
// once, where a value leaves the chain, instead of after every op. Each
// narrow op becomes convert(op_f32(widened operands)); a narrow operand
// that is itself such a rounded value is read before its rounding. This is
// XLA's float normalization followed by its removal of f32->narrow->f32
// round trips (what it does under its default
// --xla_allow_excess_precision), and it is what makes a bf16 chain cost no
// more arithmetic than an f32 one: the executor widens and narrows only at
// the chain's edges.
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "lib/compiler/ir_util.h"
#include "lib/compiler/passes/passes.h"

namespace neuron::compiler {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;

bool IsNarrowFloat(ElementType t) {
  return hlo::IsFloatingPoint(t) && !hlo::IsComplex(t) && hlo::BitWidth(t) < 32;
}

// Ops whose meaning on f32 values, rounded to the narrow type afterwards,
// is the narrow op's (conversions and bit manipulations are not here).
bool ComputesOnValues(Opcode op) {
  switch (op) {
    case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kDivide:
    case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kPower: case Opcode::kRemainder:
    case Opcode::kAtan2: case Opcode::kNegate: case Opcode::kAbs: case Opcode::kSign:
    case Opcode::kSqrt: case Opcode::kRsqrt: case Opcode::kCbrt: case Opcode::kExp:
    case Opcode::kExpm1: case Opcode::kLog: case Opcode::kLog1p: case Opcode::kLogistic:
    case Opcode::kTanh: case Opcode::kSin: case Opcode::kCos: case Opcode::kTan:
    case Opcode::kErf: case Opcode::kFloor: case Opcode::kCeil: case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven: case Opcode::kSelect: case Opcode::kClamp:
    case Opcode::kCompare:
      return true;
    default:
      return false;
  }
}

// The narrow float type an op computes on, if any: its operands' shared
// float type (a select's value operands; a compare's operands).
std::optional<ElementType> NarrowComputeType(const Instruction& inst) {
  if (!inst.shape().IsArray() || !ComputesOnValues(inst.opcode())) return std::nullopt;
  std::optional<ElementType> type;
  for (const Instruction* o : inst.operands()) {
    if (!o->shape().IsArray()) return std::nullopt;
    const ElementType t = o->shape().type;
    if (t == ElementType::kPred && inst.opcode() == Opcode::kSelect) continue;
    if (!IsNarrowFloat(t) || (type && *type != t)) return std::nullopt;
    type = t;
  }
  if (!type) return std::nullopt;
  const ElementType result = inst.shape().type;
  if (result != *type && !(inst.opcode() == Opcode::kCompare && result == ElementType::kPred))
    return std::nullopt;
  return type;
}

hlo::Shape WithType(hlo::Shape shape, ElementType type) {
  shape.type = type;
  return shape;
}

class FusedF32Intermediates : public Pass {
 public:
  std::string_view Name() const override { return "fused-f32-intermediates"; }

  absl::StatusOr<bool> Run(hlo::Module& module) override {
    // Most fusions have nothing narrow: skip them before naming or
    // ordering anything (the names table costs more than the check).
    std::optional<NameUniquer> names;
    bool changed = false;
    for (hlo::Computation* c : module.computations()) {
      if (!c->is_fusion_computation() || !HasNarrowArithmetic(*c)) continue;
      if (!names) names.emplace(module);
      changed |= Widen(c, *names);
    }
    return changed;
  }

 private:
  static bool HasNarrowArithmetic(const hlo::Computation& c) {
    for (const Instruction* inst : c.instructions())
      if (NarrowComputeType(*inst)) return true;
    return false;
  }

  bool Widen(hlo::Computation* c, NameUniquer& names) {
    // Per rounded narrow value: the f32 value it rounds; per other narrow
    // value: its widening, made once.
    absl::flat_hash_map<Instruction*, Instruction*> wide;
    auto widened = [&](Instruction* o) -> Instruction* {
      if (!IsNarrowFloat(o->shape().type)) return o;  // a select's predicate
      auto found = wide.find(o);
      if (found != wide.end()) return found->second;
      Instruction* w = AddInstruction(c, Opcode::kConvert, names.Get("widen"),
                                      WithType(o->shape(), ElementType::kF32), {o});
      wide[o] = w;
      return w;
    };
    bool changed = false;
    for (Instruction* inst : c->PostOrder()) {
      if (!NarrowComputeType(*inst)) continue;
      std::vector<Instruction*> operands;
      for (Instruction* o : inst->operands()) operands.push_back(widened(o));
      Instruction* f32 = CloneInstruction(*inst, c, names.Get(inst->name()), operands);
      const bool is_compare = inst->opcode() == Opcode::kCompare;
      if (!is_compare) f32->mutable_shape() = WithType(inst->shape(), ElementType::kF32);
      Instruction* value = is_compare ? f32
                                      : AddInstruction(c, Opcode::kConvert, names.Get("round"),
                                                       inst->shape(), {f32});
      if (!is_compare) wide[value] = f32;
      const bool was_root = c->root() == inst;
      inst->ReplaceAllUsesWith(value);
      if (was_root) c->set_root(value);
      changed = true;
    }
    if (changed) RemoveDeadInstructions(c);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeFusedF32IntermediatesPass() { return std::make_unique<FusedF32Intermediates>(); }

}  // namespace neuron::compiler
