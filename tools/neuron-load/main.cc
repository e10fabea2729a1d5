// neuron-load: validates and loads a NEFF on NeuronCores, reports what it
// costs per core and where the load time went, then unloads. The work is
// in lib/runtime/cli_load.cc; this file parses the command line.
#include <getopt.h>

#include <cstdio>
#include <new>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/runtime/cli_load.h"
#include "lib/support/cli.h"
#include "lib/support/parse.h"

namespace {

constexpr const char* kTool = "neuron-load";

constexpr const char* kUsage =
    "usage: neuron-load FILE|- [--cores LIST] [--json] [--target TARGET] [-O N]\n"
    "\n"
    "Validate and load a NEFF, report its device-memory cost per core and the\n"
    "load time (read, hash, decompress, deserialize, build, place), then unload.\n"
    "FILE may also be an HLO module (text or HloModuleProto), compiled in memory\n"
    "as neuron-compile would.\n"
    "\n"
    "  -c, --cores LIST   NeuronCores to load on (default: the first visible one)\n"
    "  -j, --json         print one JSON document\n"
    "      --target T     HLO input: trn1, trn1n, inf2 or trn2 (default: the device's)\n"
    "  -O, --optlevel N   HLO input: optimization level 1, 2 or 3 (default 2)\n"
    "  -h, --help         print this help\n"
    "      --version      print the version\n"
    "\n"
    "Honours NEURON_RT_VALIDATE_HASH, NEURON_RT_ALLOW_LEGACY_NEFF,\n"
    "NEURON_RT_VISIBLE_CORES, NEURON_SCRATCHPAD_PAGE_SIZE, ...; see neuron-load(1).\n";

enum LongOnly { kVersion = 256, kTarget };

int Usage(const std::string& message) { return neuron::UsageError(kTool, message); }

}  // namespace

int main(int argc, char** argv) {
  static const option kOptions[] = {
      {"cores", required_argument, nullptr, 'c'},
      {"json", no_argument, nullptr, 'j'},
      {"target", required_argument, nullptr, kTarget},
      {"optlevel", required_argument, nullptr, 'O'},
      {"help", no_argument, nullptr, 'h'},
      {"version", no_argument, nullptr, kVersion},
      {nullptr, 0, nullptr, 0},
  };
  neuron::runtime::LoadRequest request;
  opterr = 0;
  int opt;
  while ((opt = getopt_long(argc, argv, ":c:jO:h", kOptions, nullptr)) != -1) {
    switch (opt) {
      case 'c': {
        absl::StatusOr<std::vector<int>> cores = neuron::ParseRangeList(optarg);
        if (!cores.ok()) return Usage(absl::StrCat("--cores '", optarg, "': ", cores.status().message()));
        request.cores = *cores;
        break;
      }
      case 'j':
        request.json = true;
        break;
      case kTarget:
        request.compile.target = optarg;
        break;
      case 'O':
        request.compile.optlevel = optarg;
        break;
      case 'h':
        std::fputs(kUsage, stdout);
        return neuron::kExitOk;
      case kVersion:
        neuron::PrintVersion(kTool);
        return neuron::kExitOk;
      default:
        return neuron::GetoptUsageError(kTool, opt, argv);
    }
  }
  if (absl::Status s = neuron::runtime::CheckHloCompileFlags(request.compile); !s.ok()) {
    return Usage(std::string(s.message()));
  }
  if (optind >= argc) return Usage("no NEFF or HLO module given (a file, or - for stdin)");
  if (argc - optind > 1) return Usage(absl::StrCat("unexpected argument '", argv[optind + 1], "'"));
  request.neff_path = argv[optind];
  return neuron::RunGuarded(kTool, [&] { return neuron::runtime::RunLoad(request); });
}
