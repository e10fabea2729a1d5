#include "tests/collectives/stranger.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "lib/collectives/net.h"
#include "lib/collectives/wire.h"

namespace neuron::collectives::testing {
namespace {

using Clock = std::chrono::steady_clock;

void Sleep(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// One visit; returns when done with the connection.
void Visit(Stranger kind, const sockaddr_in& addr, int world, Clock::time_point until) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    Sleep(20);  // not listening (yet, or any more)
    return;
  }
  wire::BootHello h{};
  h.magic = wire::kBootHelloMagic;
  h.rank = 1;
  h.world = static_cast<uint32_t>(world);
  h.pid = static_cast<uint32_t>(getpid());
  h.data_port = 1;
  std::snprintf(h.host, sizeof(h.host), "impostor");
  switch (kind) {
    case Stranger::kScan:
      break;
    case Stranger::kGarbage: {
      const char req[] = "GET / HTTP/1.1\r\nHost: rank0\r\n\r\n";
      (void)!send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL);
      Sleep(200);
      break;
    }
    case Stranger::kIdle:
      while (Clock::now() < until) Sleep(50);
      break;
    case Stranger::kDrip:
      for (size_t i = 0; i < sizeof(h) && Clock::now() < until; ++i) {
        if (send(fd, reinterpret_cast<const char*>(&h) + i, 1, MSG_NOSIGNAL) != 1) break;
        Sleep(300);
      }
      break;
    case Stranger::kForged: {
      wire::Challenge c{};
      if (recv(fd, &c, sizeof(c), MSG_WAITALL) == sizeof(c)) {
        // Claims to hold the secret if the job has one; the MAC is a guess.
        h.proof.flags = c.flags;
        for (auto& b : h.proof.mac) b = static_cast<uint8_t>(random());
        (void)!send(fd, &h, sizeof(h), MSG_NOSIGNAL);
        // Stays, reading whatever it is given, like a rank would.
        char buf[4096];
        while (Clock::now() < until && recv(fd, buf, sizeof(buf), 0) > 0) {}
      }
      break;
    }
  }
  close(fd);
}

}  // namespace

const char* StrangerName(Stranger s) {
  switch (s) {
    case Stranger::kScan: return "scan";
    case Stranger::kGarbage: return "garbage";
    case Stranger::kIdle: return "idle";
    case Stranger::kDrip: return "drip";
    case Stranger::kForged: return "forged";
  }
  return "?";
}

pid_t StartStranger(Stranger kind, const sockaddr_in& addr, int world, bool repeat,
                    double seconds) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const auto until = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  do {
    Visit(kind, addr, world, until);
  } while (repeat && Clock::now() < until);
  _exit(0);
}

void StopStranger(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
}

}  // namespace neuron::collectives::testing
