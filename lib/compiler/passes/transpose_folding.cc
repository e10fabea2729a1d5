// Transpose folding: a dot (and, for unet-inference, a convolution) whose
// operand is a transpose reads the transpose's operand directly, with its
// dimension numbers mapped through the permutation, so the transpose is
// never materialized.
#include "lib/compiler/ir_util.h"
#include "lib/compiler/passes/passes.h"

namespace neuron::compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Dimensions of an operand of rank `rank` not in `a` or `b`, ascending.
std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(a.begin(), a.end(), d) == a.end() && std::find(b.begin(), b.end(), d) == b.end()) {
      out.push_back(d);
    }
  }
  return out;
}

// Folds operand `side` (0 lhs, 1 rhs) of a dot when the permutation keeps
// the order of the free dimensions (otherwise the result would be permuted).
bool FoldDotOperand(Instruction* dot, int side) {
  Instruction* t = dot->operand(side);
  if (t->opcode() != Opcode::kTranspose || !dot->attrs().dot) return false;
  const std::vector<int64_t>& perm = t->attrs().dimensions;
  hlo::DotDims dims = *dot->attrs().dot;
  std::vector<int64_t>& batch = side == 0 ? dims.lhs_batch : dims.rhs_batch;
  std::vector<int64_t>& contracting = side == 0 ? dims.lhs_contracting : dims.rhs_contracting;
  int64_t rank = t->shape().rank();
  if (static_cast<int64_t>(perm.size()) != rank) return false;
  std::vector<int64_t> free = FreeDims(rank, batch, contracting);
  for (size_t i = 1; i < free.size(); ++i) {
    if (perm[free[i]] < perm[free[i - 1]]) return false;
  }
  for (int64_t& d : batch) d = perm[d];
  for (int64_t& d : contracting) d = perm[d];
  dot->attrs().dot = dims;
  dot->ReplaceOperand(side, t->operand(0));
  return true;
}

// A convolution names every dimension explicitly, so any transpose folds.
bool FoldConvolutionOperand(Instruction* conv, int side) {
  Instruction* t = conv->operand(side);
  if (t->opcode() != Opcode::kTranspose || !conv->attrs().conv) return false;
  const std::vector<int64_t>& perm = t->attrs().dimensions;
  hlo::ConvDims dims = *conv->attrs().conv;
  if (side == 0) {
    dims.input_batch = perm[dims.input_batch];
    dims.input_feature = perm[dims.input_feature];
    for (int64_t& d : dims.input_spatial) d = perm[d];
  } else {
    dims.kernel_input_feature = perm[dims.kernel_input_feature];
    dims.kernel_output_feature = perm[dims.kernel_output_feature];
    for (int64_t& d : dims.kernel_spatial) d = perm[d];
  }
  conv->attrs().conv = dims;
  conv->ReplaceOperand(side, t->operand(0));
  return true;
}

class TransposeFolding : public Pass {
 public:
  explicit TransposeFolding(bool convolutions) : convolutions_(convolutions) {}
  std::string_view Name() const override {
    return convolutions_ ? "transpose-folding-conv" : "transpose-folding";
  }
  absl::StatusOr<bool> Run(hlo::Module& module) override {
    bool changed = false;
    for (hlo::Computation* c : module.computations()) {
      bool local = false;
      for (Instruction* inst : c->PostOrder()) {
        for (int side = 0; side < 2 && side < static_cast<int>(inst->operand_count()); ++side) {
          if (inst->opcode() == Opcode::kDot) local |= FoldDotOperand(inst, side);
          if (convolutions_ && inst->opcode() == Opcode::kConvolution) {
            local |= FoldConvolutionOperand(inst, side);
          }
        }
      }
      changed |= local;
    }
    return changed;
  }

 private:
  bool convolutions_;
};

}  // namespace

std::unique_ptr<Pass> MakeTransposeFoldingPass(bool convolutions) {
  return std::make_unique<TransposeFolding>(convolutions);
}

}  // namespace neuron::compiler
