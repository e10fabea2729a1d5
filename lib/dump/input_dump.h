// NEURON_RT_DBG_DUMP_INPUTS_ON_ERR: the inputs of a failing execution as
// .npy files plus manifest.json, in a directory of their own under
// NEURON_RT_DBG_INPUT_DUMP_DIRECTORY:
//   <dir>/<model>-<yyyymmdd-HHMMSS>-pid<pid>-lid<log id>/
//     manifest.json            what failed, the inputs, the replay command
//     input<k>-<name>.npy      input #k
// Replay: the manifest's "replay" command, i.e.
//   neuron-exec MODEL.neff --input '#0=.../input0-x.npy' ...
#ifndef NEURON_LIB_DUMP_INPUT_DUMP_H_
#define NEURON_LIB_DUMP_INPUT_DUMP_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "lib/dump/failure.h"
#include "lib/dump/identity.h"

namespace neuron::dump {

inline constexpr const char* kInputDumpFormat = "neuron-input-dump";

// Whether a failure with `status` is dumped: setting 0 never, -1 for every
// failure, else only that NRT_STATUS (then also for a numerical error that
// does not fail the execution).
bool WantsInputDump(int64_t setting, NRT_STATUS status, bool failed);

// Writes the dump; returns its directory.
absl::StatusOr<std::string> WriteInputDump(const std::string& base_dir,
                                           const FailedExecution& failure,
                                           const DumpIdentity& id);

// Quotes a word for a POSIX shell when it needs it.
std::string ShellQuote(const std::string& word);

}  // namespace neuron::dump

#endif  // NEURON_LIB_DUMP_INPUT_DUMP_H_
