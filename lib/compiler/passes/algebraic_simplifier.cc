// Algebraic simplification: identities that remove work without changing
// results: x+0, x-0, x*1, x/1, -(-x), no-op reshape/transpose/broadcast/
// convert/copy/slice/concatenate, reshape of reshape, transpose of
// transpose.
#include "lib/compiler/ir_util.h"
#include "lib/compiler/passes/passes.h"

namespace neuron::compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;

bool IsSplat(const Instruction& inst, double value) {
  std::optional<double> v = SplatValue(inst);
  return v && *v == value;
}

bool IsIdentityPermutation(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// The instruction `inst` can be replaced with, or nullptr. Replacements
// always have exactly inst's type and dimensions.
Instruction* Simplify(Instruction* inst) {
  auto same = [&](Instruction* x) -> Instruction* {
    return x->shape().Compatible(inst->shape()) ? x : nullptr;
  };
  const auto& ops = inst->operands();
  switch (inst->opcode()) {
    case Opcode::kAdd:
      if (hlo::IsFloatingPoint(inst->shape().type) || hlo::IsInteger(inst->shape().type)) {
        if (IsSplat(*ops[1], 0)) return same(ops[0]);
        if (IsSplat(*ops[0], 0)) return same(ops[1]);
      }
      return nullptr;
    case Opcode::kSubtract:
      return IsSplat(*ops[1], 0) ? same(ops[0]) : nullptr;
    case Opcode::kMultiply:
      if (IsSplat(*ops[1], 1)) return same(ops[0]);
      if (IsSplat(*ops[0], 1)) return same(ops[1]);
      return nullptr;
    case Opcode::kDivide:
      return IsSplat(*ops[1], 1) ? same(ops[0]) : nullptr;
    case Opcode::kNegate:
      return ops[0]->opcode() == Opcode::kNegate ? same(ops[0]->operand(0)) : nullptr;
    case Opcode::kReshape:
    case Opcode::kCopy:
    case Opcode::kConvert:
      return same(ops[0]);
    case Opcode::kTranspose:
      if (IsIdentityPermutation(inst->attrs().dimensions)) return same(ops[0]);
      return nullptr;
    case Opcode::kBroadcast:
      if (IsIdentityPermutation(inst->attrs().dimensions)) return same(ops[0]);
      return nullptr;
    case Opcode::kSlice: {
      for (const hlo::SliceDim& s : inst->attrs().slice) {
        if (s.start != 0 || s.stride != 1) return nullptr;
      }
      return same(ops[0]);
    }
    case Opcode::kConcatenate:
      return ops.size() == 1 ? same(ops[0]) : nullptr;
    default:
      return nullptr;
  }
}

// Rewrites that replace an operand instead of the instruction.
bool Restructure(Instruction* inst) {
  if (inst->opcode() == Opcode::kReshape && inst->operand(0)->opcode() == Opcode::kReshape) {
    inst->ReplaceOperand(0, inst->operand(0)->operand(0));  // reshape(reshape(x)) = reshape(x)
    return true;
  }
  if (inst->opcode() == Opcode::kTranspose && inst->operand(0)->opcode() == Opcode::kTranspose) {
    // transpose(transpose(x, p), q) = transpose(x, p[q[i]]).
    const std::vector<int64_t>& q = inst->attrs().dimensions;
    const std::vector<int64_t>& p = inst->operand(0)->attrs().dimensions;
    if (p.size() != q.size()) return false;
    std::vector<int64_t> composed(q.size());
    for (size_t i = 0; i < q.size(); ++i) composed[i] = p[q[i]];
    inst->attrs().dimensions = composed;
    inst->ReplaceOperand(0, inst->operand(0)->operand(0));
    return true;
  }
  return false;
}

class AlgebraicSimplifier : public Pass {
 public:
  std::string_view Name() const override { return "algebraic-simplifier"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override {
    bool changed = false;
    for (hlo::Computation* c : module.computations()) {
      bool local = false;
      for (Instruction* inst : c->PostOrder()) {
        if (HasSideEffect(*inst) || inst->operand_count() == 0) continue;
        if (Restructure(inst)) local = true;
        Instruction* replacement = Simplify(inst);
        if (!replacement || replacement == inst) continue;
        // Keep the layout a root promises its caller.
        if (inst == c->root() && replacement->shape().layout != inst->shape().layout) continue;
        inst->ReplaceAllUsesWith(replacement);
        local = true;
      }
      changed |= local;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeAlgebraicSimplifierPass() { return std::make_unique<AlgebraicSimplifier>(); }

}  // namespace neuron::compiler
