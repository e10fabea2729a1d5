// Naming the lost rank when a job spans hosts. A rank that sees a failure
// (a connection closed, no progress by the deadline) cannot tell whether
// the peer it waits for is lost or only waiting for someone else; so it
// calls the roll: it sends 'R' on its control connection to every rank and
// listens for a second. Every surviving rank hears it (transfers check the
// control connections while they wait) and answers with its own 'R'; a
// rank whose host was cut off, whose process died or stopped does not. The
// ranks that stay silent are the lost ones, the same on every survivor.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/collectives/comm_impl.h"

namespace neuron::collectives {
namespace {

constexpr auto kRollCallWindow = std::chrono::milliseconds(1000);

}  // namespace

std::string Communicator::Impl::HostOf(int r) const {
  const Peer& p = peers[static_cast<size_t>(r)];
  const std::string addr = net::FormatAddr(p.data_addr);
  const std::string ip = addr.substr(0, addr.rfind(':'));
  if (p.name.empty() || p.name == ip) return absl::StrCat("host ", ip);
  return absl::StrCat("host ", p.name, ", ", ip);
}

void Communicator::Impl::SayGoodbye() {
  for (int fd : control) {
    if (fd >= 0) (void)send(fd, "B", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  }
}

absl::Status Communicator::Impl::CheckControl() {
  if (!broken.ok()) return broken;
  std::vector<pollfd> fds;
  std::vector<int> who;
  for (int r = 0; r < world; ++r) {
    if (control[r] >= 0 && !left[r]) {
      fds.push_back({control[r], POLLIN, 0});
      who.push_back(r);
    }
  }
  if (fds.empty() || poll(fds.data(), fds.size(), 0) <= 0) return absl::OkStatus();
  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents == 0) continue;
    const int r = who[i];
    char c = 0;
    const ssize_t n = recv(control[r], &c, 1, MSG_DONTWAIT);
    if (n == 1 && c == 'B') {
      left[r] = answered[r] = true;
    } else if (n == 1 && c != 'R') {
      return RollCall(r, absl::StrCat("it sent byte ", static_cast<int>(static_cast<uint8_t>(c)),
                                      " on its control connection, outside the protocol"));
    } else if (n == 1) {
      answered[r] = true;
      return RollCall(-1, "");
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      return RollCall(r, "its process ended");
    }
  }
  return absl::OkStatus();
}

absl::Status Communicator::Impl::RecvBoot(int fd, void* data, size_t bytes,
                                          net::Deadline until) {
  if (control.empty()) return net::RecvAll(fd, data, bytes, until);
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = recv(fd, p, bytes, MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      return absl::UnavailableError("connection closed");
    }
    const auto now = net::Clock::now();
    if (now >= until) return absl::DeadlineExceededError("timed out");
    std::vector<pollfd> fds{{fd, POLLIN, 0}};
    for (int r = 0; r < world; ++r) {
      if (control[r] >= 0 && !left[r]) fds.push_back({control[r], POLLIN, 0});
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(until - now);
    const int ms = static_cast<int>(std::min<int64_t>(wait.count() + 1, 1000));
    if (poll(fds.data(), fds.size(), ms) <= 0) continue;
    bool control_ready = false;
    for (size_t i = 1; i < fds.size(); ++i) control_ready |= fds[i].revents != 0;
    if (control_ready) {
      absl::Status st = CheckControl();
      if (!st.ok()) return st;
    }
  }
  return absl::OkStatus();
}

absl::Status Communicator::Impl::RollCall(int suspect, const std::string& why) {
  if (!broken.ok()) return broken;
  for (int r = 0; r < world; ++r) {
    if (control[r] >= 0 && !left[r]) {
      (void)send(control[r], "R", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
  }
  std::vector<bool> dead(static_cast<size_t>(world), false);
  // Dead processes close their connections and end the wait early; only
  // silent ones (a cut link, a stopped process) make it last.
  const auto until = std::max(net::Clock::now() + kRollCallWindow,
                              setting_up ? deadline : net::Deadline{});
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<int> who;
    for (int r = 0; r < world; ++r) {
      if (control[r] >= 0 && !answered[r] && !dead[r]) {
        fds.push_back({control[r], POLLIN, 0});
        who.push_back(r);
      }
    }
    const auto now = net::Clock::now();
    if (fds.empty() || now >= until) break;
    const int ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1);
    if (poll(fds.data(), fds.size(), ms) <= 0) continue;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      const int r = who[i];
      char c = 0;
      const ssize_t n = recv(control[r], &c, 1, MSG_DONTWAIT);
      if (n == 1) {
        answered[r] = true;
        if (c == 'B') left[r] = true;
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        dead[r] = true;
      }
    }
  }
  // The silent ranks, by host.
  std::map<std::string, std::vector<int>> lost;
  for (int r = 0; r < world; ++r) {
    if (r != rank && control[r] >= 0 && !answered[r]) lost[HostOf(r)].push_back(r);
  }
  std::string seen = suspect >= 0 ? absl::StrCat("rank ", suspect, ": ", why)
                                  : std::string("a failure on another rank");
  if (why == "no progress") {
    absl::StrAppend(&seen, " within ", opt.timeout_s, " s (NEURON_RT_EXEC_TIMEOUT)");
  }
  std::string message;
  if (!lost.empty()) {
    std::vector<std::string> parts;
    int count = 0;
    for (const auto& [host, ranks] : lost) {
      parts.push_back(absl::StrCat(absl::StrJoin(ranks, ","), " (", host, ")"));
      count += static_cast<int>(ranks.size());
    }
    message = absl::StrCat(count == 1 ? "rank " : "ranks ", absl::StrJoin(parts, ", "),
                           " lost: silent at the roll call after ", seen);
  } else if (suspect >= 0) {
    message = absl::StrCat("rank ", suspect, " (", HostOf(suspect), "): ", why,
                           " (every rank answered the roll call)");
  } else {
    message = "another rank gave up (every rank answered the roll call)";
  }
  broken = NrtError(NRT_TIMEOUT, message);
  return broken;
}

}  // namespace neuron::collectives
