// collectives_stranger: the test strangers as a program, for jobs whose
// ranks run where a test binary cannot fork next to them (the namespace
// hosts of tests/checks/cluster_hosts.sh).
//
//   collectives_stranger ADDR PORT WORLD SECONDS KIND...
//
// Runs each KIND (scan, garbage, idle, drip, forged) against ADDR:PORT, again
// and again, for SECONDS; exits 0 then (2 on a usage error).
#include <arpa/inet.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "tests/collectives/stranger.h"

namespace {

using neuron::collectives::testing::Stranger;

bool KindOf(std::string_view name, Stranger* kind) {
  for (Stranger s : {Stranger::kScan, Stranger::kGarbage, Stranger::kIdle, Stranger::kDrip, Stranger::kForged}) {
    if (name == neuron::collectives::testing::StrangerName(s)) {
      *kind = s;
      return true;
    }
  }
  return false;
}

int Usage() {
  std::fprintf(stderr, "usage: collectives_stranger ADDR PORT WORLD SECONDS scan|garbage|idle|drip|forged...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) return Usage();
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  const int port = std::atoi(argv[2]);
  const int world = std::atoi(argv[3]);
  const double seconds = std::atof(argv[4]);
  if (inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1 || port <= 0 || port > 65535 || world < 2 ||
      !(seconds > 0)) {
    return Usage();
  }
  addr.sin_port = htons(static_cast<uint16_t>(port));
  std::vector<pid_t> pids;
  for (int i = 5; i < argc; ++i) {
    Stranger kind;
    if (!KindOf(argv[i], &kind)) return Usage();
    pids.push_back(neuron::collectives::testing::StartStranger(kind, addr, world, /*repeat=*/true, seconds));
  }
  usleep(static_cast<useconds_t>(seconds * 1e6));
  for (pid_t pid : pids) neuron::collectives::testing::StopStranger(pid);
  return 0;
}
