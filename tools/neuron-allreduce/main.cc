// neuron-allreduce: measures and checks collectives (all-reduce, all-gather,
// reduce-scatter, send/recv, permute) across ranks, with the flags of the
// real nccom-test. The logic is in bench_tool.cc beside it; the engine it
// measures is lib/collectives.
#include "tools/neuron-allreduce/bench_tool.h"

int main(int argc, char** argv) {
  return neuron::collectives::AllReduceToolMain(argc, argv);
}
