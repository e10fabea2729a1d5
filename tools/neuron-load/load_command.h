// What neuron-load does once its flags are parsed: take the cores, load the
// NEFF (or the one compiled from an HLO module) on each through libnrt.so.1
// (validating it on the way), report what it costs per core and where the
// load time went, then unload. The report beyond the SDK's functions (plan,
// cost, stage timings, metrics) comes from the project's extras; with
// another runtime one stderr line says it is not available.
#ifndef NEURON_TOOLS_NEURON_LOAD_LOAD_COMMAND_H_
#define NEURON_TOOLS_NEURON_LOAD_LOAD_COMMAND_H_

#include <optional>
#include <string>
#include <vector>

#include "lib/nrt_client/model_input.h"

namespace neuron::load_tool {

struct LoadRequest {
  std::string neff_path;                  // a NEFF or HLO module; "-" = stdin
  nrt_client::HloCompileFlags compile;    // --target, -O (HLO input only)
  std::optional<std::vector<int>> cores;  // unset: the first free visible core
  bool json = false;
  bool quiet = false;                     // --quiet: no progress line
};

// Prints the report (text or JSON) on stdout, or one
// "neuron-load: error: ..." line on stderr. Returns the exit status.
int RunLoad(const LoadRequest& request);

}  // namespace neuron::load_tool

#endif  // NEURON_TOOLS_NEURON_LOAD_LOAD_COMMAND_H_
