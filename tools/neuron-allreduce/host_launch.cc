#include "tools/neuron-allreduce/host_launch.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/collectives/job_secret.h"
#include "lib/support/cli.h"
#include "lib/support/parse.h"

extern char** environ;

namespace neuron::collectives {
namespace {

// Variables that describe one process, not the job: forwarding the
// launcher's value would give every rank the same one.
bool IsForwarded(std::string_view name) {
  if (name.rfind("NEURON_", 0) != 0) return false;
  static constexpr std::string_view kOwn[] = {
      "NEURON_HOST_ADDR", "NEURON_RANK",    "NEURON_WORLD_SIZE",
      "NEURON_LOCAL_RANK", "NEURON_MPIRUN", "NEURON_MPIRUN_ARGS",
  };
  return std::find(std::begin(kOwn), std::end(kOwn), name) == std::end(kOwn);
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseHostsFile(std::string_view text,
                                                        std::string_view name) {
  const std::string file(name);
  std::vector<std::string> hosts;
  std::set<std::string> seen;
  int line_no = 0;
  for (absl::string_view line :
       absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++line_no;
    line = line.substr(0, line.find('#'));
    std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (words.empty()) continue;
    const auto at = [&](const std::string& why) {
      return absl::InvalidArgumentError(absl::StrCat(file, ":", line_no, ": ", why));
    };
    for (size_t w = 1; w < words.size(); ++w) {
      const size_t eq = words[w].find('=');
      const absl::string_view key = words[w].substr(0, eq);
      if (eq == absl::string_view::npos || (key != "slots" && key != "max_slots")) {
        return at(absl::StrCat("'", words[w], "': expected one host per line, optionally "
                               "followed by slots=N or max_slots=N"));
      }
      auto n = ParseUnsigned(std::string(words[w].substr(eq + 1)), 1u << 20);
      if (!n.ok() || *n == 0) return at(absl::StrCat("'", words[w], "': expected ", key, "=N, N >= 1"));
    }
    const std::string host(words[0]);
    if (!seen.insert(host).second) return at(absl::StrCat("host '", host, "' is listed twice"));
    hosts.push_back(host);
  }
  if (hosts.empty()) return absl::InvalidArgumentError(absl::StrCat(file, ": names no host"));
  return hosts;
}

absl::StatusOr<std::vector<std::string>> ReadHostsFile(const std::string& path) {
  std::ifstream f(path);
  if (!f) {
    return absl::NotFoundError(absl::StrCat("--hosts-file ", path, ": ", std::strerror(errno)));
  }
  std::stringstream text;
  text << f.rdbuf();
  return ParseHostsFile(text.str(), path);
}

absl::StatusOr<std::vector<std::string>> MpirunArgv(
    const HostLaunch& l, const config::EnvLookup& env,
    const std::vector<std::string>& env_names) {
  const int n = static_cast<int>(l.hosts.size());
  if (n == 0) return absl::InvalidArgumentError("--hosts names no host");
  std::set<std::string> seen;
  for (const std::string& h : l.hosts) {
    if (h.empty() || h.find_first_of(",: \t") != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("--hosts '", h, "': expected a host name or address"));
    }
    if (!seen.insert(h).second) {
      return absl::InvalidArgumentError(absl::StrCat("--hosts lists '", h, "' twice"));
    }
  }
  if (l.nranks == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--hosts needs -r NRANKS, the ranks over all ", n, " host(s)"));
  }
  if (l.nranks % n != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "-r ", l.nranks, " does not spread evenly over ", n, " hosts (give a multiple of ", n, ")"));
  }
  if (l.nnodes != 0 && l.nnodes != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("-N ", l.nnodes, " but ", n, " host(s) are listed"));
  }
  const std::optional<std::string> root = env("NEURON_RT_ROOT_COMM_ID");
  if (!root || root->empty()) {
    return absl::FailedPreconditionError(
        "NEURON_RT_ROOT_COMM_ID is not set: --hosts needs host:port where rank 0 "
        "(on the first host) listens, e.g. NEURON_RT_ROOT_COMM_ID=" + l.hosts[0] + ":45654");
  }
  std::vector<std::string> argv;
  const std::optional<std::string> mpirun = env("NEURON_MPIRUN");
  argv.push_back(mpirun && !mpirun->empty() ? *mpirun : "mpirun");
  if (auto extra = env("NEURON_MPIRUN_ARGS")) {
    for (absl::string_view w : absl::StrSplit(*extra, absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
      argv.emplace_back(w);
    }
  }
  const int per_host = l.nranks / n;
  std::vector<std::string> slots;
  for (const std::string& h : l.hosts) slots.push_back(absl::StrCat(h, ":", per_host));
  argv.insert(argv.end(), {"-np", std::to_string(l.nranks), "--host", absl::StrJoin(slots, ",")});
  std::vector<std::string> names(env_names);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const std::string& name : names) {
    if (IsForwarded(name)) argv.insert(argv.end(), {"-x", name});
  }
  argv.push_back(l.self);
  argv.insert(argv.end(), l.rank_args.begin(), l.rank_args.end());
  return argv;
}

std::vector<std::string> EnvironmentNames() {
  std::vector<std::string> names;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view kv(*e);
    names.emplace_back(kv.substr(0, kv.find('=')));
  }
  return names;
}

absl::Status ExecArgv(const std::vector<std::string>& argv) {
  std::vector<char*> av;
  for (const std::string& a : argv) av.push_back(const_cast<char*>(a.c_str()));
  av.push_back(nullptr);
  std::fflush(nullptr);
  execvp(av[0], av.data());
  return absl::FailedPreconditionError(
      absl::StrCat("cannot run ", argv[0], " (NEURON_MPIRUN): ", std::strerror(errno)));
}

int RunOnHosts(std::string_view tool, HostLaunch launch, const std::string& hosts_file,
               const config::EnvLookup& env) {
  if (!launch.hosts.empty() && !hosts_file.empty()) {
    return UsageError(tool, "--hosts and --hosts-file exclude each other");
  }
  if (launch.hosts.empty()) {
    auto hosts = ReadHostsFile(hosts_file);
    if (!hosts.ok()) {
      PrintError(tool, std::string(hosts.status().message()));
      return kExitFailure;
    }
    launch.hosts = *std::move(hosts);
  }
  // Every host runs this executable by its path here, as mpirun's users
  // install tools at one path on all hosts.
  std::error_code ec;
  launch.self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) launch.self = std::string(tool);
  // A secret for this job when the user gave none; mpirun passes it on
  // with the other NEURON_* variables (-x NAME: not on its command line).
  if (!env(kJobSecretVar) && !env(kJobSecretFileVar)) {
    setenv(kJobSecretVar, NewJobSecret().c_str(), 1);
  }
  auto argv = MpirunArgv(launch, env, EnvironmentNames());
  if (!argv.ok()) {
    const std::string why(argv.status().message());
    if (absl::IsInvalidArgument(argv.status())) return UsageError(tool, why);
    PrintError(tool, why);
    return kExitFailure;
  }
  PrintError(tool, std::string(ExecArgv(*argv).message()));
  return kExitFailure;
}

}  // namespace neuron::collectives
