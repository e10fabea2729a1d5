// Common-subexpression elimination: instructions with the same opcode,
// shape, operands and attributes compute the same value; later ones are
// replaced by the first. Side-effecting and random ops are never merged.
#include <unordered_map>

#include "lib/compiler/ir_util.h"
#include "lib/compiler/passes/passes.h"
#include "lib/hlo/printer.h"

namespace neuron::compiler {
namespace {

using hlo::Instruction;

// Constants larger than this are not compared (printing them is costly
// and duplicates of big weights are rare).
constexpr int64_t kMaxCseConstantElements = 1024;

class Cse : public Pass {
 public:
  std::string_view Name() const override { return "cse"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override {
    bool changed = false;
    hlo::PrintOptions no_metadata;
    no_metadata.metadata = false;
    for (hlo::Computation* c : module.computations()) {
      std::unordered_map<std::string, Instruction*> seen;
      bool local = false;
      for (Instruction* inst : c->PostOrder()) {
        if (HasSideEffect(*inst) || inst->opcode() == hlo::Opcode::kRngBitGenerator ||
            !inst->control_predecessors().empty()) {
          continue;
        }
        if (inst->opcode() == hlo::Opcode::kConstant) {
          std::optional<int64_t> n = inst->shape().ElementCount();
          if (!n || *n > kMaxCseConstantElements) continue;
        }
        // The printed line without the name is the instruction's identity:
        // operands appear by name, and operands were merged first.
        std::string line = hlo::PrintInstruction(*inst, no_metadata);
        size_t eq = line.find(" = ");
        std::string key = eq == std::string::npos ? line : line.substr(eq + 3);
        auto [it, inserted] = seen.emplace(std::move(key), inst);
        if (inserted || inst == c->root()) continue;
        inst->ReplaceAllUsesWith(it->second);
        local = true;
      }
      changed |= local;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeCsePass() { return std::make_unique<Cse>(); }

}  // namespace neuron::compiler
