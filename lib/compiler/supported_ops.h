// What the compiler (and the executor behind it) supports: the operator
// list `list-operators` prints, and the check that refuses a module using
// anything else, naming the operator or custom-call target.
#ifndef NEURON_LIB_COMPILER_SUPPORTED_OPS_H_
#define NEURON_LIB_COMPILER_SUPPORTED_OPS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/hlo/module.h"

namespace neuron::compiler {

bool IsSupportedOpcode(hlo::Opcode op);

// HLO operator names, sorted, one per supported opcode.
std::vector<std::string> SupportedOperators();

// Custom-call targets lowered by custom-call-lowering, sorted.
std::vector<std::string> LoweredCustomCallTargets();

// First unsupported thing in the module (after lowering): an opcode
// (NCC-E0201), a custom-call target (NCC-E0202), a dynamic shape
// (NCC-E0203) or a complex type (NCC-E0204). OK when all is supported.
absl::Status CheckSupported(const hlo::Module& module);

}  // namespace neuron::compiler

#endif  // NEURON_LIB_COMPILER_SUPPORTED_OPS_H_
