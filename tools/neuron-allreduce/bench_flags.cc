#include "tools/neuron-allreduce/bench_flags.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/support/cli.h"
#include "lib/support/options.h"
#include "lib/support/parse.h"

namespace neuron::collectives {
namespace {

constexpr const char* kTool = "neuron-allreduce";

using cli::Arg;
using Status = absl::Status;

Status Invalid(std::string_view why) { return absl::InvalidArgumentError(std::string(why)); }

constexpr std::string_view kAlgorithms[] = {"auto", "ring", "rdh", "hier"};

bool IsCollectiveName(std::string_view s) {
  for (std::string_view c : {"allr", "all_reduce", "allg", "all_gather", "redsct",
                             "reduce_scatter", "sendrecv", "permute"}) {
    if (s == c) return true;
  }
  return false;
}

bool IsStatName(std::string_view s) {
  if (s == "avg") return true;
  int p = 0;
  return s.size() >= 2 && s[0] == 'p' &&
         absl::SimpleAtoi(std::string(s.substr(1)), &p) &&
         p >= 0 && p <= 100;
}

// A handler for a whole number from min to max.
template <typename T>
cli::Handler Count(uint64_t min, uint64_t max, T* out) {
  return [=](std::string_view v) -> Status {
    absl::StatusOr<uint64_t> n = ParseUnsigned(v, max);
    if (!n.ok() || *n < min) return Invalid(absl::StrCat("expected a whole number from ", min, " to ", max));
    *out = static_cast<T>(*n);
    return absl::OkStatus();
  };
}

cli::Handler Size(uint64_t* out) {
  return [=](std::string_view v) -> Status {
    absl::StatusOr<uint64_t> n = ParseSizeWithSuffix(v);
    if (!n.ok()) return n.status();
    *out = *n;
    return absl::OkStatus();
  };
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
  bool have_f = false, have_i = false;
  auto add_hosts = [flags](std::string_view word) -> Status {
    if (IsCollectiveName(word)) return Invalid("a collective, not a host (give the hosts first)");
    for (absl::string_view h : absl::StrSplit(absl::string_view(word.data(), word.size()), ',',
                                              absl::SkipEmpty())) {
      flags->hosts.emplace_back(h);
    }
    return absl::OkStatus();
  };
  const cli::Command command{
      .tool = kTool,
      .usage = "-r NRANKS [allr|allg|redsct|sendrecv|permute] [options]",
      .description = "Measure and check collectives across ranks (the flags of nccom-test).",
      .options = {
          {'r', "nworkers", Arg::kRequired, "N",
           "ranks (forked on this host; under mpirun/srun\nthe launcher's world size)",
           Count(1, 4096, &flags->nranks)},
          {'N', "nnodes", Arg::kRequired, "N", "hosts the ranks must span (checked)",
           Count(1, 4096, &flags->nnodes)},
          {'b', "minbytes", Arg::kRequired, "SIZE", "smallest size (default 32MB); kb/MB/gb suffixes",
           Size(&flags->min_bytes)},
          {'e', "maxbytes", Arg::kRequired, "SIZE", "largest size (default 32MB)",
           Size(&flags->max_bytes)},
          {'f', "stepfactor", Arg::kRequired, "F", "multiply the size by F each step",
           [&, flags](std::string_view v) -> Status {
             double f = 0;
             if (!absl::SimpleAtod(absl::string_view(v.data(), v.size()), &f) || !(f > 1.0) || f > 1e6) {
               return Invalid("expected a factor above 1");
             }
             flags->factor = f;
             have_f = true;
             return absl::OkStatus();
           }},
          {'i', "stepbytes", Arg::kRequired, "SIZE", "add SIZE each step (default (max-min)/10)",
           [&, flags](std::string_view v) -> Status {
             absl::StatusOr<uint64_t> n = ParseSizeWithSuffix(v);
             if (!n.ok()) return n.status();
             if (*n == 0) return Invalid("must be more than 0 bytes");
             flags->step = *n;
             have_i = true;
             return absl::OkStatus();
           }},
          {'n', "iters", Arg::kRequired, "N",
           "timed iterations (default: per size, about\n0.1 s of them, 20 to 10000)",
           Count(1, 1000000000, &flags->iters)},
          {'w', "warmup_iters", Arg::kRequired, "N", "untimed iterations first (default 5)",
           Count(0, 1000000000, &flags->warmup)},
          {'d', "datatype", Arg::kRequired, "T",
           "uint8 int8 uint16 int16 uint32 int32 uint64 int64\nfp16 bf16 fp32 fp64 (default uint8)",
           [flags](std::string_view v) -> Status {
             auto t = ParseDataType(std::string(v));
             if (!t) {
               return Invalid("expected uint8 int8 uint16 int16 uint32 int32 uint64 int64 fp16 "
                              "bf16 fp32 fp64");
             }
             flags->type = *t;
             return absl::OkStatus();
           },
           "uint8 int8 uint16 int16 uint32 int32 uint64 int64 fp16 bf16 fp32 fp64"},
          {0, "op", Arg::kRequired, "OP", "reduction: sum prod max min (default sum)",
           [flags](std::string_view v) -> Status {
             auto o = ParseReduceOp(std::string(v));
             if (!o) return Invalid("expected sum, prod, max or min");
             flags->reduce = *o;
             return absl::OkStatus();
           },
           "sum prod max min"},
          {'c', "check", Arg::kRequired, "MODE", "random or all_ones inputs, results checked",
           [flags](std::string_view v) -> Status {
             if (v == "random") flags->check = CheckMode::kRandom;
             else if (v == "all_ones") flags->check = CheckMode::kAllOnes;
             else return Invalid("expected random or all_ones");
             return absl::OkStatus();
           },
           "random all_ones"},
          {0, "seed", Arg::kRequired, "N", "seed of the random inputs (default 0)",
           Count(0, UINT64_MAX, &flags->seed)},
          {'t', "stats", Arg::kOneOrMore, "S",
           "time columns: avg p50 p90 p99 (any pNN;\ndefault avg p50)",
           [flags](std::string_view v) -> Status {
             for (absl::string_view s : absl::StrSplit(absl::string_view(v.data(), v.size()), ',')) {
               if (!IsStatName(std::string_view(s.data(), s.size()))) {
                 return Invalid("expected avg or pNN (p50, p90, p99)");
               }
               flags->stats.emplace_back(s);
             }
             return absl::OkStatus();
           },
           "avg p50 p90 p99", {}, IsStatName},
          {0, "report-to-json-file", Arg::kRequired, "F", "write the results as JSON to F",
           [flags](std::string_view v) { flags->json_file = std::string(v); return absl::OkStatus(); },
           "file"},
          {0, "json", Arg::kNone, "", "print the results as JSON instead of the table",
           [flags](std::string_view) { flags->json = true; return absl::OkStatus(); }},
          {0, "plot", Arg::kRequired, "F.svg", "draw busbw and time against size as SVG",
           [flags](std::string_view v) -> Status {
             if (v.empty() || v == "-") return Invalid("expected a file name for the SVG");
             flags->plot_file = std::string(v);
             return absl::OkStatus();
           },
           "file"},
          {0, "plot-compare", Arg::kRequired, "R.json",
           "with --plot: draw an earlier report (written by\n"
           "--report-to-json-file) beside it; repeatable",
           [flags](std::string_view v) {
             flags->plot_compare.emplace_back(v);
             return absl::OkStatus();
           },
           "file"},
          {0, "show-algorithm", Arg::kNone, "", "add the algorithm column",
           [flags](std::string_view) { flags->show_algorithm = true; return absl::OkStatus(); }},
          {0, "algorithm", Arg::kRequired, "A", "across hosts: auto ring rdh hier (default auto)",
           [flags](std::string_view v) -> Status {
             if (std::find(std::begin(kAlgorithms), std::end(kAlgorithms), v) == std::end(kAlgorithms)) {
               return Invalid("expected auto, ring, rdh or hier");
             }
             flags->algorithm = std::string(v);
             return absl::OkStatus();
           },
           "auto ring rdh hier"},
          {'s', "hosts", Arg::kOneOrMore, "H",
           "start the ranks on these hosts with mpirun,\n-r/N on each (needs NEURON_RT_ROOT_COMM_ID)",
           add_hosts, {}, {}, [](std::string_view w) { return !IsCollectiveName(w); }},
          {0, "hosts-file", Arg::kRequired, "F", "the same, one host a line",
           [flags](std::string_view v) { flags->hosts_file = std::string(v); return absl::OkStatus(); },
           "file"},
          {'q', "quiet", Arg::kNone, "", "no progress line on stderr",
           [flags](std::string_view) { flags->quiet = true; return absl::OkStatus(); }},
      },
      .notes =
          "GB/s in the table means 2^30 bytes per second, as nccom-test's.\n"
          "Multi-host: NEURON_RT_ROOT_COMM_ID=host:port of rank 0. See neuron-allreduce(1).",
      .max_operands = 1,
      .operand_complete = "allr allg redsct sendrecv permute",
  };
  std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  cli::ParsedArgs parsed;
  if (int rc = cli::ParseCommandLine(command, args, &parsed); rc >= 0) return rc;
  // The host flags are the launcher's: the ranks it starts get the rest.
  std::vector<bool> launcher_word(args.size(), false);
  for (const cli::Span& span : parsed.spans) {
    if (span.option->long_name != "hosts" && span.option->long_name != "hosts-file") continue;
    for (size_t k = span.first; k < span.first + span.count; ++k) launcher_word[k] = true;
  }
  for (size_t k = 0; k < args.size(); ++k) {
    if (!launcher_word[k]) flags->rank_args.push_back(args[k]);
  }
  if (have_f && have_i) return cli::UsageError(command, "-f and -i exclude each other");
  if (!flags->plot_compare.empty() && flags->plot_file.empty()) {
    return cli::UsageError(command,
                           "--plot-compare draws beside this run's picture: give --plot FILE.svg too");
  }
  if (flags->min_bytes > flags->max_bytes) {
    return cli::UsageError(command, absl::StrCat("-b ", flags->min_bytes, " is more than -e ",
                                                 flags->max_bytes));
  }
  if (flags->max_bytes > (uint64_t{1} << 36)) {
    return cli::UsageError(command, "-e is more than 64 GiB");
  }
  if (!parsed.operands.empty()) {
    const std::string& o = parsed.operands[0];
    if (o == "allr" || o == "all_reduce") flags->op = BenchOp::kAllReduce;
    else if (o == "allg" || o == "all_gather") flags->op = BenchOp::kAllGather;
    else if (o == "redsct" || o == "reduce_scatter") flags->op = BenchOp::kReduceScatter;
    else if (o == "sendrecv") flags->op = BenchOp::kSendRecv;
    else if (o == "permute") flags->op = BenchOp::kPermute;
    else {
      return cli::UsageError(command, absl::StrCat("unknown collective '", o,
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
