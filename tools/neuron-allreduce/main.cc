// neuron-allreduce: measures and checks collectives (all-reduce, all-gather,
// reduce-scatter, send/recv, permute) across ranks, with the flags of the
// real nccom-test. The logic lives in lib/collectives.
#include "lib/collectives/bench_tool.h"

int main(int argc, char** argv) {
  return neuron::collectives::AllReduceToolMain(argc, argv);
}
