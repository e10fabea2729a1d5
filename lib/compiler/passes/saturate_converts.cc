// --enable-saturate-infinity: a convert to a narrower floating type clamps
// its input to the target's largest finite value first, so values too large
// for the type become its maximum instead of infinity (and do not turn into
// NaN later, e.g. inf - inf). The clamp is explicit in the program, so any
// executor honours it.
#include <cmath>

#include "lib/compiler/ir_util.h"
#include "lib/compiler/passes/passes.h"

namespace neuron::compiler {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;

std::optional<double> LargestFinite(ElementType t) {
  switch (t) {
    case ElementType::kF64: return 1.7976931348623157e308;
    case ElementType::kF32: return 3.4028234663852886e38;
    case ElementType::kBF16: return 3.3895313892515355e38;
    case ElementType::kF16: return 65504.0;
    case ElementType::kF8E4M3FN: return 448.0;
    case ElementType::kF8E4M3FNUZ: return 240.0;
    case ElementType::kF8E4M3: return 240.0;
    case ElementType::kF8E5M2: return 57344.0;
    case ElementType::kF8E5M2FNUZ: return 57344.0;
    case ElementType::kF8E4M3B11FNUZ: return 30.0;
    case ElementType::kF8E3M4: return 15.5;
    default: return std::nullopt;
  }
}

class SaturateConverts : public Pass {
 public:
  std::string_view Name() const override { return "saturate-converts"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override {
    NameUniquer names(module);
    bool changed = false;
    for (hlo::Computation* c : module.computations()) {
      for (Instruction* inst : c->PostOrder()) {
        if (inst->opcode() != Opcode::kConvert || !inst->shape().IsArray()) continue;
        Instruction* x = inst->operand(0);
        std::optional<double> from = LargestFinite(x->shape().type);
        std::optional<double> to = LargestFinite(inst->shape().type);
        if (!from || !to || *to >= *from) continue;
        if (x->opcode() == Opcode::kClamp) continue;  // already saturated
        ElementType t = x->shape().type;
        Instruction* lo = AddScalarConstant(c, names, t, -*to);
        Instruction* hi = AddScalarConstant(c, names, t, *to);
        Instruction* clamp = AddInstruction(c, Opcode::kClamp, names.Get("saturate"), x->shape(), {lo, x, hi});
        inst->ReplaceOperand(0, clamp);
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeSaturateConvertsPass() { return std::make_unique<SaturateConverts>(); }

}  // namespace neuron::compiler
