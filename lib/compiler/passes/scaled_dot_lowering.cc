// Lowers XLA's scaled-dot(lhs, rhs, lhs_scale, rhs_scale) (block-scaled
// matmuls, the MX and NVFP4 formats) to the dot it stands for: each
// operand is widened to f32 (f64 for an f64 result) and multiplied by its
// scale repeated over its block (operand dim / scale dim elements along
// each dimension), then the two are dotted with the instruction's
// dimension numbers into its result type.
//
// The six-operand form (with per-tensor global scales) is left alone: the
// support check refuses it by name.
#include <vector>

#include "lib/compiler/ir_util.h"
#include "lib/compiler/passes/passes.h"

namespace neuron::compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

class ScaledDotLoweringPass : public Pass {
 public:
  std::string_view Name() const override { return "scaled-dot-lowering"; }

  absl::StatusOr<bool> Run(hlo::Module& module) override {
    if (!HasAnyOpcode(module, {Opcode::kScaledDot})) return false;
    bool changed = false;
    NameUniquer names(module);
    for (hlo::Computation* c : module.computations()) {
      for (Instruction* inst : c->PostOrder()) {
        if (inst->opcode() != Opcode::kScaledDot || inst->operand_count() != 4 || !inst->shape().IsArray()) continue;
        const hlo::ElementType wide =
            inst->shape().type == hlo::ElementType::kF64 ? hlo::ElementType::kF64 : hlo::ElementType::kF32;
        Instruction* lhs = Dequantize(c, names, inst->operand(0), inst->operand(2), wide);
        Instruction* rhs = Dequantize(c, names, inst->operand(1), inst->operand(3), wide);
        Instruction* dot = AddInstruction(c, Opcode::kDot, names.Get("dot"), inst->shape(), {lhs, rhs});
        dot->attrs().dot = inst->attrs().dot.value_or(hlo::DotDims{});
        dot->attrs().operand_precision = inst->attrs().operand_precision;
        dot->attrs().metadata = inst->attrs().metadata;
        inst->ReplaceAllUsesWith(dot);
        if (absl::Status s = c->RemoveInstruction(inst); !s.ok()) return s;
        changed = true;
      }
    }
    return changed;
  }

 private:
  static Instruction* Widen(hlo::Computation* c, NameUniquer& names, Instruction* x, hlo::ElementType type) {
    if (x->shape().type == type) return x;
    return AddInstruction(c, Opcode::kConvert, names.Get("convert"), Shape::Array(type, x->shape().dims), {x});
  }

  // x * scale, the scale's element (i0, i1, ...) covering x's block
  // [i0*b0, (i0+1)*b0) x [i1*b1, ...): the scale is broadcast to
  // [s0, b0, s1, b1, ...] (block dims of 1 left out) and reshaped to x's.
  static Instruction* Dequantize(hlo::Computation* c, NameUniquer& names, Instruction* x, Instruction* scale,
                                 hlo::ElementType type) {
    const std::vector<int64_t>& xd = x->shape().dims;
    const std::vector<int64_t>& sd = scale->shape().dims;
    Instruction* s = Widen(c, names, scale, type);
    if (sd != xd) {
      std::vector<int64_t> spread, kept;
      for (size_t d = 0; d < xd.size(); ++d) {
        kept.push_back(static_cast<int64_t>(spread.size()));
        spread.push_back(sd[d]);
        if (xd[d] != sd[d]) spread.push_back(xd[d] / sd[d]);
      }
      Instruction* b = AddInstruction(c, Opcode::kBroadcast, names.Get("broadcast"), Shape::Array(type, spread), {s});
      b->attrs().dimensions = kept;
      b->attrs().has_dimensions = true;
      s = AddInstruction(c, Opcode::kReshape, names.Get("reshape"), Shape::Array(type, xd), {b});
    }
    return AddInstruction(c, Opcode::kMultiply, names.Get("multiply"), Shape::Array(type, xd),
                          {Widen(c, names, x, type), s});
  }
};

}  // namespace

std::unique_ptr<Pass> MakeScaledDotLoweringPass() { return std::make_unique<ScaledDotLoweringPass>(); }

}  // namespace neuron::compiler
