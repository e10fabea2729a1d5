// Dead-code elimination: finds instructions whose values nothing uses
// (side-effecting ones stay live). The pipeline drops them when it compacts
// the module after a pass that reports a change (ir_util's CompactModule),
// which is linear where removing them one by one is not.
#include <unordered_set>

#include "lib/compiler/ir_util.h"
#include "lib/compiler/passes/passes.h"

namespace neuron::compiler {
namespace {

class DeadCodeElimination : public Pass {
 public:
  std::string_view Name() const override { return "dce"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override {
    std::unordered_set<const hlo::Computation*> called;
    for (const hlo::Computation* c : module.computations()) {
      for (const hlo::Instruction* inst : c->instructions()) {
        for (const hlo::Computation* callee : inst->called_computations()) called.insert(callee);
      }
    }
    for (const hlo::Computation* c : module.computations()) {
      if (c != module.entry() && !called.count(c)) return true;  // an unused computation
      for (const hlo::Instruction* inst : c->instructions()) {
        if (inst != c->root() && inst->users().empty() && !HasSideEffect(*inst)) return true;
      }
    }
    return false;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeDeadCodeEliminationPass() { return std::make_unique<DeadCodeElimination>(); }

}  // namespace neuron::compiler
