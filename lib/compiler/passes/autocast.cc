// Autocast (--auto-cast, --auto-cast-type), as neuronx-cc: FP32 matrix
// multiplies and convolutions (matmult), or also FP32 elementwise
// arithmetic (all), run with their inputs cast to bf16, fp16 or fp8_e4m3,
// or rounded to tf32 (a reduce-precision to 8 exponent and 10 mantissa
// bits). With mixed-precision accumulation (the default) a dot/convolution
// keeps its FP32 result, so it accumulates in FP32; without it the
// operation produces the cast type and a convert brings the result back
// to FP32. Elementwise ops under `all` compute in the cast type. Runs before
// fusion so the converts fuse into their neighbours.
#include <unordered_map>

#include "lib/compiler/ir_util.h"
#include "lib/compiler/passes/passes.h"

namespace neuron::compiler {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;

bool IsArithmetic(Opcode op) {
  switch (op) {
    case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kDivide:
    case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kExp: case Opcode::kLog:
    case Opcode::kTanh: case Opcode::kLogistic: case Opcode::kSqrt: case Opcode::kRsqrt:
    case Opcode::kPower: case Opcode::kNegate: case Opcode::kAbs: case Opcode::kExpm1:
    case Opcode::kLog1p:
      return true;
    default:
      return false;
  }
}

class Autocast : public Pass {
 public:
  Autocast(AutoCast mode, AutoCastType type, bool mixed) : mode_(mode), type_(type), mixed_(mixed) {}
  std::string_view Name() const override { return "autocast"; }

  absl::StatusOr<bool> Run(hlo::Module& module) override {
    if (mode_ == AutoCast::kNone) return false;
    NameUniquer names(module);
    std::unordered_set<const hlo::Computation*> embedded = EmbeddedComputations(module);
    bool changed = false;
    for (hlo::Computation* c : module.computations()) {
      if (embedded.count(c) || c->is_fusion_computation()) continue;
      std::unordered_map<Instruction*, Instruction*> cast_of;  // one cast per value
      for (Instruction* inst : c->PostOrder()) {
        if (!IsTarget(*inst)) continue;
        changed = true;
        bool matmul = inst->opcode() == Opcode::kDot || inst->opcode() == Opcode::kConvolution;
        std::vector<Instruction*> cast_operands;
        for (Instruction* o : inst->operands()) cast_operands.push_back(Cast(c, o, names, cast_of));
        if (type_ == AutoCastType::kTf32 || (matmul && mixed_)) {
          // Same result type: only the inputs lose precision.
          for (size_t i = 0; i < cast_operands.size(); ++i) inst->ReplaceOperand(i, cast_operands[i]);
          continue;
        }
        Instruction* low = CloneInstruction(*inst, c, names.Get(inst->name()), cast_operands);
        low->mutable_shape().type = LowType();
        Instruction* back = AddInstruction(c, Opcode::kConvert, names.Get("convert"), inst->shape(), {low});
        back->attrs().metadata = inst->attrs().metadata;
        inst->ReplaceAllUsesWith(back);
      }
    }
    return changed;
  }

 private:
  ElementType LowType() const {
    switch (type_) {
      case AutoCastType::kBf16: return ElementType::kBF16;
      case AutoCastType::kFp16: return ElementType::kF16;
      case AutoCastType::kFp8E4M3: return ElementType::kF8E4M3FN;
      case AutoCastType::kTf32: return ElementType::kF32;
    }
    return ElementType::kBF16;
  }

  bool IsTarget(const Instruction& inst) const {
    if (inst.shape().type != ElementType::kF32 || HasSideEffect(inst)) return false;
    for (const Instruction* o : inst.operands()) {
      if (o->shape().type != ElementType::kF32) return false;
    }
    if (inst.opcode() == Opcode::kDot || inst.opcode() == Opcode::kConvolution) return true;
    return mode_ == AutoCast::kAll && IsArithmetic(inst.opcode());
  }

  Instruction* Cast(hlo::Computation* c, Instruction* value, NameUniquer& names,
                    std::unordered_map<Instruction*, Instruction*>& cast_of) {
    auto found = cast_of.find(value);
    if (found != cast_of.end()) return found->second;
    Instruction* cast;
    if (type_ == AutoCastType::kTf32) {
      cast = AddInstruction(c, Opcode::kReducePrecision, names.Get("tf32_round"), value->shape(), {value});
      cast->attrs().exponent_bits = 8;
      cast->attrs().mantissa_bits = 10;
    } else {
      hlo::Shape s = value->shape();
      s.type = LowType();
      cast = AddInstruction(c, Opcode::kConvert, names.Get("autocast"), s, {value});
    }
    cast_of[value] = cast;
    return cast;
  }

  AutoCast mode_;
  AutoCastType type_;
  bool mixed_;
};

}  // namespace

std::unique_ptr<Pass> MakeAutocastPass(AutoCast mode, AutoCastType type, bool mixed_accumulation) {
  return std::make_unique<Autocast>(mode, type, mixed_accumulation);
}

}  // namespace neuron::compiler
