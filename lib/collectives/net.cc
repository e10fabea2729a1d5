#include "lib/collectives/net.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace neuron::collectives::net {
namespace {

int MsLeft(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - Clock::now());
  if (left.count() <= 0) return 0;
  return left.count() > 1000 ? 1000 : static_cast<int>(left.count());
}

absl::Status WaitFd(int fd, short events, Deadline deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int ms = MsLeft(deadline);
    if (ms == 0 && Clock::now() >= deadline) {
      return absl::DeadlineExceededError("timed out");
    }
    const int r = poll(&p, 1, ms);
    if (r > 0) return absl::OkStatus();
    if (r < 0 && errno != EINTR) {
      return absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
    }
  }
}

}  // namespace

absl::StatusOr<sockaddr_in> ParseHost(const std::string& host) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) == 1) return addr;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  if (host.empty() || getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 ||
      res == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("host '", host, "' is not an IPv4 address or known name"));
  }
  addr.sin_addr = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
  freeaddrinfo(res);
  return addr;
}

absl::StatusOr<sockaddr_in> ParseHostPort(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not host:port"));
  }
  uint32_t port = 0;
  if (!absl::SimpleAtoi(text.substr(colon + 1), &port) || port == 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' has no valid port (1-65535)"));
  }
  auto addr = ParseHost(text.substr(0, colon));
  if (!addr.ok()) return addr.status();
  addr->sin_port = htons(static_cast<uint16_t>(port));
  return *addr;
}

std::string FormatAddr(const sockaddr_in& addr) {
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &addr.sin_addr, buf, sizeof(buf));
  return absl::StrCat(buf, ":", ntohs(addr.sin_port));
}

void Tune(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

absl::StatusOr<int> Listen(const sockaddr_in& addr) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(std::strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd, 1024) != 0) {
    const std::string why = std::strerror(errno);
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", FormatAddr(addr), ": ", why));
  }
  return fd;
}

sockaddr_in LocalAddr(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return addr;
}

absl::StatusOr<int> Accept(int listen_fd, Deadline deadline) {
  for (;;) {
    absl::Status st = WaitFd(listen_fd, POLLIN, deadline);
    if (!st.ok()) return st;
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      Tune(fd);
      return fd;
    }
    if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) {
      return absl::InternalError(absl::StrCat("accept: ", std::strerror(errno)));
    }
  }
}

absl::StatusOr<int> Connect(const sockaddr_in& addr, Deadline deadline,
                            const sockaddr_in* bind_addr) {
  for (;;) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return absl::InternalError(std::strerror(errno));
    if (bind_addr != nullptr &&
        bind(fd, reinterpret_cast<const sockaddr*>(bind_addr),
             sizeof(*bind_addr)) != 0) {
      const std::string why = std::strerror(errno);
      close(fd);
      return absl::UnavailableError(absl::StrCat(
          "cannot bind to ", FormatAddr(*bind_addr), ": ", why));
    }
    if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) ==
        0) {
      Tune(fd);
      return fd;
    }
    const int err = errno;
    close(fd);
    if (err != ECONNREFUSED && err != EINTR && err != ETIMEDOUT &&
        err != EAGAIN) {
      return absl::UnavailableError(absl::StrCat(
          "cannot connect to ", FormatAddr(addr), ": ", std::strerror(err)));
    }
    if (Clock::now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "nothing listens at ", FormatAddr(addr), " (", std::strerror(err),
          ")"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

absl::Status SendAll(int fd, const void* data, size_t bytes, Deadline deadline) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = send(fd, p, bytes, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      absl::Status st = WaitFd(fd, POLLOUT, deadline);
      if (!st.ok()) return st;
      continue;
    }
    return absl::UnavailableError("connection closed");
  }
  return absl::OkStatus();
}

absl::Status RecvAll(int fd, void* data, size_t bytes, Deadline deadline) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = recv(fd, p, bytes, 0);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      absl::Status st = WaitFd(fd, POLLIN, deadline);
      if (!st.ok()) return st;
      continue;
    }
    return absl::UnavailableError("connection closed");
  }
  return absl::OkStatus();
}

}  // namespace neuron::collectives::net
