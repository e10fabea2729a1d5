// One rank's part of a neuron-allreduce run: buffers, inputs, timing,
// checking, and (rank 0) the table or JSON.
#ifndef NEURON_TOOLS_NEURON_ALLREDUCE_BENCH_RUN_H_
#define NEURON_TOOLS_NEURON_ALLREDUCE_BENCH_RUN_H_

#include <vector>

#include "lib/collectives/communicator.h"
#include "tools/neuron-allreduce/bench_flags.h"
#include "tools/neuron-allreduce/bench_report.h"

namespace neuron::collectives {

struct RunEnv {
  bool execution_barrier = true;  // NEURON_RT_DISABLE_EXECUTION_BARRIER unset
  bool inject_error = false;      // NEURON_ALLREDUCE_INJECT_ERROR (tests)
  // The --plot-compare reports, read before the ranks start (so a bad one
  // fails at once, not after the sweep); rank 0 draws them.
  std::vector<ComparedReport> compared;
};

// Returns the exit status: 0, or 1 when a check failed or the run did.
int RunBenchRank(Communicator& comm, const BenchFlags& flags, const RunEnv& env);

// Arena bytes (CommOptions::arena_bytes) for the buffers of a run, so
// all-reduce peers read them in place; 0 when not worth it.
uint64_t BenchArenaBytes(const BenchFlags& flags, int world);

// The value rank `rank` contributes at element i (random-access, so any
// rank can compute every rank's input).
double BenchInputValue(const BenchFlags& flags, int rank, uint64_t i);

}  // namespace neuron::collectives

#endif  // NEURON_TOOLS_NEURON_ALLREDUCE_BENCH_RUN_H_
