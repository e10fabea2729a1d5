// Runs a function as N ranks of one job, each in a forked process with its
// own Communicator, and collects their exit statuses. The parent kills the
// ranks if they overrun, so a hang fails the test instead of blocking it.
#ifndef NEURON_TESTS_COLLECTIVES_RANK_HARNESS_H_
#define NEURON_TESTS_COLLECTIVES_RANK_HARNESS_H_

#include <netinet/in.h>
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "lib/collectives/communicator.h"

namespace neuron::collectives::testing {

struct RankResult {
  int exit_code = -1;  // -1: killed by the harness (overran), 128+n: signal n
  double seconds = 0;  // from start until the rank ended
  std::string error;   // Communicator::Create's message when it failed
};

struct JobOptions {
  CommOptions base;                    // world, timeout, chunk ...
  std::vector<std::string> host_addr;  // per rank (empty: one host)
  double limit_s = 60;                 // kill everything after this
  // Ranks the test stops (SIGSTOP): killed once they are all that is left.
  std::vector<int> kill_when_alone;
  // Called in the parent once rank 0's listener is up, before any rank
  // starts, with its address (a stranger may connect before the ranks).
  std::function<void(const sockaddr_in&)> before_start;
  // Called in the parent once every rank is running, with their pids.
  std::function<void(const std::vector<pid_t>&)> while_running;
};

// Each rank runs body(comm) and exits with its return value; a failed
// Communicator::Create exits 100 after printing the error.
std::vector<RankResult> RunJob(const JobOptions& options,
                               const std::function<int(Communicator&)>& body);

// A free TCP port on 127.0.0.1.
int FreePort();

}  // namespace neuron::collectives::testing

#endif  // NEURON_TESTS_COLLECTIVES_RANK_HARNESS_H_
