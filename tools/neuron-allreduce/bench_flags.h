// neuron-allreduce's command line (nccom-test's flags plus --op and --json).
#ifndef NEURON_TOOLS_NEURON_ALLREDUCE_BENCH_FLAGS_H_
#define NEURON_TOOLS_NEURON_ALLREDUCE_BENCH_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lib/collectives/dtype.h"

namespace neuron::collectives {

enum class BenchOp { kAllReduce, kAllGather, kReduceScatter, kSendRecv, kPermute };
const char* BenchOpName(BenchOp op);  // allr allg redsct sendrecv permute

enum class CheckMode { kNone, kRandom, kAllOnes };

struct BenchFlags {
  BenchOp op = BenchOp::kAllReduce;
  int nranks = 0;  // -r; 0: not given
  int nnodes = 0;  // -N; 0: not given
  uint64_t min_bytes = 32u << 20, max_bytes = 32u << 20;
  double factor = 0;   // -f; 0: use step
  uint64_t step = 0;   // -i; 0: (max-min)/10
  int iters = 0;  // -n; 0: chosen per size (AutoIterations)
  int warmup = 5;
  DataType type = DataType::kU8;
  ReduceOp reduce = ReduceOp::kSum;
  CheckMode check = CheckMode::kNone;
  uint64_t seed = 0;
  std::vector<std::string> stats;  // avg, p50, ... (empty: avg and p50)
  std::string json_file;
  bool json = false;
  // --plot: bus bandwidth and time against size as an SVG picture;
  // --plot-compare (repeatable): earlier reports drawn beside this run.
  std::string plot_file;
  std::vector<std::string> plot_compare;
  bool show_algorithm = false;
  bool quiet = false;  // --quiet: no progress line
  // The algorithm of groups that span hosts (CommOptions::algorithm).
  std::string algorithm = "auto";
  // --hosts / --hosts-file: start the ranks on these hosts (host_launch.h).
  std::vector<std::string> hosts;
  std::string hosts_file;
  // The arguments without the host flags: what each launched rank gets.
  std::vector<std::string> rank_args;
};

// Returns -1 to go on, else the exit status (help, version, usage error).
int ParseBenchFlags(int argc, char** argv, BenchFlags* flags);

// Timed iterations of one size when -n is not given: enough that the size
// runs for about kAutoIterationSeconds, at least nccom-test's 20 and at most
// 10000, from the time one iteration took (the slowest rank's estimate, so
// every rank runs the same count).
constexpr double kAutoIterationSeconds = 0.1;
constexpr int kAutoMinIterations = 20, kAutoMaxIterations = 10000;
int AutoIterations(double seconds_per_iteration);

// The sizes to run, from -b/-e/-f/-i.
std::vector<uint64_t> BenchSizes(const BenchFlags& flags);

}  // namespace neuron::collectives

#endif  // NEURON_TOOLS_NEURON_ALLREDUCE_BENCH_FLAGS_H_
