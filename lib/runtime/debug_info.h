// The model's debug-information graph: what the runtime knows about each
// HLO instruction the executor runs (opcode, computation, the framework's
// op name and source line), built at load so that reports about an
// execution (the first instruction that produced a NaN/Inf) can name the
// instruction the user wrote. NEURON_RT_DISABLE_DEBUG_INFO skips building
// it; reports then say the mapping is off.
#ifndef NEURON_LIB_RUNTIME_DEBUG_INFO_H_
#define NEURON_LIB_RUNTIME_DEBUG_INFO_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

#include "lib/hlo/module.h"

namespace neuron::runtime {

class DebugInfo {
 public:
  // One entry per instruction of every computation; where names repeat
  // across computations the first computation's entry is kept.
  static DebugInfo Build(const hlo::Module& module);

  size_t size() const { return entries_.size(); }
  // "HLO instruction 'l' (log in computation 'main', op_name "..." at
  // model.py:12)"; empty when `step` is not an instruction of the model.
  std::string Describe(std::string_view step) const;

 private:
  std::unordered_map<std::string, std::string> entries_;  // name -> details
};

// What reports say in place of an instruction when the map was not built.
inline constexpr const char* kDebugInfoOff =
    "an unknown HLO instruction (the debug-information map is off: "
    "NEURON_RT_DISABLE_DEBUG_INFO=1)";

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_DEBUG_INFO_H_
