// Small IR helpers the passes share: unique names, building instructions,
// cloning, removing dead instructions, and scalar reducer computations.
#ifndef NEURON_LIB_COMPILER_IR_UTIL_H_
#define NEURON_LIB_COMPILER_IR_UTIL_H_

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "lib/hlo/module.h"

namespace neuron::compiler {

// Hands out names not yet used in the module ("fusion.3").
class NameUniquer {
 public:
  explicit NameUniquer(const hlo::Module& module);
  std::string Get(std::string_view base);

 private:
  // Flat tables: fusion asks for a name per cloned instruction, and
  // node-based ones made naming the larger part of that pass.
  absl::flat_hash_set<std::string> used_;
  absl::flat_hash_map<std::string, int64_t> next_;
};

// Adds a new instruction with operands to `comp`.
hlo::Instruction* AddInstruction(hlo::Computation* comp, hlo::Opcode op, std::string name,
                                 hlo::Shape shape, const std::vector<hlo::Instruction*>& operands = {});

// Parameter `number` of `comp`.
hlo::Instruction* AddParameter(hlo::Computation* comp, int64_t number, std::string name,
                               hlo::Shape shape);

// A scalar constant of `type`.
hlo::Instruction* AddScalarConstant(hlo::Computation* comp, NameUniquer& names, hlo::ElementType type,
                                    double value);

// A copy of `inst` (attributes, called computations) with new operands,
// added to `comp`.
hlo::Instruction* CloneInstruction(const hlo::Instruction& inst, hlo::Computation* comp, std::string name,
                                   const std::vector<hlo::Instruction*>& operands);

// A computation (a, b) -> op(a, b) on scalars of `type`, added to the
// module before its callers (for reduce's to_apply).
hlo::Computation* AddScalarReducer(hlo::Module& module, NameUniquer& names, hlo::Opcode op,
                                   hlo::ElementType type);

// `x` reduced over `dim` with `reducer` from `init`, broadcast back to x's
// shape (a softmax's or a norm's row statistic, next to its row).
hlo::Instruction* AddReduceBroadcast(hlo::Computation* comp, NameUniquer& names, hlo::Instruction* x,
                                     int64_t dim, hlo::Computation* reducer, double init);

// A reducer computing op(p0, p1) of its two scalar parameters with op one
// of add, multiply, maximum, minimum, and, or: what the runtime's fused
// reductions run (lib/kernels/fused_reduce.h).
bool IsSimpleReducer(const hlo::Computation& reducer);

// Whether any computation of `module` has an instruction with one of
// `ops`: passes that rewrite rare operators check this before building
// their name tables and orders.
bool HasAnyOpcode(const hlo::Module& module, std::initializer_list<hlo::Opcode> ops);

// Side effects or state: never removed or merged.
bool HasSideEffect(const hlo::Instruction& inst);

// Removes instructions of `comp` that nothing uses and that have no side
// effects (parameters and the root stay). Returns how many were removed.
size_t RemoveDeadInstructions(hlo::Computation* comp);

// Drops dead instructions (unused, no side effects) and computations
// nothing calls, in place, and puts what remains in post order (the order
// a fresh copy made that way would have). Linear time: removing
// instructions one by one from a Computation costs O(n) each, which made
// passes quadratic on large modules; passes leave dead code behind and the
// pipeline compacts after every pass that changed something. In place
// rather than a copy: copying every instruction's attributes after each
// pass cost more than the passes themselves.
void CompactModule(hlo::Module& module);

// The value of a constant (or broadcast of a scalar constant) whose
// elements are all equal; nullopt otherwise.
std::optional<double> SplatValue(const hlo::Instruction& inst);

// Computations run as part of one instruction (fusion bodies, reducers,
// comparators): passes that restructure programs leave them alone.
std::unordered_set<const hlo::Computation*> EmbeddedComputations(const hlo::Module& module);

}  // namespace neuron::compiler

#endif  // NEURON_LIB_COMPILER_IR_UTIL_H_
