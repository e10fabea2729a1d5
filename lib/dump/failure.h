// What the runtime knows about a failing execution, for the dumps: the
// model and its NEFF, the status, the program position, and the tensors
// bound to it. Filled by lib/runtime; lib/dump does not depend on it.
#ifndef NEURON_LIB_DUMP_FAILURE_H_
#define NEURON_LIB_DUMP_FAILURE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "neuron/nrt_status.h"

namespace neuron::dump {

struct DumpTensor {
  std::string role;           // "input" or "output"
  std::string name;           // HLO parameter / result name
  int position = 0;           // #k
  std::string dtype;          // HLO element type name, e.g. "f32"
  std::vector<int64_t> dims;
  const uint8_t* data = nullptr;
  uint64_t bytes = 0;
  std::string npy;            // .npy encoding (inputs), readable by neuron-exec
};

struct FailedExecution {
  std::string model;
  std::string neff_name, neff_uuid, neff_path;  // path "" when loaded from bytes
  std::string neff_build_version;
  int device = 0, core = 0;
  NRT_STATUS status = NRT_FAILURE;
  std::string error;                       // the one-line message
  std::string error_location = "nrt_execute";
  uint64_t execution_index = 0;            // of this model, from 0
  // Program position: the steps open when it failed, outermost first, and
  // how many steps had started.
  std::vector<std::string> program_stack;
  uint64_t steps_started = 0;
  bool program_completed = false;
  std::string first_nonfinite_instruction;
  std::vector<DumpTensor> tensors;
  // VAR=VALUE settings the failure depends on (NEURON_FAIL_ON_NAN=1, ...),
  // put in front of the replay command.
  std::vector<std::string> replay_env;
};

}  // namespace neuron::dump

#endif  // NEURON_LIB_DUMP_FAILURE_H_
