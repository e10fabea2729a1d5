// The runtime's hand-off to neuron-dump when NEURON_RT_S3_CORE_DUMP_PREFIX
// is set: the runtime never uploads; it runs neuron-dump with the real
// runtime's arguments (reference: core-dump deep dive)
//   --neff-name N --neff-uuid U --date-time yyyy-mm-dd-HH-MM --pid P
//   --tid T --log-id L --instance-id I --cluster-id C --error-location F
//   --error-code S --local-output-dir DIR --s3-output-prefix S3URI
// and waits for it, so either side can be swapped for the real one.
#ifndef NEURON_LIB_DUMP_HANDOFF_H_
#define NEURON_LIB_DUMP_HANDOFF_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/dump/failure.h"
#include "lib/dump/identity.h"

namespace neuron::dump {

// Set in neuron-dump's environment when the runtime staged the dump in a
// temporary directory (NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY=""): neuron-dump
// removes it once the upload is confirmed.
inline constexpr const char* kStagedEnv = "NEURON_DUMP_STAGED_LOCAL_DIR";

std::vector<std::string> HandoffArgs(const FailedExecution& failure, const DumpIdentity& id,
                                     const std::string& local_dir, const std::string& s3_prefix);

// neuron-dump beside the running executable, else
// /opt/aws/neuron/bin/neuron-dump, else on PATH; "" when none.
std::string FindNeuronDump();

// Runs `program` with `args` (and `extra_env` added to this process's
// environment), waits; an error says how it failed or exited.
absl::Status RunProgram(const std::string& program, const std::vector<std::string>& args,
                        const std::vector<std::string>& extra_env);

}  // namespace neuron::dump

#endif  // NEURON_LIB_DUMP_HANDOFF_H_
