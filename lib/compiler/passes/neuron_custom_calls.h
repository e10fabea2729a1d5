// The AwsNeuron* custom-call family that torch-neuronx / jax-neuronx emit
// (activations, RMSNorm, argmax/argmin, top-k) and XLA's generic "TopK"
// custom-call, lowered to plain HLO. Registered from custom_call_lowering.cc.
#ifndef NEURON_LIB_COMPILER_PASSES_NEURON_CUSTOM_CALLS_H_
#define NEURON_LIB_COMPILER_PASSES_NEURON_CUSTOM_CALLS_H_

#include <functional>
#include <string_view>

#include "absl/status/statusor.h"
#include "lib/compiler/ir_util.h"
#include "lib/hlo/module.h"

namespace neuron::compiler {

struct NeuronLoweringContext {
  hlo::Module& module;
  NameUniquer& names;
  // A scalar (a, b) -> op(a, b) reducer of `type`, shared between calls.
  std::function<hlo::Computation*(hlo::Opcode, hlo::ElementType)> reducer;
};

// Whether `target` is one this file lowers.
bool IsNeuronFamilyTarget(std::string_view target);

// The replacement for `cc` (an instruction of `c`, which may be tuple-shaped
// when `cc` is), or an NCC-E0205 error naming the target when its operands,
// result or backend_config do not fit. nullptr for targets it does not know.
absl::StatusOr<hlo::Instruction*> LowerNeuronCustomCall(NeuronLoweringContext& ctx, hlo::Computation* c,
                                                        hlo::Instruction* cc);

}  // namespace neuron::compiler

#endif  // NEURON_LIB_COMPILER_PASSES_NEURON_CUSTOM_CALLS_H_
