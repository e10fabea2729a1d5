// Where a rank's identity comes from: our own -r launcher (forked local
// ranks), Open MPI's mpirun, SLURM's srun, or explicit variables; and the
// communicator options the runtime configuration implies.
#ifndef NEURON_LIB_COLLECTIVES_LAUNCH_H_
#define NEURON_LIB_COLLECTIVES_LAUNCH_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "lib/collectives/communicator.h"
#include "lib/config/config.h"

namespace neuron::collectives {

struct Launch {
  int rank = 0;
  int world = 1;
  std::string via;  // the variables it came from, e.g. "NEURON_RANK"
};

// First of: NEURON_RANK + NEURON_WORLD_SIZE, OMPI_COMM_WORLD_RANK +
// OMPI_COMM_WORLD_SIZE, SLURM_PROCID + SLURM_NTASKS. nullopt when none is
// set; an error naming the variable when one is malformed or half set.
absl::StatusOr<std::optional<Launch>> LaunchFromEnv(const config::EnvLookup& env);

// Options from the resolved configuration, plus NEURON_HOST_ADDR.
CommOptions OptionsFromConfig(const config::RuntimeConfig& config,
                              const config::EnvLookup& env);

}  // namespace neuron::collectives

#endif  // NEURON_LIB_COLLECTIVES_LAUNCH_H_
