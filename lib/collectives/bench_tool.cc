// neuron-allreduce's entry: flags, configuration, and the launch: -r forks
// the ranks on this host; under mpirun, srun or NEURON_RANK this process is
// one rank of the launcher's job.
#include "lib/collectives/bench_tool.h"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/collectives/bench_flags.h"
#include "lib/collectives/bench_run.h"
#include "lib/collectives/launch.h"
#include "lib/collectives/net.h"
#include "lib/device/instance_catalog.h"
#include "lib/support/cli.h"

namespace neuron::collectives {
namespace {

constexpr const char* kTool = "neuron-allreduce";

int RunRank(const BenchFlags& flags, CommOptions options, const RunEnv& env) {
  options.arena_bytes = BenchArenaBytes(flags, options.world);
  auto comm = Communicator::Create(options);
  if (!comm.ok()) {
    PrintError(kTool, absl::StrCat("rank ", options.rank, ": ", comm.status().message()));
    return kExitFailure;
  }
  if (flags.nnodes > 0 && (*comm)->hosts() != flags.nnodes) {
    PrintError(kTool, absl::StrCat("rank ", options.rank, ": -N ", flags.nnodes,
                                   " but the ranks run on ", (*comm)->hosts(), " host(s)"));
    return kExitFailure;
  }
  return RunBenchRank(**comm, flags, env);
}

// Pins forked rank r to the r-th CPU this process may use, as mpirun's
// --bind-to core does, when there are enough CPUs: two ranks left to
// migrate can land on one CPU and then progress only at context switches.
void PinRank(int r, int nranks) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  }
  if (static_cast<int>(cpus.size()) < nranks) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpus[static_cast<size_t>(r)], &one);
  sched_setaffinity(0, sizeof(one), &one);
}

// Forks the ranks; rank 0 inherits the bootstrap listener so no port can be
// taken in between. Returns the worst exit status.
int LaunchLocal(const BenchFlags& flags, CommOptions options, const RunEnv& env) {
  sockaddr_in addr{};
  if (options.root_comm_id.empty()) {
    addr = *net::ParseHost("127.0.0.1");
  } else {
    auto a = net::ParseHostPort(options.root_comm_id);
    if (!a.ok()) {
      PrintError(kTool, absl::StrCat("NEURON_RT_ROOT_COMM_ID: ", a.status().message()));
      return kExitFailure;
    }
    addr = *a;
  }
  auto listen_fd = net::Listen(addr);
  if (!listen_fd.ok()) {
    PrintError(kTool, absl::StrCat("NEURON_RT_ROOT_COMM_ID: ", listen_fd.status().message()));
    return kExitFailure;
  }
  options.root_comm_id = net::FormatAddr(net::LocalAddr(*listen_fd));
  options.world = flags.nranks;
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = getpid();
  std::map<pid_t, int> children;
  for (int r = 0; r < flags.nranks; ++r) {
    const pid_t pid = fork();
    if (pid < 0) {
      PrintError(kTool, absl::StrCat("cannot start rank ", r, ": ", std::strerror(errno)));
      for (auto& [p, rank] : children) kill(p, SIGKILL);
      break;
    }
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the launcher
      if (getppid() != parent) _exit(kExitFailure);
      options.rank = r;
      options.listen_fd = r == 0 ? *listen_fd : -1;
      if (options.cpu_affinity.empty()) PinRank(r, flags.nranks);
      if (r != 0) close(*listen_fd);
      const int rc = RunGuarded(kTool, [&] { return RunRank(flags, options, env); });
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(rc);
    }
    children[pid] = r;
  }
  close(*listen_fd);
  int worst = children.size() == static_cast<size_t>(flags.nranks) ? kExitOk : kExitFailure;
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
      PrintError(kTool, absl::StrCat("rank ", it->second, " (pid ", pid,
                                     ") was killed by signal ", WTERMSIG(status)));
      worst = kExitFailure;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
      worst = kExitFailure;
    }
    children.erase(it);
  }
  return worst;
}

}  // namespace

int AllReduceToolMain(int argc, char** argv) {
  BenchFlags flags;
  const int rc = ParseBenchFlags(argc, argv, &flags);
  if (rc >= 0) return rc;
  const config::EnvLookup env = config::ProcessEnv();
  auto launch = LaunchFromEnv(env);
  if (!launch.ok()) return UsageError(kTool, std::string(launch.status().message()));
  if (!launch->has_value() && flags.nranks == 0) {
    return UsageError(kTool,
                      "-r NRANKS is required (or start the ranks with mpirun, srun, or "
                      "NEURON_RANK and NEURON_WORLD_SIZE)");
  }
  if (launch->has_value() && flags.nranks != 0 && flags.nranks != (*launch)->world) {
    return UsageError(kTool, absl::StrCat("-r ", flags.nranks, " but ", (*launch)->via,
                                          " says the world has ", (*launch)->world,
                                          " ranks"));
  }
  if (!launch->has_value() && flags.nnodes > 1) {
    return UsageError(kTool, absl::StrCat("-N ", flags.nnodes,
                                          ": -r forks ranks on this host only; start one "
                                          "process per rank with mpirun or srun across hosts"));
  }
  auto instance = device::SelectInstanceType(env);
  if (!instance.ok()) {
    PrintError(kTool, std::string(instance.status().message()));
    return kExitFailure;
  }
  const config::Resolution res = config::Resolve(env, device::PlatformFactsFor(**instance));
  if (!res.ok()) {
    PrintError(kTool, res.init_error);
    return kExitFailure;
  }
  CommOptions options = OptionsFromConfig(res.config, env);
  RunEnv run_env;
  run_env.execution_barrier = !res.config.disable_execution_barrier;
  if (auto v = env("NEURON_ALLREDUCE_INJECT_ERROR")) run_env.inject_error = *v == "1";
  return RunGuarded(kTool, [&] {
    if (launch->has_value()) {
      options.rank = (*launch)->rank;
      options.world = (*launch)->world;
      return RunRank(flags, options, run_env);
    }
    return LaunchLocal(flags, options, run_env);
  });
}

}  // namespace neuron::collectives
