// neuron-exec: runs a NEFF on the (simulated) NeuronCores with inputs from
// .npy files, inline values or a seeded random draw; prints, writes and
// checks the results; benchmarks latency and throughput. The work is in
// lib/runtime/cli_exec.cc; this file parses the command line.
#include <getopt.h>

#include <algorithm>

#include <cstdio>
#include <new>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/runtime/cli_exec.h"
#include "lib/support/cli.h"
#include "lib/support/parse.h"

namespace {

constexpr const char* kTool = "neuron-exec";

constexpr const char* kUsage =
    "usage: neuron-exec FILE|- [options]\n"
    "\n"
    "Run a NEFF on simulated NeuronCores.\n"
    "\n"
    "  -i, --input NAME=FILE.npy     an input by HLO parameter name or #k (repeatable)\n"
    "  -i, --input NAME=2x3xf32=1,2,3,4,5,6   an inline input (scalar: NAME=f32=3.5)\n"
    "      --random-inputs           random values for inputs not given\n"
    "      --seed N                  seed of --random-inputs (default 0)\n"
    "      --output-dir DIR          write out0.npy, out1.npy, ... and outputs.json\n"
    "  -o, --output NAME=FILE|-      write one result as .npy (repeatable)\n"
    "  -p, --print                   print the results\n"
    "      --expect NAME=FILE.npy    compare a result with expected values (repeatable)\n"
    "      --rtol R                  relative tolerance of --expect (default 1e-5)\n"
    "      --atol A                  absolute tolerance of --expect (default 1e-5)\n"
    "  -c, --cores LIST              NeuronCores to run on, one replica each (e.g. 0-3)\n"
    "  -r, --ranks N                 run N ranks of one job on this host (HLO collectives\n"
    "                                across them; %r in file names is the rank)\n"
    "  -n, --iterations N            benchmark: timed executions per core\n"
    "  -w, --warmup W                benchmark: untimed executions first (default:\n"
    "                                a tenth of N, 1 to 10)\n"
    "      --plot FILE.svg           benchmark: draw the latency distribution (CDF per\n"
    "                                core, p50/p90/p99 marked)\n"
    "  -j, --json                    print one JSON document\n"
    "  -h, --help                    print this help\n"
    "      --version                 print the version\n"
    "\n"
    "Honours NEURON_RT_* variables (NEURON_RT_VISIBLE_CORES, NEURON_RT_EXEC_TIMEOUT,\n"
    "NEURON_RT_NUMERICAL_ERRORS_VERBOSITY, NEURON_FAIL_ON_NAN, ...); see neuron-exec(1).\n";

enum LongOnly { kRandom = 256, kSeed, kOutputDir, kExpect, kRtol, kAtol, kPlot, kVersion };

int Usage(const std::string& message) { return neuron::UsageError(kTool, message); }

bool ParseDouble(const char* text, double* out) {
  char* end = nullptr;
  *out = std::strtod(text, &end);
  return end != text && *end == '\0' && *out >= 0;
}

}  // namespace

