#include "lib/collectives/bench_flags.h"

#include <getopt.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/support/cli.h"
#include "lib/support/parse.h"

namespace neuron::collectives {
namespace {

constexpr const char* kTool = "neuron-allreduce";

constexpr const char* kUsage =
    "usage: neuron-allreduce -r NRANKS [allr|allg|redsct|sendrecv|permute] [options]\n"
    "\n"
    "Measure and check collectives across ranks (the flags of nccom-test).\n"
    "\n"
    "  -r, --nworkers N            ranks (forked on this host; under mpirun/srun\n"
    "                              the launcher's world size)\n"
    "  -N, --nnodes N              hosts the ranks must span (checked)\n"
    "  -b, --minbytes SIZE         smallest size (default 32MB); kb/MB/gb suffixes\n"
    "  -e, --maxbytes SIZE         largest size (default 32MB)\n"
    "  -f, --stepfactor F          multiply the size by F each step\n"
    "  -i, --stepbytes SIZE        add SIZE each step (default (max-min)/10)\n"
    "  -n, --iters N               timed iterations (default: per size, about\n"
    "                              0.1 s of them, 20 to 10000)\n"
    "  -w, --warmup_iters N        untimed iterations first (default 5)\n"
    "  -d, --datatype T            uint8 int8 uint16 int16 uint32 int32 uint64 int64\n"
    "                              fp16 bf16 fp32 fp64 (default uint8)\n"
    "      --op OP                 reduction: sum prod max min (default sum)\n"
    "  -c, --check MODE            random or all_ones inputs, results checked\n"
    "      --seed N                seed of the random inputs (default 0)\n"
    "  -t, --stats S...            time columns: avg p50 p90 p99 (any pNN;\n"
    "                              default avg p50)\n"
    "      --report-to-json-file F write the results as JSON to F\n"
    "      --json                  print the results as JSON instead of the table\n"
    "      --plot F.svg            draw busbw and time against size as SVG\n"
    "      --plot-compare R.json   with --plot: draw an earlier report (written by\n"
    "                              --report-to-json-file) beside it; repeatable\n"
    "      --show-algorithm        add the algorithm column\n"
    "      --algorithm A           across hosts: auto ring rdh hier (default auto)\n"
    "  -s, --hosts H...            start the ranks on these hosts with mpirun,\n"
    "                              -r/N on each (needs NEURON_RT_ROOT_COMM_ID)\n"
    "      --hosts-file F          the same, one host a line\n"
    "  -h, --help                  print this help\n"
    "      --version               print the version\n"
    "\n"
    "GB/s in the table means 2^30 bytes per second, as nccom-test's.\n"
    "Multi-host: NEURON_RT_ROOT_COMM_ID=host:port of rank 0. See neuron-allreduce(1).\n";

enum LongOnly {
  kOp = 256, kSeed, kReport, kJson, kPlot, kPlotCompare, kShowAlgorithm, kAlgorithm, kVersion
};

constexpr std::string_view kAlgorithms[] = {"auto", "ring", "rdh", "hier"};

bool IsCollectiveName(std::string_view s) {
  for (std::string_view c : {"allr", "all_reduce", "allg", "all_gather", "redsct",
                             "reduce_scatter", "sendrecv", "permute"}) {
    if (s == c) return true;
  }
  return false;
}

// Takes --hosts (-s) H... and --hosts-file F out of args: the host flags
// are the launcher's, and the ranks it starts get the rest. --hosts takes
// the words up to the next option or collective name, each word one host
// or several joined by commas, as nccom-test's.
absl::Status TakeHostFlags(std::vector<std::string>* args, BenchFlags* flags) {
  std::vector<std::string> rest;
  const auto add_hosts = [&](const std::string& word) {
    for (absl::string_view h : absl::StrSplit(word, ',', absl::SkipEmpty())) {
      flags->hosts.emplace_back(h);
    }
  };
  for (size_t i = 0; i < args->size(); ++i) {
    const std::string& a = (*args)[i];
    if (a == "--") {
      rest.insert(rest.end(), args->begin() + static_cast<long>(i), args->end());
      break;
    }
    if (i == 0) {
      rest.push_back(a);
    } else if (a == "-s" || a == "--hosts") {
      size_t before = flags->hosts.size();
      while (i + 1 < args->size() && (*args)[i + 1].rfind('-', 0) != 0 &&
             !IsCollectiveName((*args)[i + 1])) {
        add_hosts((*args)[++i]);
      }
      if (flags->hosts.size() == before) {
        return absl::InvalidArgumentError(absl::StrCat(a, " needs one or more hosts"));
      }
    } else if (a.rfind("--hosts=", 0) == 0) {
      add_hosts(a.substr(8));
    } else if (a == "--hosts-file") {
      if (i + 1 >= args->size()) return absl::InvalidArgumentError("--hosts-file needs a file");
      flags->hosts_file = (*args)[++i];
    } else if (a.rfind("--hosts-file=", 0) == 0) {
      flags->hosts_file = a.substr(13);
    } else {
      rest.push_back(a);
    }
  }
  *args = std::move(rest);
  return absl::OkStatus();
}

bool IsStatName(std::string_view s) {
  if (s == "avg") return true;
  int p = 0;
  return s.size() >= 2 && s[0] == 'p' &&
         absl::SimpleAtoi(std::string(s.substr(1)), &p) &&
         p >= 0 && p <= 100;
}

absl::StatusOr<uint64_t> Size(const char* flag, const char* text) {
  auto v = ParseSizeWithSuffix(text);
  if (!v.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " '", text, "': ", v.status().message()));
  }
  return *v;
}

}  // namespace

