// input_output_alias: which entry outputs may live in (may-alias) or must
// live in (must-alias) the buffer of an entry parameter, as frameworks
// donate a train step's weights and optimizer state. The text form is XLA's:
//   { {0}: (0, {}, may-alias), {1, 2}: (3, {1}, must-alias) }
#ifndef NEURON_LIB_HLO_INPUT_OUTPUT_ALIAS_H_
#define NEURON_LIB_HLO_INPUT_OUTPUT_ALIAS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace neuron::hlo {

class Computation;
class Module;

struct InputOutputAlias {
  std::vector<int64_t> output_index;     // shape index into the entry's result
  int64_t parameter = 0;                 // entry parameter number
  std::vector<int64_t> parameter_index;  // shape index into that parameter
  bool must_alias = false;

  bool operator==(const InputOutputAlias&) const = default;
};

// Parses the text form; the error says what was expected where.
absl::StatusOr<std::vector<InputOutputAlias>> ParseInputOutputAlias(std::string_view text);
// The text form of `aliases` (what ParseInputOutputAlias reads).
std::string FormatInputOutputAlias(const std::vector<InputOutputAlias>& aliases);

// Checks every alias against the entry: the parameter exists, both shape
// indices name arrays of the same element type and size (the dimensions
// may differ, as a bitcast's), and no output or parameter buffer is named
// twice.
absl::Status VerifyInputOutputAlias(const Module& module);

// Whether the output of `alias` can be written straight into its
// parameter's buffer while the entry runs (in its post order, the order both
// the planner and the runtime follow): nothing reads the parameter after
// the output's producer, which reads it lane by lane (elementwise work, or
// a dynamic-update-slice of it), or the output is the parameter itself.
// Where not, a runtime given one buffer for both copies the input first.
bool AliasRunsInPlace(const Computation& entry, const InputOutputAlias& alias);

}  // namespace neuron::hlo

#endif  // NEURON_LIB_HLO_INPUT_OUTPUT_ALIAS_H_
