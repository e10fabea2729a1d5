// neuron-ls: lists the Neuron devices of this instance (or of the simulated
// one), the processes holding their cores, their interconnect, and with
// --env the effective runtime configuration. Works like the real neuron-ls.
#include <cstdio>
#include <string>

#include "lib/collectives/transport.h"
#include "lib/config/config.h"
#include "lib/support/cli.h"
#include "lib/support/options.h"
#include "tools/neuron-ls/env_report.h"
#include "tools/neuron-ls/ls_listing.h"

namespace {

constexpr const char* kTool = "neuron-ls";

using neuron::cli::Arg;

struct Flags {
  bool wide = false;
  bool show_all_procs = false;
  bool topology = false;
  bool json = false;
  bool env = false;
};

absl::Status Set(bool* flag, bool value = true) {
  *flag = value;
  return absl::OkStatus();
}

// Returns an exit code when the program should stop (help, version, usage).
int ParseFlags(int argc, char** argv, Flags* flags) {
  const neuron::cli::Command command{
      .tool = kTool,
      .usage = "[-w] [-a] [-t] [-j | --output-format json|table] [--env]",
      .description = "List Neuron devices, their NeuronCores and the processes using them.",
      .options = {
          {'w', "wide", Arg::kNone, "", "wider table (longer commands)",
           [=](std::string_view) { return Set(&flags->wide); }},
          {'a', "show-all-procs", Arg::kNone, "", "also list processes without a Neuron runtime",
           [=](std::string_view) { return Set(&flags->show_all_procs); }},
          {'t', "topology", Arg::kNone, "", "draw the device interconnect after the table",
           [=](std::string_view) { return Set(&flags->topology); }},
          {'j', "json-output", Arg::kNone, "", "print JSON instead of the table",
           [=](std::string_view) { return Set(&flags->json); }},
          {0, "output-format", Arg::kRequired, "FMT", "json or table",
           [=](std::string_view v) {
             if (v != "json" && v != "table") {
               return absl::InvalidArgumentError("not a format (use json or table)");
             }
             return Set(&flags->json, v == "json");
           },
           "json table"},
          {0, "env", Arg::kNone, "", "print the effective runtime configuration",
           [=](std::string_view) { return Set(&flags->env); }},
          {0, "json", Arg::kNone, "", "with --env: print it as JSON (same as -j)",
           [=](std::string_view) { return Set(&flags->json); }},
      },
      .notes =
          "Environment: NEURON_SIM_INSTANCE_TYPE, NEURON_SIM_ROOT, NEURON_LOGICAL_NC_CONFIG,\n"
          "NEURON_RT_VISIBLE_CORES and every NEURON_RT_* variable (see neuron-ls(1)).",
      .max_operands = 0,
  };
  neuron::cli::ParsedArgs parsed;
  if (int rc = neuron::cli::ParseCommandLine(command, argc, argv, &parsed); rc >= 0) return rc;
  if (flags->topology && flags->json) {
    // Refused rather than ignored: the picture has no JSON form.
    return neuron::cli::UsageError(command,
                                   "-t draws the topology after the table; as JSON it is each "
                                   "device's connected_to (drop -t, or -j)");
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (int code = ParseFlags(argc, argv, &flags); code >= 0) return code;

  const neuron::config::EnvLookup env = neuron::config::ProcessEnv();
  absl::StatusOr<neuron::ls::ListingSource> source =
      neuron::ls::ResolveListingSource(env);
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
    const std::string report = flags.json ? neuron::ls::FormatEnvJson(resolution)
                                          : neuron::ls::FormatEnvTable(resolution);
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

  absl::StatusOr<neuron::ls::LsReport> report = neuron::ls::ListDevices(
      *source, resolution.config.logical_nc_config, flags.show_all_procs);
  if (!report.ok()) {
    neuron::PrintError(kTool, std::string(report.status().message()));
    return neuron::kExitFailure;
  }
  // What a real instance would not tell (root-only files, a missing device
  // node): one line each, on stderr so the table and JSON stay clean.
  for (const std::string& note : report->notes) neuron::PrintWarning(kTool, note);
  if (flags.json) {
    std::fputs(neuron::ls::FormatLsJson(*report).c_str(), stdout);
    return neuron::kExitOk;
  }
  std::string out = neuron::ls::FormatLsHeader(*report);
  out += neuron::ls::FormatLsTable(*report, {.wide = flags.wide,
                                                 .show_all_procs = flags.show_all_procs});
  if (flags.topology) out += "\n\n" + neuron::ls::FormatLsTopology(*report);
  std::fputs(out.c_str(), stdout);
  return neuron::kExitOk;
}
