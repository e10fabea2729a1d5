// neuron-load: validates and loads a NEFF on NeuronCores, reports what it
// costs per core and where the load time went, then unloads. The work is
// in load_command.cc; this file is the option table.
#include <cstdio>
#include <string>
#include <utility>

#include "lib/nrt_client/model_input.h"
#include "lib/nrt_client/runtime_library.h"
#include "lib/support/cli.h"
#include "lib/support/options.h"
#include "lib/support/parse.h"
#include "tools/neuron-load/load_command.h"

namespace {

constexpr const char* kTool = "neuron-load";

using neuron::cli::Arg;

}  // namespace

int main(int argc, char** argv) {
  neuron::load_tool::LoadRequest request;
  neuron::cli::Command command{
      .tool = kTool,
      .usage = "FILE|- [options]",
      .description =
          "Validate and load a NEFF, report its device-memory cost per core and the\n"
          "load time (read, hash, decompress, deserialize, build, place), then unload.\n"
          "FILE may also be an HLO module (text or HloModuleProto), compiled in memory\n"
          "as neuron-compile would.",
      .options = {
          {'c', "cores", Arg::kRequired, "LIST", "NeuronCores to load on (default: the first free one)",
           [&](std::string_view v) -> absl::Status {
             absl::StatusOr<std::vector<int>> cores = neuron::ParseRangeList(v);
             if (!cores.ok()) return cores.status();
             request.cores = *cores;
             return absl::OkStatus();
           }},
          {'j', "json", Arg::kNone, "", "print one JSON document",
           [&](std::string_view) { request.json = true; return absl::OkStatus(); }},
          {'q', "quiet", Arg::kNone, "", "no progress line on stderr",
           [&](std::string_view) { request.quiet = true; return absl::OkStatus(); }},
      },
      .notes =
          "Honours NEURON_RT_VALIDATE_HASH, NEURON_RT_ALLOW_LEGACY_NEFF,\n"
          "NEURON_RT_VISIBLE_CORES, NEURON_SCRATCHPAD_PAGE_SIZE, ...; see neuron-load(1).",
      .min_operands = 1,
      .max_operands = 1,
      .missing_operand = "no NEFF or HLO module given (a file, or - for stdin)",
      .operand_complete = "file",
  };
  // --target and -O, which matter only for an HLO input.
  for (neuron::cli::Option& o : neuron::nrt_client::HloCompileOptions(&request.compile)) {
    command.options.push_back(std::move(o));
  }
  neuron::cli::ParsedArgs parsed;
  if (int rc = neuron::cli::ParseCommandLine(command, argc, argv, &parsed); rc >= 0) {
    // --version also names the runtime library the tool would run on.
    if (parsed.action == neuron::cli::ParsedArgs::kVersion) {
      std::printf("%s\n", neuron::nrt_client::RuntimeVersionLine().c_str());
    }
    return rc;
  }
  request.neff_path = parsed.operands[0];
  return neuron::RunGuarded(kTool, [&] { return neuron::load_tool::RunLoad(request); });
}
