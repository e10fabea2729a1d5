#include "lib/collectives/local_launch.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "lib/collectives/job_secret.h"
#include "lib/collectives/net.h"
#include "lib/support/cli.h"
#include "lib/support/parse.h"

namespace neuron::collectives {

int ForkLocalRanks(std::string_view tool, int nranks, CommOptions options,
                   const std::function<int(const CommOptions&)>& run_rank) {
  absl::StatusOr<sockaddr_in> addr = options.root_comm_id.empty()
                                         ? net::ParseHost("127.0.0.1")
                                         : net::ParseHostPort(options.root_comm_id);
  if (!addr.ok()) {
    PrintError(tool, absl::StrCat("NEURON_RT_ROOT_COMM_ID: ", addr.status().message()));
    return kExitFailure;
  }
  // Rank 0 inherits the listener, so no other process can take the port
  // between choosing it and bootstrapping.
  absl::StatusOr<int> listen_fd = net::Listen(*addr);
  if (!listen_fd.ok()) {
    PrintError(tool, absl::StrCat("NEURON_RT_ROOT_COMM_ID: ", listen_fd.status().message()));
    return kExitFailure;
  }
  options.root_comm_id = net::FormatAddr(net::LocalAddr(*listen_fd));
  options.world = nranks;
  // The ranks' own secret when the user gave none: no other process can
  // join them. In the environment too, for what reads it there (the
  // point-to-point engine).
  if (options.secret.empty() && options.secret_error.empty() && getenv(kJobSecretVar) == nullptr &&
      getenv(kJobSecretFileVar) == nullptr) {
    options.secret = NewJobSecret();
    setenv(kJobSecretVar, options.secret.c_str(), 1);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = getpid();
  std::map<pid_t, int> children;
  for (int r = 0; r < nranks; ++r) {
    const pid_t pid = fork();
    if (pid < 0) {
      PrintError(tool, absl::StrCat("cannot start rank ", r, ": ", std::strerror(errno)));
      for (auto& [p, rank] : children) kill(p, SIGKILL);
      break;
    }
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the launcher
      if (getppid() != parent) _exit(kExitFailure);
      options.rank = r;
      options.listen_fd = r == 0 ? *listen_fd : -1;
      if (r != 0) close(*listen_fd);
      const int rc = RunGuarded(tool, [&] { return run_rank(options); });
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(rc);
    }
    children[pid] = r;
  }
  close(*listen_fd);
  int worst = children.size() == static_cast<size_t>(nranks) ? kExitOk : kExitFailure;
  while (!children.empty()) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    auto it = children.find(pid);
    if (it == children.end()) continue;
    if (WIFSIGNALED(status)) {
      PrintError(tool, absl::StrCat("rank ", it->second, " (pid ", pid, ") was killed by signal ",
                                    WTERMSIG(status)));
      worst = kExitFailure;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
      worst = kExitFailure;
    }
    children.erase(it);
  }
  return worst;
}

int LocalRankFromEnv(const config::EnvLookup& env, int rank) {
  for (const char* name : {"NEURON_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"}) {
    if (std::optional<std::string> v = env(name)) {
      absl::StatusOr<uint64_t> n = ParseUnsigned(*v, 1u << 20);
      if (n.ok()) return static_cast<int>(*n);
    }
  }
  return rank;
}

}  // namespace neuron::collectives
