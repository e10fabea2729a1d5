// Compiler errors people can act on: "NCC-Ennnn: <what> at %inst in
// computation 'c' (file.py:42, op_name "..."): <fix>", carried in an
// absl::Status whose payload holds the code.
#ifndef NEURON_LIB_COMPILER_DIAGNOSTICS_H_
#define NEURON_LIB_COMPILER_DIAGNOSTICS_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "lib/hlo/instruction.h"

namespace neuron::compiler {

// An error with `code` (from error_codes.h). When `inst` is given the
// message names it, its computation and its source metadata; the code's fix
// is appended.
absl::Status CompileError(const char* code, std::string_view what,
                          const hlo::Instruction* inst = nullptr);

// The NCC code of a status made by CompileError; "" for others.
std::string ErrorCodeOf(const absl::Status& status);

// "%name in computation 'c' (file.py:42, op_name "x")".
std::string DescribeLocation(const hlo::Instruction& inst);

// Wraps a status without a code as an internal error (NCC-E9000).
absl::Status AsInternalError(const absl::Status& status, const hlo::Instruction* inst = nullptr);

}  // namespace neuron::compiler

#endif  // NEURON_LIB_COMPILER_DIAGNOSTICS_H_
