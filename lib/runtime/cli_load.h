// What neuron-load does once its flags are parsed: take the cores, load the
// NEFF (or the one compiled from an HLO module) on each (validating it on the way), report what it costs per core
// and where the load time went, then unload.
#ifndef NEURON_LIB_RUNTIME_CLI_LOAD_H_
#define NEURON_LIB_RUNTIME_CLI_LOAD_H_

#include <optional>
#include <string>
#include <vector>

#include "lib/runtime/cli_model_input.h"

namespace neuron::runtime {

struct LoadRequest {
  std::string neff_path;                  // a NEFF or HLO module; "-" = stdin
  HloCompileFlags compile;                // --target, -O (HLO input only)
  std::optional<std::vector<int>> cores;  // unset: the first visible core
  bool json = false;
  bool quiet = false;                     // --quiet: no progress line
};

// Prints the report (text or JSON) on stdout, or one
// "neuron-load: error: ..." line on stderr. Returns the exit status.
int RunLoad(const LoadRequest& request);

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_CLI_LOAD_H_
