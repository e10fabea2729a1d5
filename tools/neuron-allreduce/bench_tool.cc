// neuron-allreduce's entry: flags, configuration, and the launch: -r forks
// the ranks on this host (local_launch.h); --hosts starts them on other hosts
// through mpirun (host_launch.h); under mpirun, srun or NEURON_RANK this
// process is one rank of the launcher's job.
#include "tools/neuron-allreduce/bench_tool.h"

#include <sched.h>

#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/collectives/launch.h"
#include "lib/collectives/local_launch.h"
#include "lib/device/instance_catalog.h"
#include "lib/log/log.h"
#include "lib/support/cli.h"
#include "lib/support/progress.h"
#include "tools/neuron-allreduce/bench_flags.h"
#include "tools/neuron-allreduce/bench_run.h"
#include "tools/neuron-allreduce/host_launch.h"

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

}  // namespace

int AllReduceToolMain(int argc, char** argv) {
  BenchFlags flags;
  const int rc = ParseBenchFlags(argc, argv, &flags);
  if (rc >= 0) return rc;
  Progress::EnableForTool(kTool, flags.quiet);
  const config::EnvLookup env = config::ProcessEnv();
  auto launch = LaunchFromEnv(env);
  if (!launch.ok()) return UsageError(kTool, std::string(launch.status().message()));
  const bool on_hosts = !flags.hosts.empty() || !flags.hosts_file.empty();
  if (!launch->has_value() && on_hosts) {
    HostLaunch hosts{flags.hosts, flags.nranks, flags.nnodes, "", flags.rank_args};
    return RunOnHosts(kTool, std::move(hosts), flags.hosts_file, env);
  }
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
  // NEURON_RT_LOG_LEVEL and friends apply to the engine's lines (the
  // transport chosen between hosts is logged at INFO).
  log::Configure(res.config);
  // Warnings of the resolution (ignored or deprecated variables), as the
  // runtime logs them at init.
  log::ReportDiagnostics(res.diagnostics);
  CommOptions options = OptionsFromConfig(res.config, env);
  options.algorithm = flags.algorithm;
  RunEnv run_env;
  run_env.execution_barrier = !res.config.disable_execution_barrier;
  for (const std::string& path : flags.plot_compare) {
    absl::StatusOr<BenchReport> report = ReadBenchReport(path);
    if (!report.ok()) {
      PrintError(kTool, absl::StrCat("--plot-compare ", report.status().message()));
      return kExitFailure;
    }
    run_env.compared.push_back({path, std::move(*report)});
  }
  if (auto v = env("NEURON_ALLREDUCE_INJECT_ERROR")) run_env.inject_error = *v == "1";
  return RunGuarded(kTool, [&] {
    if (launch->has_value()) {
      options.rank = (*launch)->rank;
      options.world = (*launch)->world;
      return RunRank(flags, options, run_env);
    }
    const int nranks = flags.nranks;
    return ForkLocalRanks(kTool, nranks, options, [&](const CommOptions& o) {
      if (o.cpu_affinity.empty()) PinRank(o.rank, nranks);
      return RunRank(flags, o, run_env);
    });
  });
}

}  // namespace neuron::collectives