int main(int argc, char** argv) {
  static const option kOptions[] = {
      {"input", required_argument, nullptr, 'i'},
      {"random-inputs", no_argument, nullptr, kRandom},
      {"seed", required_argument, nullptr, kSeed},
      {"output-dir", required_argument, nullptr, kOutputDir},
      {"output", required_argument, nullptr, 'o'},
      {"print", no_argument, nullptr, 'p'},
      {"expect", required_argument, nullptr, kExpect},
      {"rtol", required_argument, nullptr, kRtol},
      {"atol", required_argument, nullptr, kAtol},
      {"cores", required_argument, nullptr, 'c'},
      {"ranks", required_argument, nullptr, 'r'},
      {"iterations", required_argument, nullptr, 'n'},
      {"warmup", required_argument, nullptr, 'w'},
      {"plot", required_argument, nullptr, kPlot},
      {"json", no_argument, nullptr, 'j'},
      {"help", no_argument, nullptr, 'h'},
      {"version", no_argument, nullptr, kVersion},
      {nullptr, 0, nullptr, 0},
  };
  neuron::runtime::ExecRequest request;
  bool warmup_given = false;
  opterr = 0;
  int opt;
  while ((opt = getopt_long(argc, argv, ":i:o:pc:r:n:w:jh", kOptions, nullptr)) != -1) {
    switch (opt) {
      case 'i':
      case 'o':
      case kExpect: {
        const char* flag = opt == 'i' ? "--input" : opt == 'o' ? "--output" : "--expect";
        absl::StatusOr<neuron::runtime::NamedArg> arg =
            neuron::runtime::SplitNamedArg(optarg, flag);
        if (!arg.ok()) return Usage(std::string(arg.status().message()));
        (opt == 'i' ? request.inputs : opt == 'o' ? request.outputs : request.expects)
            .push_back(*arg);
        break;
      }
      case kRandom:
        request.random_inputs = true;
        break;
      case kSeed: {
        absl::StatusOr<uint64_t> seed = neuron::ParseUnsigned(optarg);
        if (!seed.ok()) return Usage(absl::StrCat("--seed '", optarg, "': ", seed.status().message()));
        request.seed = *seed;
        break;
      }
      case kOutputDir:
        request.output_dir = optarg;
        break;
      case 'p':
        request.print = true;
        break;
      case kRtol:
      case kAtol: {
        double v;
        if (!ParseDouble(optarg, &v)) {
          return Usage(absl::StrCat(opt == kRtol ? "--rtol" : "--atol", " '", optarg,
                                    "': expected a non-negative number"));
        }
        (opt == kRtol ? request.tolerance.rtol : request.tolerance.atol) = v;
        break;
      }
      case 'c': {
        absl::StatusOr<std::vector<int>> cores = neuron::ParseRangeList(optarg);
        if (!cores.ok()) return Usage(absl::StrCat("--cores '", optarg, "': ", cores.status().message()));
        request.cores = *cores;
        break;
      }
      case 'r': {
        absl::StatusOr<uint64_t> n = neuron::ParseUnsigned(optarg, 4096);
        if (!n.ok() || *n == 0) return Usage(absl::StrCat("--ranks '", optarg, "': expected 1 to 4096"));
        request.ranks = static_cast<int>(*n);
        break;
      }
      case 'n':
      case 'w': {
        absl::StatusOr<uint64_t> n = neuron::ParseUnsigned(optarg, 1000000000);
        if (!n.ok() || (opt == 'n' && *n == 0)) {
          return Usage(absl::StrCat(opt == 'n' ? "--iterations" : "--warmup", " '", optarg,
                                    "': expected ", opt == 'n' ? "a positive" : "a non-negative",
                                    " integer"));
        }
        (opt == 'n' ? request.iterations : request.warmup) = static_cast<int64_t>(*n);
        if (opt == 'w') warmup_given = true;
        request.benchmark = true;
        break;
      }
      case kPlot:
        if (std::string(optarg).empty() || std::string(optarg) == "-") {
          return Usage(absl::StrCat("--plot '", optarg, "': expected a file name for the SVG"));
        }
        request.plot_path = optarg;
        break;
      case 'j':
        request.json = true;
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
  if (optind >= argc) return Usage("no NEFF given (a file, or - for stdin)");
  if (argc - optind > 1) return Usage(absl::StrCat("unexpected argument '", argv[optind + 1], "'"));
  request.neff_path = argv[optind];
  if (!request.plot_path.empty() && !request.benchmark) {
    return Usage("--plot draws the benchmark's latencies: give --iterations N too");
  }
  // The first executions carry one-off costs (first touch of memory, plan
  // caches): untimed by default, a tenth of the timed ones, 1 to 10.
  if (request.benchmark && !warmup_given) {
    request.warmup = std::clamp<int64_t>(request.iterations / 10, 1, 10);
  }
  return neuron::RunGuarded(kTool, [&] { return neuron::runtime::RunExec(request); });
}
