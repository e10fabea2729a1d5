// neuron-allreduce: nccom-test's command line over the collectives engine.
// Parses the flags, launches or joins the ranks, runs the sizes, prints the
// table (or JSON) and checks results. tools/neuron-allreduce/main.cc calls
// AllReduceToolMain.
#ifndef NEURON_TOOLS_NEURON_ALLREDUCE_BENCH_TOOL_H_
#define NEURON_TOOLS_NEURON_ALLREDUCE_BENCH_TOOL_H_

namespace neuron::collectives {

int AllReduceToolMain(int argc, char** argv);

}  // namespace neuron::collectives

#endif  // NEURON_TOOLS_NEURON_ALLREDUCE_BENCH_TOOL_H_
