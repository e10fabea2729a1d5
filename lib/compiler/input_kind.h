// What a model file holds, told by its content rather than its name: a
// NEFF, HLO text, a binary HloModuleProto, or something else, described in
// words ("a NumPy array", "gzip-compressed data") so a tool handed the
// wrong file can say what it got instead of failing to parse it as a NEFF.
#ifndef NEURON_LIB_COMPILER_INPUT_KIND_H_
#define NEURON_LIB_COMPILER_INPUT_KIND_H_

#include <string>
#include <string_view>

namespace neuron::compiler {

enum class InputKind { kNeff, kHloText, kHloProto, kOther };

struct ClassifiedInput {
  InputKind kind = InputKind::kOther;
  std::string description;  // kOther: what the bytes are, e.g. "a NumPy array"
};

// Classifies whole file contents (a NEFF by neff::LooksLikeNeff, so one
// cut short is still a NEFF and its loader says how short).
ClassifiedInput ClassifyInput(std::string_view bytes);

}  // namespace neuron::compiler

#endif  // NEURON_LIB_COMPILER_INPUT_KIND_H_
