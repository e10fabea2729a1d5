#include "tests/collectives/rank_harness.h"

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
  for (int r = 0; r < world; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
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
          std::fprintf(stderr, "rank %d: %s\n", r, std::string(comm.status().message()).c_str());
        }
      }
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(rc);
    }
    pids.push_back(pid);
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
  return results;
}

}  // namespace neuron::collectives::testing
