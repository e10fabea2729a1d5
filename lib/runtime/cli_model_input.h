// The model file neuron-exec and neuron-load are given, told apart by
// content: a NEFF is loaded as it is; HLO (text or a binary
// HloModuleProto) is first compiled in memory with neuron-compile's options
// and compile cache, as XLA's run_hlo_module runs a module directly; any
// other file is refused with what it is ("a NumPy array", "an empty
// file"). "-" reads standard input, whatever it holds.
#ifndef NEURON_LIB_RUNTIME_CLI_MODEL_INPUT_H_
#define NEURON_LIB_RUNTIME_CLI_MODEL_INPUT_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/runtime/runtime.h"
#include "lib/support/options.h"

namespace neuron::runtime {

// --target and -O, spelled as neuron-compile spells them; used only when
// the input is HLO. Unset: NEURON_CC_FLAGS, else the target of the
// simulated device (its LNC size too) and -O2.
struct HloCompileFlags {
  std::optional<std::string> target;
  std::optional<std::string> optlevel;  // "1", "2" or "3"
};

// Checks the flags as neuron-compile would (a usage error names the
// option and the accepted values).
absl::Status CheckHloCompileFlags(const HloCompileFlags& flags);

// The --target and -O/--optlevel entries of neuron-exec's and neuron-load's
// option tables (one definition, so both tools spell and check them alike).
std::vector<cli::Option> HloCompileOptions(HloCompileFlags* flags);

struct ModelInput {
  std::string display;     // the file, or "<stdin>"
  std::string kind;        // "neff", "hlo-text" or "hlo-proto"
  std::string neff_path;   // a NEFF file, mapped at load; "" when neff_bytes holds it
  std::string neff_bytes;  // a NEFF from stdin, or the one compiled from HLO
};

// Reads `path` ("-" = stdin) far enough to tell what it holds, compiling
// HLO for `runtime`'s device. Errors are one line naming the file.
absl::StatusOr<ModelInput> OpenModelInput(const std::string& path, const HloCompileFlags& flags,
                                          const Runtime& runtime);

// Loads the input on one held core.
absl::StatusOr<std::unique_ptr<Model>> LoadModelInput(Runtime& runtime, const ModelInput& input,
                                                      int core);

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_CLI_MODEL_INPUT_H_
