// What the executor can run, asked by the compiler so that it refuses at
// compile time exactly what would fail at load time (one source of truth).
#ifndef NEURON_LIB_KERNELS_SUPPORT_H_
#define NEURON_LIB_KERNELS_SUPPORT_H_

#include <string_view>

#include "absl/status/status.h"
#include "lib/hlo/instruction.h"
#include "lib/hlo/opcode.h"

namespace neuron::kernels {

// False for operators whose kernels compute in real arithmetic only: a
// complex operand or result is refused for them.
bool RunsWithComplexTypes(hlo::Opcode op);

// Custom-call targets the executor runs itself (the compiler lowers the
// others it knows to plain HLO): GetRngSeed, the execution's RNG seed, and
// kDevicePrintTarget (lib/kernels/device_print.h).
bool RunsCustomCall(std::string_view target);

// What the kernels' planning refuses in one instruction's types, shapes and
// attributes (e.g. a dot mixing complex and real operands, a
// triangular-solve whose shapes do not fit its options): Unimplemented with
// the reason, OK otherwise. The planner asks this first for every
// instruction; the compiler asks it too, so such a module never compiles.
absl::Status KernelRefusal(const hlo::Instruction& instr);

inline constexpr std::string_view kDevicePrintTarget = "neuron.device_print";

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_SUPPORT_H_
