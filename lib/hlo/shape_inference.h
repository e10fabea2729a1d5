// Shape inference: the result shape XLA's semantics give an instruction
// from its operands and attributes. Used by the verifier and by passes that
// build new instructions.
#ifndef NEURON_LIB_HLO_SHAPE_INFERENCE_H_
#define NEURON_LIB_HLO_SHAPE_INFERENCE_H_

#include <optional>

#include "absl/status/statusor.h"
#include "lib/hlo/instruction.h"

namespace neuron::hlo {

// The inferred result shape (without layout), an error saying why the
// operands or attributes are inconsistent, or nullopt when the opcode has no
// inference rule here (custom-call, collectives' async forms, unknown ops).
absl::StatusOr<std::optional<Shape>> InferShape(const Instruction& instruction);

}  // namespace neuron::hlo

#endif  // NEURON_LIB_HLO_SHAPE_INFERENCE_H_
