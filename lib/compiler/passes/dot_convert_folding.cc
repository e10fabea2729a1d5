// Convert folding into skinny dots: a dot whose lhs has at most 16 rows (a
// decode step's token) and whose rhs is convert(w), an exact widening of
// narrow float weights (fp8 or f16 to bf16, f16 or f32; bf16 to f32), reads
// w directly. The runtime's skinny product widens the stored weights in
// registers (lib/kernels/skinny_product.h), so the widened copy, twice the
// bytes of fp8 weights, is neither planned nor written and read again on
// every call: what weight-only fp8 and int8-style checkpoints produce. The
// values are the same: every value of the narrow type is exact in the wide
// one, and the product accumulates in f32 either way.
#include <algorithm>

#include "lib/compiler/ir_util.h"
#include "lib/compiler/passes/passes.h"

namespace neuron::compiler {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;

// Rows of the lhs up to which the runtime reads the rhs as stored.
constexpr int64_t kSkinnyRows = 16;

// Every value of `from` is exactly a value of `to`.
bool ExactWidening(ElementType from, ElementType to) {
  const bool fp8 = from == ElementType::kF8E4M3FN || from == ElementType::kF8E5M2;
  if (fp8) return to == ElementType::kBF16 || to == ElementType::kF16 || to == ElementType::kF32;
  if (from == ElementType::kF16 || from == ElementType::kBF16) return to == ElementType::kF32;
  return false;
}

// The lhs's rows: its elements outside the batch and contracting dims.
int64_t LhsRows(const Instruction& dot) {
  const hlo::DotDims& d = *dot.attrs().dot;
  const hlo::Shape& lhs = dot.operand(0)->shape();
  int64_t rows = 1;
  for (int64_t i = 0; i < lhs.rank(); ++i)
    if (std::find(d.lhs_batch.begin(), d.lhs_batch.end(), i) == d.lhs_batch.end() &&
        std::find(d.lhs_contracting.begin(), d.lhs_contracting.end(), i) == d.lhs_contracting.end())
      rows *= lhs.dims[i];
  return rows;
}

class DotConvertFolding : public Pass {
 public:
  std::string_view Name() const override { return "dot-convert-folding"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override {
    bool changed = false;
    const std::unordered_set<const hlo::Computation*> embedded = EmbeddedComputations(module);
    for (hlo::Computation* c : module.computations()) {
      if (embedded.count(c) || c->is_fusion_computation()) continue;
      for (Instruction* inst : c->PostOrder()) {
        if (inst->opcode() != Opcode::kDot || inst->operand_count() != 2 || !inst->attrs().dot) continue;
        Instruction* cvt = inst->operand(1);
        if (cvt->opcode() != Opcode::kConvert || !cvt->shape().IsArray()) continue;
        const ElementType from = cvt->operand(0)->shape().type;
        if (!ExactWidening(from, cvt->shape().type) || !hlo::IsFloatingPoint(inst->shape().type) ||
            !hlo::IsFloatingPoint(inst->operand(0)->shape().type) || LhsRows(*inst) > kSkinnyRows)
          continue;
        inst->ReplaceOperand(1, cvt->operand(0));
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeDotConvertFoldingPass() { return std::make_unique<DotConvertFolding>(); }

}  // namespace neuron::compiler
