// What neuron-exec does once its flags are parsed, through libnrt.so.1's C
// API alone (lib/nrt_client): take the cores, load the NEFF on each, bind
// inputs (by HLO parameter name or #k; .npy files,
// inline tensors, bundles bound by key or pytree path, or random), execute (once, or warmup + iterations per
// core in parallel), then print, write, and check the results. The main
// only parses flags.
#ifndef NEURON_TOOLS_NEURON_EXEC_EXEC_COMMAND_H_
#define NEURON_TOOLS_NEURON_EXEC_EXEC_COMMAND_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/nrt_client/model_input.h"
#include "tools/neuron-exec/tensor_compare.h"

namespace neuron::exec_tool {

// "NAME=VALUE" as given to --input/--output/--expect.
struct NamedArg {
  std::string name;   // an HLO name or "#k"
  std::string value;  // a file, or an inline tensor for --input
};

// Splits at the first '='; an error names the flag and says what is expected.
absl::StatusOr<NamedArg> SplitNamedArg(std::string_view text, std::string_view flag);

struct ExecRequest {
  std::string neff_path;              // a NEFF or HLO module; "-" = stdin
  nrt_client::HloCompileFlags compile;            // --target, -O (HLO input only)
  std::vector<NamedArg> inputs;
  // -i FILE: bundles (.npz, safetensors) whose arrays bind to inputs by
  // key (name, #k or pytree path); a NAME=VALUE input overrides one.
  std::vector<std::string> bundles;
  // --list-inputs: print the inputs (number, name, path, shape, type) and stop.
  bool list_inputs = false;
  // --outputs: every result into one bundle (.npz or .safetensors).
  std::string outputs_bundle;
  bool random_inputs = false;
  uint64_t seed = 0;
  std::string output_dir;             // "" = none
  // --infeed: the values infeed instructions take, in order, one file per
  // array; --outfeed-dir: where outfeed values go (outfeed0.npy, ...).
  std::vector<std::string> infeeds;
  std::string outfeed_dir;            // "" = none
  std::vector<NamedArg> outputs;      // NAME=FILE or NAME=-
  bool print = false;
  std::vector<NamedArg> expects;
  Tolerance tolerance;
  std::optional<std::vector<int>> cores;  // unset: the first visible core
  bool benchmark = false;             // --iterations or --warmup given
  int64_t iterations = 1;
  int64_t warmup = 0;
  bool json = false;
  // --plot: the benchmark's latencies as an SVG picture ("" = none).
  std::string plot_path;
  // -r N: run N ranks of one job on this host (forked), HLO collectives
  // across them. 0: one process, or the rank mpirun/srun/NEURON_RANK says.
  int ranks = 0;
  bool quiet = false;                 // --quiet: no progress line
};

// Runs the request; prints results (text or JSON) on stdout and failures as
// one "neuron-exec: error: ..." line on stderr. Returns the exit status.
// In a job of several ranks every rank runs the NEFF on its own core (the
// k-th visible core of its host for local rank k); "%r" in file names
// becomes the rank, --output-dir gains a rank<k> folder, random inputs use
// seed + rank, and rank 0 alone prints.
int RunExec(const ExecRequest& request);

}  // namespace neuron::exec_tool

#endif  // NEURON_TOOLS_NEURON_EXEC_EXEC_COMMAND_H_
