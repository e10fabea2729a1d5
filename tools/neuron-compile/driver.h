// The neuron-compile command: argument handling, input/output files, the
// compile cache, the log file and error reporting around the in-process
// compiler. tools/neuron-compile/main.cc only calls RunNeuronCompile.
#ifndef NEURON_TOOLS_NEURON_COMPILE_DRIVER_H_
#define NEURON_TOOLS_NEURON_COMPILE_DRIVER_H_

#include <string>
#include <vector>

namespace neuron::compiler {

// Runs the tool with `args` (argv without the program name), reading
// NEURON_CC_FLAGS and NEURON_COMPILE_CACHE_URL from the environment.
// Returns the exit status: 0 success, 1 compile error, 2 usage error.
int RunNeuronCompile(const std::vector<std::string>& args);

}  // namespace neuron::compiler

#endif  // NEURON_TOOLS_NEURON_COMPILE_DRIVER_H_
