#include "tests/collectives/rank_harness.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "lib/collectives/net.h"

namespace neuron::collectives::testing {

int FreePort() {
  auto fd = net::Listen(*net::ParseHost("127.0.0.1"));
  if (!fd.ok()) return 0;
  const int port = ntohs(net::LocalAddr(*fd).sin_port);
  close(*fd);
  return port;
}

namespace {

// What a rank that has ended wrote into its pipe (nothing: empty).
void ReadAll(int fd, std::string* out) {
  if (fd < 0) return;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) out->append(buf, static_cast<size_t>(n));
}

}  // namespace

std::vector<RankResult> RunJob(const JobOptions& options,
                               const std::function<int(Communicator&)>& body) {
  const int world = options.base.world;
  // Rank 0 listens before anything forks, so no rank races for the port.
  auto listen_fd = net::Listen(*net::ParseHost("127.0.0.1"));
  const std::string root = listen_fd.ok()
                               ? net::FormatAddr(net::LocalAddr(*listen_fd))
                               : std::string("127.0.0.1:1");
  if (options.before_start && listen_fd.ok()) options.before_start(net::LocalAddr(*listen_fd));
  std::fflush(stdout);
  std::fflush(stderr);
  const auto start = std::chrono::steady_clock::now();
  std::vector<pid_t> pids;
  // Each rank writes a failed set-up's message into a pipe of its own.
  std::vector<int> error_pipes(static_cast<size_t>(world), -1);
  for (int r = 0; r < world; ++r) {
    int ends[2] = {-1, -1};
    if (pipe2(ends, O_CLOEXEC) != 0) ends[0] = ends[1] = -1;
    const pid_t pid = fork();
    if (pid == 0) {
      if (ends[0] >= 0) close(ends[0]);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      CommOptions o = options.base;
      o.rank = r;
      o.root_comm_id = root;
      if (r < static_cast<int>(options.host_addr.size())) o.host_addr = options.host_addr[r];
      if (r == 0 && listen_fd.ok()) o.listen_fd = *listen_fd;
      if (r != 0 && listen_fd.ok()) close(*listen_fd);
      int rc = 100;
      {
        auto comm = Communicator::Create(o);
        if (comm.ok()) {
          rc = body(**comm);
        } else {
          const std::string msg(comm.status().message());
          std::fprintf(stderr, "rank %d: %s\n", r, msg.c_str());
          if (ends[1] >= 0) (void)!write(ends[1], msg.data(), msg.size());
        }
      }
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(rc);
    }
    pids.push_back(pid);
    if (ends[1] >= 0) close(ends[1]);
    error_pipes[static_cast<size_t>(r)] = ends[0];
  }
  if (listen_fd.ok()) close(*listen_fd);
  if (options.while_running) options.while_running(pids);
  std::vector<RankResult> results(static_cast<size_t>(world));
  int left = world;
  while (left > 0) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (pid > 0) {
      for (int r = 0; r < world; ++r) {
        if (pids[r] != pid) continue;
        results[r].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        results[r].seconds = t;
        ReadAll(error_pipes[static_cast<size_t>(r)], &results[r].error);
        --left;
      }
      continue;
    }
    // Only ranks the test stopped are left: they would never end.
    int stuck = 0;
    for (int r : options.kill_when_alone) stuck += results[r].seconds == 0;
    if (stuck > 0 && stuck == left) {
      for (int r : options.kill_when_alone) kill(pids[r], SIGKILL);
    }
    if (t > options.limit_s) {
      for (int r = 0; r < world; ++r) kill(pids[r], SIGKILL);
      while (waitpid(-1, &status, 0) > 0) {}
      for (RankResult& rr : results) {
        if (rr.seconds == 0) rr.exit_code = -1;
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (int fd : error_pipes) if (fd >= 0) close(fd);
  return results;
}

}  // namespace neuron::collectives::testing
