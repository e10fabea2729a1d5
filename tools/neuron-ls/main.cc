// neuron-ls: lists the Neuron devices of this instance (or of the simulated
// one), the processes holding their cores, their interconnect, and with
// --env the effective runtime configuration. Works like the real neuron-ls;
// the listing itself lives in lib/device, the configuration in lib/config.
#include <getopt.h>

#include <cstdio>
#include <string>

#include "lib/config/config.h"
#include "lib/collectives/transport.h"
#include "lib/config/env_report.h"
#include "lib/device/ls_listing.h"
#include "lib/support/cli.h"

namespace {

constexpr const char* kTool = "neuron-ls";

constexpr const char* kUsage =
    "usage: neuron-ls [-w] [-a] [-t] [-j | --output-format json|table] [--env]\n"
    "\n"
    "List Neuron devices, their NeuronCores and the processes using them.\n"
    "\n"
    "  -w, --wide                 wider table (longer commands)\n"
    "  -a, --show-all-procs       also list processes without a Neuron runtime\n"
    "  -t, --topology             draw the device interconnect after the table\n"
    "  -j, --json-output          print JSON instead of the table\n"
    "      --output-format FMT    json or table\n"
    "      --env                  print the effective runtime configuration\n"
    "      --json                 with --env: print it as JSON (same as -j)\n"
    "  -h, --help                 print this help\n"
    "      --version              print the version\n"
    "\n"
    "Environment: NEURON_SIM_INSTANCE_TYPE, NEURON_SIM_ROOT, NEURON_LOGICAL_NC_CONFIG,\n"
    "NEURON_RT_VISIBLE_CORES and every NEURON_RT_* variable (see neuron-ls(1)).\n";

struct Flags {
  bool wide = false;
  bool show_all_procs = false;
  bool topology = false;
  bool json = false;
  bool env = false;
};

enum LongOnly { kOutputFormat = 256, kEnv, kJson, kVersion };

// Returns an exit code when the program should stop (help, version, usage).
int ParseFlags(int argc, char** argv, Flags* flags) {
  static const option kOptions[] = {
      {"wide", no_argument, nullptr, 'w'},
      {"show-all-procs", no_argument, nullptr, 'a'},
      {"topology", no_argument, nullptr, 't'},
      {"json-output", no_argument, nullptr, 'j'},
      {"output-format", required_argument, nullptr, kOutputFormat},
      {"env", no_argument, nullptr, kEnv},
      {"json", no_argument, nullptr, kJson},
      {"help", no_argument, nullptr, 'h'},
      {"version", no_argument, nullptr, kVersion},
      {nullptr, 0, nullptr, 0},
  };
  opterr = 0;  // our own one-line messages
  for (;;) {
    int index = 0;
    int c = getopt_long(argc, argv, ":watjh", kOptions, &index);
    if (c == -1) break;
    switch (c) {
      case 'w':
        flags->wide = true;
        break;
      case 'a':
        flags->show_all_procs = true;
        break;
      case 't':
        flags->topology = true;
        break;
      case 'j':
      case kJson:
        flags->json = true;
        break;
      case kOutputFormat: {
        const std::string format = optarg;
        if (format == "json") {
          flags->json = true;
        } else if (format == "table") {
          flags->json = false;
        } else {
          neuron::PrintError(kTool, "--output-format: '" + format +
                                        "' is not a format (use json or table)");
          return neuron::kExitUsage;
        }
        break;
      }
      case kEnv:
        flags->env = true;
        break;
      case 'h':
        std::fputs(kUsage, stdout);
        return neuron::kExitOk;
      case kVersion:
        neuron::PrintVersion(kTool);
        return neuron::kExitOk;
      case ':':
        neuron::PrintError(kTool, std::string(argv[optind - 1]) + ": missing value (see --help)");
        return neuron::kExitUsage;
      default: {
        std::string bad = optopt != 0 ? std::string("-") + static_cast<char>(optopt)
                                      : std::string(argv[optind - 1]);
        neuron::PrintError(kTool, "unknown option '" + bad + "' (see --help)");
        return neuron::kExitUsage;
      }
    }
  }
  if (optind < argc) {
    neuron::PrintError(kTool, std::string("unexpected argument '") + argv[optind] +
                                  "' (see --help)");
    return neuron::kExitUsage;
  }
  if (flags->topology && flags->json) {
    // Refused rather than ignored: the picture has no JSON form.
    neuron::PrintError(kTool, "-t draws the topology after the table; as JSON it is each "
                              "device's connected_to (drop -t, or -j)");
    return neuron::kExitUsage;
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (int code = ParseFlags(argc, argv, &flags); code >= 0) return code;

  const neuron::config::EnvLookup env = neuron::config::ProcessEnv();
  absl::StatusOr<neuron::device::ListingSource> source =
      neuron::device::ResolveListingSource(env);
  if (!source.ok()) {
    neuron::PrintError(kTool, std::string(source.status().message()));
    return neuron::kExitFailure;
  }
  neuron::config::Resolution resolution = neuron::config::Resolve(env, source->facts);

  if (flags.env) {
    // Not a runtime variable of ours but libfabric's: which provider the
    // collectives would take between hosts (FI_PROVIDER, else the best).
    const std::string provider = neuron::collectives::BestFabricProvider();
    resolution.values.push_back(
        {"FI_PROVIDER", provider.empty() ? "none (collectives across hosts use TCP)" : provider,
         env("FI_PROVIDER") ? neuron::config::Source::kEnv : neuron::config::Source::kDerived});
    const std::string report = flags.json ? neuron::config::FormatEnvJson(resolution)
                                          : neuron::config::FormatEnvTable(resolution);
    std::fputs(report.c_str(), stdout);
    if (!report.empty() && report.back() != '\n') std::fputc('\n', stdout);
    if (!resolution.ok()) {
      neuron::PrintError(kTool, resolution.init_error);
      return neuron::kExitFailure;
    }
    return neuron::kExitOk;
  }

  // A configuration the runtime would refuse at init is an error here too,
  // so neuron-ls can vet an environment before a job starts.
  if (!resolution.ok()) {
    neuron::PrintError(kTool, resolution.init_error);
    return neuron::kExitFailure;
  }
  for (const neuron::config::Diagnostic& d : resolution.diagnostics) {
    if (d.severity != neuron::config::Severity::kInfo) neuron::PrintWarning(kTool, d.message);
  }

  absl::StatusOr<neuron::device::LsReport> report = neuron::device::ListDevices(
      *source, resolution.config.logical_nc_config, flags.show_all_procs);
  if (!report.ok()) {
    neuron::PrintError(kTool, std::string(report.status().message()));
    return neuron::kExitFailure;
  }
  if (flags.json) {
    std::fputs(neuron::device::FormatLsJson(*report).c_str(), stdout);
    return neuron::kExitOk;
  }
  std::string out = neuron::device::FormatLsHeader(*report);
  out += neuron::device::FormatLsTable(*report, {.wide = flags.wide,
                                                 .show_all_procs = flags.show_all_procs});
  if (flags.topology) out += "\n\n" + neuron::device::FormatLsTopology(*report);
  std::fputs(out.c_str(), stdout);
  return neuron::kExitOk;
}
