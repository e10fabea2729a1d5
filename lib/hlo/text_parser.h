// Parser for HLO text as XLA and JAX print it (short and long forms,
// layouts, metadata, backend configs, async ops). Unknown attributes are
// kept verbatim; unknown opcodes become Opcode::kUnknown with their text.
// Errors are one line: "<display_name>:<line>:<col>: <what is wrong>".
#ifndef NEURON_LIB_HLO_TEXT_PARSER_H_
#define NEURON_LIB_HLO_TEXT_PARSER_H_

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "lib/hlo/literal.h"
#include "lib/hlo/module.h"

namespace neuron::hlo {

absl::StatusOr<std::unique_ptr<Module>> ParseText(std::string_view text,
                                                  std::string_view display_name);

// Pieces, for tests and tools: a shape ("f32[2,3]{1,0}") and a literal of a
// given shape ("{1, 2, 3}").
absl::StatusOr<Shape> ParseShape(std::string_view text);
absl::StatusOr<Literal> ParseLiteral(std::string_view text, const Shape& shape);

}  // namespace neuron::hlo

#endif  // NEURON_LIB_HLO_TEXT_PARSER_H_
