// nccom-test's multi-host mode (--hosts, --hosts-file): a process that is not
// yet a rank re-executes itself under Open MPI's mpirun, R/N ranks on each
// of N hosts. Here: reading hosts files, building mpirun's command line,
// and the exec itself.
#ifndef NEURON_TOOLS_NEURON_ALLREDUCE_HOST_LAUNCH_H_
#define NEURON_TOOLS_NEURON_ALLREDUCE_HOST_LAUNCH_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/config/config.h"

namespace neuron::collectives {

// The host names of a hosts file: one host per line, as nccom-test's, or an
// MPI hostfile's "host slots=N" lines (slots=, max_slots= are checked as
// numbers and otherwise ignored: ranks are spread evenly). '#' starts a
// comment; blank lines are skipped. `name` prefixes errors, which name the
// line. A host listed twice or a file without hosts is an error.
absl::StatusOr<std::vector<std::string>> ParseHostsFile(std::string_view text,
                                                        std::string_view name);

// ParseHostsFile of the file at path.
absl::StatusOr<std::vector<std::string>> ReadHostsFile(const std::string& path);

struct HostLaunch {
  std::vector<std::string> hosts;
  int nranks = 0;  // -r: ranks over all hosts (0: not given)
  int nnodes = 0;  // -N (0: not given)
  std::string self;                    // the executable every host runs
  std::vector<std::string> rank_args;  // its arguments, without the host flags
};

// mpirun's argv for the launch:
//   $NEURON_MPIRUN (default mpirun) $NEURON_MPIRUN_ARGS (split at
//   whitespace) -np R --host h1:R/N,...,hN:R/N -x VAR... self rank_args...
// where VAR is every NEURON_* variable in env_names except those that are
// one process's own (NEURON_HOST_ADDR, NEURON_RANK, NEURON_WORLD_SIZE,
// NEURON_LOCAL_RANK) and the NEURON_MPIRUN ones. InvalidArgument for a
// command-line mistake (no -r, -r not a multiple of the hosts, -N that
// disagrees); FailedPrecondition when NEURON_RT_ROOT_COMM_ID is not set.
absl::StatusOr<std::vector<std::string>> MpirunArgv(
    const HostLaunch& launch, const config::EnvLookup& env,
    const std::vector<std::string>& env_names);

// The names of this process's environment variables.
std::vector<std::string> EnvironmentNames();

// Replaces this process with argv (searched in PATH); returns only the
// error when that fails.
absl::Status ExecArgv(const std::vector<std::string>& argv);

// A tool's whole --hosts launch: the hosts of `launch` or else of
// hosts_file, this executable, mpirun's argv, the exec. Returns only when
// it fails: the exit status, with the error printed (2 for a command-line
// mistake, 1 otherwise).
int RunOnHosts(std::string_view tool, HostLaunch launch, const std::string& hosts_file,
               const config::EnvLookup& env);

}  // namespace neuron::collectives

#endif  // NEURON_TOOLS_NEURON_ALLREDUCE_HOST_LAUNCH_H_
