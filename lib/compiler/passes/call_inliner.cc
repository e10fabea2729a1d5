// Call inlining, as XLA's CallInliner: a `call` is replaced by a copy of
// its callee's instructions, operands in place of the parameters. JAX
// wraps every jax.nn.relu, pad or softmax in a call of its own, and a call
// is a wall for fusion and buffer reuse: resnet50's 51 relu calls each
// read and wrote their activation once more after the batch norm that
// fed them. Callees with side effects or control edges stay calls, so the
// order of effects is never changed.
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "lib/compiler/ir_util.h"
#include "lib/compiler/passes/passes.h"

namespace neuron::compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// The callee's instructions that its root depends on, operands first.
std::vector<Instruction*> PostOrder(const hlo::Computation& callee) {
  std::vector<Instruction*> order;
  absl::flat_hash_set<const Instruction*> seen;
  std::vector<std::pair<Instruction*, size_t>> stack = {{callee.root(), 0}};
  seen.insert(callee.root());
  while (!stack.empty()) {
    auto& [inst, next] = stack.back();
    if (next < inst->operand_count()) {
      Instruction* o = inst->operand(next++);
      if (seen.insert(o).second) stack.push_back({o, 0});
      continue;
    }
    order.push_back(inst);
    stack.pop_back();
  }
  return order;
}

// `ordered_before`: the caller's instructions some control edge orders
// another after.
bool Inlinable(const Instruction& call, const absl::flat_hash_set<const Instruction*>& ordered_before) {
  if (call.opcode() != Opcode::kCall || call.to_apply() == nullptr || !call.control_predecessors().empty() ||
      ordered_before.contains(&call))
    return false;
  const hlo::Computation& callee = *call.to_apply();
  if (callee.root() == nullptr || callee.parameters().size() != call.operand_count()) return false;
  for (const Instruction* p : callee.parameters())
    if (p->attrs().parameter_number < 0 || p->attrs().parameter_number >= static_cast<int64_t>(call.operand_count()))
      return false;
  for (const Instruction* inst : callee.instructions())
    if ((inst->opcode() != Opcode::kParameter && HasSideEffect(*inst)) || !inst->control_predecessors().empty())
      return false;
  return true;
}

class CallInliner : public Pass {
 public:
  std::string_view Name() const override { return "call-inliner"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override {
    if (!HasAnyOpcode(module, {Opcode::kCall})) return false;
    const auto embedded = EmbeddedComputations(module);
    NameUniquer names(module);
    bool changed = false;
    for (hlo::Computation* comp : module.computations()) {
      if (embedded.count(comp)) continue;
      absl::flat_hash_set<const Instruction*> ordered_before;
      for (const Instruction* inst : comp->instructions())
        for (const Instruction* pred : inst->control_predecessors()) ordered_before.insert(pred);
      // Inlined callees may hold calls of their own: until none is left.
      std::vector<Instruction*> work = comp->instructions();
      while (!work.empty()) {
        std::vector<Instruction*> next;
        for (Instruction* call : work) {
          if (!Inlinable(*call, ordered_before)) continue;
          const hlo::Computation& callee = *call->to_apply();
          absl::flat_hash_map<const Instruction*, Instruction*> copy;
          for (const Instruction* p : callee.parameters()) copy[p] = call->operand(p->attrs().parameter_number);
          for (Instruction* inst : PostOrder(callee)) {
            if (copy.contains(inst)) continue;
            std::vector<Instruction*> operands;
            for (const Instruction* o : inst->operands()) operands.push_back(copy.at(o));
            Instruction* c = CloneInstruction(*inst, comp, names.Get(inst->name()), operands);
            copy[inst] = c;
            if (c->opcode() == Opcode::kCall) next.push_back(c);
          }
          call->ReplaceAllUsesWith(copy.at(callee.root()));
          changed = true;
        }
        work = std::move(next);
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeCallInlinerPass() { return std::make_unique<CallInliner>(); }

}  // namespace neuron::compiler
