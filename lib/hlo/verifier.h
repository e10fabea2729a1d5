// Checks a module: structure (entry, roots, parameters, called
// computations), operand counts and types, and that every instruction's
// declared shape agrees with the inferred one where inference is defined.
// Layout differences are not errors.
#ifndef NEURON_LIB_HLO_VERIFIER_H_
#define NEURON_LIB_HLO_VERIFIER_H_

#include "absl/status/status.h"
#include "lib/hlo/module.h"

namespace neuron::hlo {

// First problem found, as "<module>: computation '<c>', instruction
// '%name' (line N): <what is wrong>".
absl::Status Verify(const Module& module);

}  // namespace neuron::hlo

#endif  // NEURON_LIB_HLO_VERIFIER_H_
