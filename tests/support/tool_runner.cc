#include "tests/support/tool_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

extern char** environ;

namespace neuron::testing {
namespace {

std::string SelfDir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  return std::filesystem::path(buf).parent_path().string();
}

std::vector<std::string> BuildEnv(const ToolOptions& options) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
    // Kept: where test_main sends core dumps (the test's own directory).
    if (options.clean_neuron_env && name.rfind("NEURON_", 0) == 0 &&
        name != "NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY") {
      continue;
    }
    if (options.env.count(name)) continue;
    bool unset = false;
    for (const auto& u : options.unset_env) unset |= (u == name);
    if (unset) continue;
    env.push_back(entry);
  }
  for (const auto& [k, v] : options.env) env.push_back(k + "=" + v);
  return env;
}

}  // namespace

std::string ToolDir() { return SelfDir(); }

ToolResult RunTool(const std::string& tool, const std::vector<std::string>& args,
                   const ToolOptions& options) {
  ToolResult result;
  std::string path = tool.find('/') == std::string::npos ? ToolDir() + "/" + tool : tool;
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) || pipe2(out_pipe, O_CLOEXEC) ||
      pipe2(err_pipe, O_CLOEXEC)) {
    result.err = "pipe failed";
    return result;
  }
  std::vector<std::string> argv_store = {path};
  argv_store.insert(argv_store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_store) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_store = BuildEnv(options);
  std::vector<char*> envp;
  for (auto& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = fork();
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) _exit(127);
    execve(path.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  signal(SIGPIPE, SIG_IGN);

  size_t written = 0;
  if (options.stdin_data.empty()) {
    close(in_pipe[1]);
    in_pipe[1] = -1;
  } else {
    fcntl(in_pipe[1], F_SETFL, O_NONBLOCK);
  }
  bool out_open = true, err_open = true;
  char buf[65536];
  while (out_open || err_open || in_pipe[1] >= 0) {
    pollfd fds[3];
    int n = 0;
    int out_idx = -1, err_idx = -1, in_idx = -1;
    if (out_open) { out_idx = n; fds[n++] = {out_pipe[0], POLLIN, 0}; }
    if (err_open) { err_idx = n; fds[n++] = {err_pipe[0], POLLIN, 0}; }
    if (in_pipe[1] >= 0) { in_idx = n; fds[n++] = {in_pipe[1], POLLOUT, 0}; }
    if (poll(fds, n, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (out_idx >= 0 && fds[out_idx].revents) {
      ssize_t r = read(out_pipe[0], buf, sizeof(buf));
      if (r > 0) result.out.append(buf, r); else out_open = false;
    }
    if (err_idx >= 0 && fds[err_idx].revents) {
      ssize_t r = read(err_pipe[0], buf, sizeof(buf));
      if (r > 0) result.err.append(buf, r); else err_open = false;
    }
    if (in_idx >= 0 && fds[in_idx].revents) {
      ssize_t w = write(in_pipe[1], options.stdin_data.data() + written,
                        options.stdin_data.size() - written);
      if (w > 0) written += w;
      if (w < 0 || written == options.stdin_data.size()) {
        close(in_pipe[1]);
        in_pipe[1] = -1;
      }
    }
  }
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signaled = true;
    result.exit_code = 128 + WTERMSIG(status);
  }
  return result;
}

std::string SourceRoot() {
  std::filesystem::path dir = ToolDir();
  for (int i = 0; i < 4; ++i) {
    if (std::filesystem::is_regular_file(dir / "BUILD.gn") &&
        std::filesystem::is_directory(dir / "tests" / "fuzz")) {
      return std::filesystem::weakly_canonical(dir).string();
    }
    dir = dir.parent_path();
  }
  return std::filesystem::weakly_canonical(std::filesystem::path(ToolDir()) / "..").string();
}

std::string SharedDir() {
  if (const char* env = std::getenv("NEURON_TOOLS_SHARED_DIR")) {
    return std::filesystem::is_directory(env) ? env : "";
  }
  // out/ sits at the repository root; shared/ is beside the repository.
  std::filesystem::path dir = ToolDir();
  for (int i = 0; i < 4; ++i) {
    std::filesystem::path candidate = dir / ".." / "shared";
    if (std::filesystem::is_directory(candidate / "seeds")) {
      return std::filesystem::weakly_canonical(candidate).string();
    }
    dir = dir.parent_path();
  }
  return "";
}

std::string MakeTempDir() {
  static std::mutex mu;
  static std::vector<std::string>* dirs = [] {
    auto* v = new std::vector<std::string>();
    std::atexit([] {
      std::error_code ec;
      for (const auto& d : *dirs) std::filesystem::remove_all(d, ec);
    });
    return v;
  }();
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base ? base : "/tmp") + "/neuron-test-XXXXXX";
  char* made = mkdtemp(tmpl.data());
  std::lock_guard<std::mutex> lock(mu);
  if (made) dirs->push_back(made);
  return made ? made : "";
}

}  // namespace neuron::testing
