// neuron-compile: compiles XLA HLO into a NEFF (see man/neuron-compile.1).
#include <string>
#include <vector>

#include "tools/neuron-compile/driver.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return neuron::compiler::RunNeuronCompile(args);
}