const char* BenchOpName(BenchOp op) {
  switch (op) {
    case BenchOp::kAllReduce: return "allr";
    case BenchOp::kAllGather: return "allg";
    case BenchOp::kReduceScatter: return "redsct";
    case BenchOp::kSendRecv: return "sendrecv";
    case BenchOp::kPermute: return "permute";
  }
  return "?";
}

int ParseBenchFlags(int argc, char** argv, BenchFlags* flags) {
  std::vector<std::string> args(argv, argv + argc);
  if (absl::Status st = TakeHostFlags(&args, flags); !st.ok()) {
    return UsageError(kTool, std::string(st.message()));
  }
  if (!args.empty()) flags->rank_args.assign(args.begin() + 1, args.end());
  // -t/--stats takes several words: gather them into one argument first.
  std::vector<std::string> fixed;
  for (size_t i = 0; i < args.size(); ++i) {
    fixed.push_back(args[i]);
    if (i > 0 && (args[i] == "-t" || args[i] == "--stats")) {
      std::string joined;
      while (i + 1 < args.size() && IsStatName(args[i + 1])) {
        joined += (joined.empty() ? "" : ",") + args[++i];
      }
      if (!joined.empty()) fixed.push_back(joined);
    }
  }
  std::vector<char*> av;
  for (std::string& s : fixed) av.push_back(s.data());
  av.push_back(nullptr);
  int ac = static_cast<int>(fixed.size());

  static const option kOptions[] = {
      {"nworkers", required_argument, nullptr, 'r'},
      {"nnodes", required_argument, nullptr, 'N'},
      {"minbytes", required_argument, nullptr, 'b'},
      {"maxbytes", required_argument, nullptr, 'e'},
      {"stepfactor", required_argument, nullptr, 'f'},
      {"stepbytes", required_argument, nullptr, 'i'},
      {"iters", required_argument, nullptr, 'n'},
      {"warmup_iters", required_argument, nullptr, 'w'},
      {"datatype", required_argument, nullptr, 'd'},
      {"check", required_argument, nullptr, 'c'},
      {"stats", required_argument, nullptr, 't'},
      {"op", required_argument, nullptr, kOp},
      {"seed", required_argument, nullptr, kSeed},
      {"report-to-json-file", required_argument, nullptr, kReport},
      {"json", no_argument, nullptr, kJson},
      {"plot", required_argument, nullptr, kPlot},
      {"plot-compare", required_argument, nullptr, kPlotCompare},
      {"show-algorithm", no_argument, nullptr, kShowAlgorithm},
      {"algorithm", required_argument, nullptr, kAlgorithm},
      {"help", no_argument, nullptr, 'h'},
      {"version", no_argument, nullptr, kVersion},
      {nullptr, 0, nullptr, 0},
  };
  opterr = 0;
  optind = 1;
  bool have_f = false, have_i = false;
  for (;;) {
    int index = 0;
    const int c = getopt_long(ac, av.data(), ":r:N:b:e:f:i:n:w:d:c:t:h", kOptions, &index);
    if (c == -1) break;
    const char* arg = optarg;
    auto count = [&](const char* flag, uint64_t max, uint64_t min,
                     auto* out) -> bool {
      auto v = ParseUnsigned(arg, max);
      if (!v.ok() || *v < min) {
        UsageError(kTool, absl::StrCat(flag, " '", arg, "': expected a whole number from ",
                                       min, " to ", max));
        return false;
      }
      *out = static_cast<std::remove_pointer_t<decltype(out)>>(*v);
      return true;
    };
    switch (c) {
      case 'r': if (!count("-r", 4096, 1, &flags->nranks)) return kExitUsage; break;
      case 'N': if (!count("-N", 4096, 1, &flags->nnodes)) return kExitUsage; break;
      case 'n': if (!count("-n", 1000000000, 1, &flags->iters)) return kExitUsage; break;
      case 'w': if (!count("-w", 1000000000, 0, &flags->warmup)) return kExitUsage; break;
      case kSeed: if (!count("--seed", UINT64_MAX, 0, &flags->seed)) return kExitUsage; break;
      case 'b':
      case 'e':
      case 'i': {
        auto v = Size(c == 'b' ? "-b" : c == 'e' ? "-e" : "-i", arg);
        if (!v.ok()) return UsageError(kTool, std::string(v.status().message()));
        (c == 'b' ? flags->min_bytes : c == 'e' ? flags->max_bytes : flags->step) = *v;
        if (c == 'i') {
          if (*v == 0) return UsageError(kTool, "-i must be more than 0 bytes");
          have_i = true;
        }
        break;
      }
      case 'f': {
        double f = 0;
        if (!absl::SimpleAtod(arg, &f) || !(f > 1.0) || f > 1e6) {
          return UsageError(kTool, absl::StrCat("-f '", arg, "': expected a factor above 1"));
        }
        flags->factor = f;
        have_f = true;
        break;
      }
      case 'd': {
        auto t = ParseDataType(arg);
        if (!t) {
          return UsageError(kTool, absl::StrCat("-d '", arg,
                                                "': expected uint8 int8 uint16 int16 uint32 "
                                                "int32 uint64 int64 fp16 bf16 fp32 fp64"));
        }
        flags->type = *t;
        break;
      }
      case kOp: {
        auto o = ParseReduceOp(arg);
        if (!o) return UsageError(kTool, absl::StrCat("--op '", arg, "': expected sum, prod, max or min"));
        flags->reduce = *o;
        break;
      }
      case 'c': {
        const std::string_view m(arg);
        if (m == "random") flags->check = CheckMode::kRandom;
        else if (m == "all_ones") flags->check = CheckMode::kAllOnes;
        else return UsageError(kTool, absl::StrCat("-c '", arg, "': expected random or all_ones"));
        break;
      }
      case 't':
        for (const std::string& s : std::vector<std::string>(absl::StrSplit(arg, ','))) {
          if (!IsStatName(s)) {
            return UsageError(kTool, absl::StrCat("-t '", s, "': expected avg or pNN (p50, p90, p99)"));
          }
          flags->stats.emplace_back(s);
        }
        break;
      case kReport: flags->json_file = arg; break;
      case kJson: flags->json = true; break;
      case kPlot:
        if (std::string_view(arg).empty() || std::string_view(arg) == "-") {
          return UsageError(kTool, absl::StrCat("--plot '", arg, "': expected a file name for the SVG"));
        }
        flags->plot_file = arg;
        break;
      case kPlotCompare: flags->plot_compare.emplace_back(arg); break;
      case kShowAlgorithm: flags->show_algorithm = true; break;
      case kAlgorithm:
        if (std::find(std::begin(kAlgorithms), std::end(kAlgorithms), arg) ==
            std::end(kAlgorithms)) {
          return UsageError(kTool, absl::StrCat("--algorithm '", arg,
                                                "': expected auto, ring, rdh or hier"));
        }
        flags->algorithm = arg;
        break;
      case 'h': std::fputs(kUsage, stdout); return kExitOk;
      case kVersion: PrintVersion(kTool); return kExitOk;
      default:
        return GetoptUsageError(kTool, c, av.data());
    }
  }
  if (have_f && have_i) return UsageError(kTool, "-f and -i exclude each other");
  if (!flags->plot_compare.empty() && flags->plot_file.empty()) {
    return UsageError(kTool, "--plot-compare draws beside this run's picture: give --plot FILE.svg too");
  }
  if (flags->min_bytes > flags->max_bytes) {
    return UsageError(kTool, absl::StrCat("-b ", flags->min_bytes, " is more than -e ",
                                          flags->max_bytes));
  }
  if (flags->max_bytes > (uint64_t{1} << 36)) {
    return UsageError(kTool, "-e is more than 64 GiB");
  }
  int positional = 0;
  for (int i = optind; i < ac; ++i, ++positional) {
    const std::string o(av[i]);
    if (positional > 0) return UsageError(kTool, absl::StrCat("unexpected argument '", o, "'"));
    if (o == "allr" || o == "all_reduce") flags->op = BenchOp::kAllReduce;
    else if (o == "allg" || o == "all_gather") flags->op = BenchOp::kAllGather;
    else if (o == "redsct" || o == "reduce_scatter") flags->op = BenchOp::kReduceScatter;
    else if (o == "sendrecv") flags->op = BenchOp::kSendRecv;
    else if (o == "permute") flags->op = BenchOp::kPermute;
    else {
      return UsageError(kTool, absl::StrCat("unknown collective '", o,
                                            "': expected allr, allg, redsct, sendrecv or permute"));
    }
  }
  return -1;
}

int AutoIterations(double seconds_per_iteration) {
  if (!(seconds_per_iteration > 0)) return kAutoMaxIterations;
  const double n = std::ceil(kAutoIterationSeconds / seconds_per_iteration);
  return static_cast<int>(std::clamp<double>(n, kAutoMinIterations, kAutoMaxIterations));
}

std::vector<uint64_t> BenchSizes(const BenchFlags& f) {
  std::vector<uint64_t> sizes;
  uint64_t size = f.min_bytes;
  const uint64_t step = f.step ? f.step : std::max<uint64_t>(1, (f.max_bytes - f.min_bytes) / 10);
  for (;;) {
    sizes.push_back(size);
    if (size >= f.max_bytes || sizes.size() >= 4096) break;
    uint64_t next = f.factor > 0 ? static_cast<uint64_t>(static_cast<double>(size) * f.factor)
                                 : size + step;
    if (next <= size) next = size + 1;
    size = std::min(next, f.max_bytes);
  }
  return sizes;
}

}  // namespace neuron::collectives
