// Starting the ranks of a job on this host (a tool's -r N): fork one
// process per rank, rank 0 holding the bootstrap listener, and wait for
// them all. Shared by neuron-allreduce and neuron-exec.
#ifndef NEURON_LIB_COLLECTIVES_LOCAL_LAUNCH_H_
#define NEURON_LIB_COLLECTIVES_LOCAL_LAUNCH_H_

#include <functional>
#include <string_view>

#include "lib/collectives/communicator.h"
#include "lib/config/config.h"

namespace neuron::collectives {

// Forks `nranks` processes; each runs run_rank(options) with its rank,
// the world and the bootstrap address filled in, and exits with its
// result. options.root_comm_id, when set, is where rank 0 listens (else a
// free loopback port). A rank never outlives the launcher. Returns 0 when
// every rank exited 0, else 1 (a rank killed by a signal is reported as
// one error line naming it).
int ForkLocalRanks(std::string_view tool, int nranks, CommOptions options,
                   const std::function<int(const CommOptions&)>& run_rank);

// Which of this host's ranks this process is: NEURON_LOCAL_RANK, Open MPI's
// OMPI_COMM_WORLD_LOCAL_RANK or SLURM_LOCALID; `rank` when none is set.
int LocalRankFromEnv(const config::EnvLookup& env, int rank);

}  // namespace neuron::collectives

#endif  // NEURON_LIB_COLLECTIVES_LOCAL_LAUNCH_H_
