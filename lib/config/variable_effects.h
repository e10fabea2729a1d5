// What each variable of the reference does on the simulated device: its
// counterpart of the documented effect, or, where there is none, why and
// what it would do on hardware. `neuron-ls --env` marks every variable with
// it, and man/neuron-env.7 is written from it (a test keeps them equal).
#ifndef NEURON_LIB_CONFIG_VARIABLE_EFFECTS_H_
#define NEURON_LIB_CONFIG_VARIABLE_EFFECTS_H_

#include <string_view>

namespace neuron::config {

enum class EffectKind {
  kSimulated,     // the simulated device does what the reference says
  kHardwareOnly,  // accepted and validated; the effect needs real hardware
};
const char* EffectKindName(EffectKind kind);  // "simulated", "hardware-only"

struct VariableEffect {
  EffectKind kind = EffectKind::kSimulated;
  std::string_view here;  // one sentence: what a user observes here (or why nothing)
  std::string_view see;   // the page with the details, e.g. "neuron-exec(1)"
};

// The effect of a variable of AllVariables(); nullptr for an unknown name.
// The per-submodule log variables share their family's entry.
const VariableEffect* EffectOf(std::string_view name);

}  // namespace neuron::config

#endif  // NEURON_LIB_CONFIG_VARIABLE_EFFECTS_H_
