// neuron-exec: runs a NEFF on the (simulated) NeuronCores with inputs from
// .npy files, inline values or a seeded random draw; prints, writes and
// checks the results; benchmarks latency and throughput. The work is in
// exec_command.cc; this file is the option table.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/config/value_parsers.h"
#include "lib/nrt_client/model_input.h"
#include "lib/nrt_client/runtime_library.h"
#include "lib/support/cli.h"
#include "lib/support/options.h"
#include "lib/support/parse.h"
#include "lib/tensorfile/bundle_writer.h"
#include "tools/neuron-exec/exec_command.h"

namespace {

constexpr const char* kTool = "neuron-exec";

using neuron::cli::Arg;
using Status = absl::Status;

Status Invalid(std::string_view why) { return absl::InvalidArgumentError(std::string(why)); }

Status ParseTolerance(std::string_view text, double* out) {
  const std::string s(text);
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || !(*out >= 0)) return Invalid("expected a non-negative number");
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  neuron::exec_tool::ExecRequest request;
  bool warmup_given = false;
  auto named = [](std::vector<neuron::exec_tool::NamedArg>* list, const char* flag) {
    return [list, flag](std::string_view v) -> Status {
      absl::StatusOr<neuron::exec_tool::NamedArg> arg = neuron::exec_tool::SplitNamedArg(v, flag);
      if (!arg.ok()) return arg.status();
      list->push_back(*arg);
      return absl::OkStatus();
    };
  };
  auto count = [&](int64_t* out, bool positive, bool warmup) {
    return [&request, &warmup_given, out, positive, warmup](std::string_view v) -> Status {
      absl::StatusOr<uint64_t> n = neuron::ParseUnsigned(v, 1000000000);
      if (!n.ok() || (positive && *n == 0)) {
        return Invalid(positive ? "expected a positive integer" : "expected a non-negative integer");
      }
      *out = static_cast<int64_t>(*n);
      request.benchmark = true;
      if (warmup) warmup_given = true;
      return absl::OkStatus();
    };
  };
  neuron::cli::Command command{
      .tool = kTool,
      .usage = "FILE|- [options]",
      .description =
          "Run a NEFF on simulated NeuronCores. FILE may also be an HLO module (text\n"
          "or HloModuleProto), compiled in memory as neuron-compile would.",
      .options = {
          {'i', "input", Arg::kRequired, "NAME=VALUE|FILE",
           "an input by HLO parameter name or #k (repeatable):\n"
           "NAME=FILE.npy, or inline NAME=2x3xf32=1,2,3,4,5,6\n"
           "(a scalar: NAME=f32=3.5); or a bundle FILE.npz or\n"
           "FILE.safetensors whose arrays bind by name, #k or\n"
           "pytree path (- reads one from stdin)",
           [&](std::string_view v) -> Status {
             // No '=' (or a file of that name): a bundle.
             std::error_code error;
             if (v.find('=') == std::string_view::npos || std::filesystem::is_regular_file(v, error)) {
               if (v != "-" && !std::filesystem::exists(v, error)) {
                 return Invalid("expected NAME=VALUE, or a bundle file (no such file)");
               }
               request.bundles.emplace_back(v);
               return absl::OkStatus();
             }
             return named(&request.inputs, "--input")(v);
           },
           "file"},
          {0, "list-inputs", Arg::kNone, "",
           "print each input's number, name, pytree path,\n"
           "shape and type (what a bundle must hold), and stop",
           [&](std::string_view) { request.list_inputs = true; return absl::OkStatus(); }},
          {0, "random-inputs", Arg::kNone, "", "random values for inputs not given",
           [&](std::string_view) { request.random_inputs = true; return absl::OkStatus(); }},
          {0, "seed", Arg::kRequired, "N", "seed of --random-inputs (default 0)",
           [&](std::string_view v) -> Status {
             absl::StatusOr<uint64_t> seed = neuron::ParseUnsigned(v);
             if (!seed.ok()) return seed.status();
             request.seed = *seed;
             return absl::OkStatus();
           }},
          {0, "output-dir", Arg::kRequired, "DIR", "write out0.npy, out1.npy, ... and outputs.json",
           [&](std::string_view v) { request.output_dir = std::string(v); return absl::OkStatus(); },
           "dir"},
          {0, "infeed", Arg::kRequired, "FILE.npy",
           "a value for the model's infeed, taken in order (repeatable)",
           [&](std::string_view v) { request.infeeds.emplace_back(v); return absl::OkStatus(); },
           "file"},
          {0, "outfeed-dir", Arg::kRequired, "DIR", "write the model's outfeed values as outfeed0.npy, ...",
           [&](std::string_view v) { request.outfeed_dir = std::string(v); return absl::OkStatus(); },
           "dir"},
          {0, "outputs", Arg::kRequired, "FILE",
           "write every result into one bundle, FILE.npz or\n"
           "FILE.safetensors (- : safetensors on stdout), keyed\n"
           "out0, out1, ...",
           [&](std::string_view v) -> Status {
             if (v != "-" && !neuron::tensorfile::BundleFormatOfName(v)) {
               return Invalid("expected a file named .npz or .safetensors, or -");
             }
             request.outputs_bundle = std::string(v);
             return absl::OkStatus();
           },
           "file"},
          {'o', "output", Arg::kRequired, "NAME=FILE|-", "write one result as .npy (repeatable)",
           named(&request.outputs, "--output"), "file"},
          {'p', "print", Arg::kNone, "", "print the results",
           [&](std::string_view) { request.print = true; return absl::OkStatus(); }},
          {0, "expect", Arg::kRequired, "NAME=FILE.npy",
           "compare a result with expected values (repeatable)",
           named(&request.expects, "--expect"), "file"},
          {0, "rtol", Arg::kRequired, "R", "relative tolerance of --expect (default 1e-5)",
           [&](std::string_view v) { return ParseTolerance(v, &request.tolerance.rtol); }},
          {0, "atol", Arg::kRequired, "A", "absolute tolerance of --expect (default 1e-5)",
           [&](std::string_view v) { return ParseTolerance(v, &request.tolerance.atol); }},
          {'c', "cores", Arg::kRequired, "LIST", "NeuronCores to run on, one replica each (e.g. 0-3)",
           [&](std::string_view v) -> Status {
             absl::StatusOr<std::vector<int>> cores = neuron::ParseRangeList(v);
             if (!cores.ok()) return cores.status();
             request.cores = *cores;
             return absl::OkStatus();
           }},
          {'r', "ranks", Arg::kRequired, "N",
           "run N ranks of one job on this host (HLO collectives\n"
           "across them; %r in file names is the rank)",
           [&](std::string_view v) -> Status {
             absl::StatusOr<uint64_t> n = neuron::ParseUnsigned(v, 4096);
             if (!n.ok() || *n == 0) return Invalid("expected 1 to 4096");
             request.ranks = static_cast<int>(*n);
             return absl::OkStatus();
           }},
          {'n', "iterations", Arg::kRequired, "N", "benchmark: timed executions per core",
           count(&request.iterations, true, false)},
          {'w', "warmup", Arg::kRequired, "W",
           "benchmark: untimed executions first (default:\na tenth of N, 1 to 10)",
           count(&request.warmup, false, true)},
          {0, "plot", Arg::kRequired, "FILE.svg",
           "benchmark: draw the latency distribution (CDF per\n"
           "core, p50/p90/p99 marked)",
           [&](std::string_view v) -> Status {
             if (v.empty() || v == "-") return Invalid("expected a file name for the SVG");
             request.plot_path = std::string(v);
             return absl::OkStatus();
           },
           "file"},
          {'j', "json", Arg::kNone, "", "print one JSON document",
           [&](std::string_view) { request.json = true; return absl::OkStatus(); }},
          {'q', "quiet", Arg::kNone, "", "no progress line on stderr",
           [&](std::string_view) { request.quiet = true; return absl::OkStatus(); }},
          {0, "profile-format", Arg::kRequired, "F",
           "profiles (NEURON_RT_INSPECT_ENABLE) as json or\n"
           "pftrace (Perfetto); sets NEURON_SIM_PROFILE_FORMAT",
           [&](std::string_view v) -> Status {
             // The runtime (and every rank of -r) reads the variable.
             std::optional<neuron::config::ProfileFormat> format =
                 neuron::config::ParseProfileFormat(std::string(v));
             if (!format) {
               return Invalid(absl::StrCat("expected ", neuron::config::kAcceptedProfileFormat));
             }
             setenv("NEURON_SIM_PROFILE_FORMAT", neuron::config::ProfileFormatName(*format), 1);
             return absl::OkStatus();
           },
           "json pftrace"},
      },
      .notes =
          "Honours NEURON_RT_* variables (NEURON_RT_VISIBLE_CORES, NEURON_RT_EXEC_TIMEOUT,\n"
          "NEURON_RT_NUMERICAL_ERRORS_VERBOSITY, NEURON_FAIL_ON_NAN, ...); see neuron-exec(1).",
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
  if (!request.plot_path.empty() && !request.benchmark) {
    return neuron::cli::UsageError(command,
                                   "--plot draws the benchmark's latencies: give --iterations N too");
  }
  // The first executions carry one-off costs (first touch of memory, plan
  // caches): untimed by default, a tenth of the timed ones, 1 to 10.
  if (request.benchmark && !warmup_given) {
    request.warmup = std::clamp<int64_t>(request.iterations / 10, 1, 10);
  }
  return neuron::RunGuarded(kTool, [&] { return neuron::exec_tool::RunExec(request); });
}
