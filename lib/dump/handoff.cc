#include "lib/dump/handoff.h"

#include <limits.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

extern char** environ;

namespace neuron::dump {

std::vector<std::string> HandoffArgs(const FailedExecution& f, const DumpIdentity& id,
                                     const std::string& local_dir, const std::string& s3_prefix) {
  std::vector<std::string> a = {
      "--neff-name",      f.neff_name.empty() ? f.model : f.neff_name,
      "--neff-uuid",      f.neff_uuid,
      "--date-time",      FlagDateTime(id.time),
      "--pid",            absl::StrCat(id.pid),
      "--tid",            absl::StrCat(id.tid),
      "--log-id",         absl::StrCat(id.log_id),
      "--instance-id",    id.instance_id,
      "--cluster-id",     id.cluster_id,
      "--error-location", f.error_location,
      "--error-code",     absl::StrCat(static_cast<int>(f.status)),
      "--local-output-dir", local_dir,
  };
  if (!s3_prefix.empty()) {
    a.push_back("--s3-output-prefix");
    a.push_back(s3_prefix);
  }
  return a;
}

namespace {

bool Executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

}  // namespace

std::string FindNeuronDump() {
  char self[PATH_MAX] = {};
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string dir(self, static_cast<size_t>(n));
    dir = dir.substr(0, dir.rfind('/'));
    if (Executable(dir + "/neuron-dump")) return dir + "/neuron-dump";
  }
  if (Executable("/opt/aws/neuron/bin/neuron-dump")) return "/opt/aws/neuron/bin/neuron-dump";
  if (const char* path = std::getenv("PATH")) {
    for (absl::string_view d : absl::StrSplit(path, ':')) {
      if (d.empty()) continue;
      const std::string candidate = absl::StrCat(d, "/neuron-dump");
      if (Executable(candidate)) return candidate;
    }
  }
  return "";
}

absl::Status RunProgram(const std::string& program, const std::vector<std::string>& args,
                        const std::vector<std::string>& extra_env) {
  std::vector<std::string> env_strings;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env_strings.push_back(*e);
  for (const std::string& e : extra_env) env_strings.push_back(e);
  std::vector<char*> argv, envp;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv.data(), envp.data());
  if (rc != 0) return absl::InternalError(absl::StrCat("cannot run ", program, ": ", std::strerror(rc)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError(absl::StrCat("waiting for ", program, ": ", std::strerror(errno)));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  if (WIFSIGNALED(status))
    return absl::InternalError(absl::StrFormat("%s was killed by signal %d", program, WTERMSIG(status)));
  return absl::InternalError(absl::StrFormat("%s exited with status %d", program, WEXITSTATUS(status)));
}

}  // namespace neuron::dump
