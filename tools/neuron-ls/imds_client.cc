#include "tools/neuron-ls/imds_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/strings/str_format.h"

namespace neuron::ls {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxResponse = 16 * 1024;  // the values are a few bytes

int MillisLeft(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

// Waits for the socket to be ready for `events` before the deadline.
absl::Status WaitFor(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, MillisLeft(deadline));
    if (n > 0) return absl::OkStatus();
    if (n == 0) return absl::DeadlineExceededError("no answer in time");
    if (errno != EINTR) return absl::UnavailableError(std::strerror(errno));
  }
}

// One HTTP/1.0 exchange on a fresh connection; returns the body of a 200.
absl::StatusOr<std::string> Exchange(const ImdsEndpoint& endpoint, const std::string& request,
                                     Clock::time_point deadline) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(endpoint.port));
  if (inet_pton(AF_INET, endpoint.address.c_str(), &addr.sin_addr) != 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("'%s' is not an IPv4 address", endpoint.address));
  }
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};

  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (errno != EINPROGRESS) return absl::UnavailableError(std::strerror(errno));
    if (absl::Status s = WaitFor(fd, POLLOUT, deadline); !s.ok()) return s;
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return absl::UnavailableError(std::strerror(err));
  }
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && errno == EAGAIN) {
      if (absl::Status s = WaitFor(fd, POLLOUT, deadline); !s.ok()) return s;
    } else if (n < 0 && errno != EINTR) {
      return absl::UnavailableError(std::strerror(errno));
    }
  }
  std::string response;
  char buf[2048];
  for (;;) {
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n > 0) {
      response.append(buf, static_cast<size_t>(n));
      if (response.size() > kMaxResponse) return absl::DataLossError("answer too long");
    } else if (n == 0) {
      break;  // HTTP/1.0: the server closes after the body
    } else if (errno == EAGAIN) {
      if (absl::Status s = WaitFor(fd, POLLIN, deadline); !s.ok()) return s;
    } else if (errno != EINTR) {
      return absl::UnavailableError(std::strerror(errno));
    }
  }
  const size_t header_end = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.", 0) != 0 || header_end == std::string::npos) {
    return absl::DataLossError("not an HTTP answer");
  }
  const std::string status_line = response.substr(0, response.find("\r\n"));
  if (status_line.size() < 12 || status_line.compare(9, 3, "200") != 0) {
    return absl::UnavailableError(absl::StrFormat("answered '%s'", status_line.substr(0, 60)));
  }
  return response.substr(header_end + 4);
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> QueryImds(
    const ImdsEndpoint& endpoint, const std::vector<std::string>& meta_data_paths) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(endpoint.timeout_ms);
  const std::string host = absl::StrFormat("Host: %s\r\n", endpoint.address);
  absl::StatusOr<std::string> token =
      Exchange(endpoint,
               "PUT /latest/api/token HTTP/1.0\r\n" + host +
                   "X-aws-ec2-metadata-token-ttl-seconds: 60\r\nContent-Length: 0\r\n\r\n",
               deadline);
  if (!token.ok()) {
    return absl::Status(token.status().code(),
                        absl::StrFormat("instance metadata service at %s: token: %s",
                                        endpoint.address, token.status().message()));
  }
  // The token goes back in a header: nothing but printable characters.
  for (char c : *token) {
    if (c <= ' ' || c > '~') {
      return absl::DataLossError(absl::StrFormat(
          "instance metadata service at %s: the token holds a control character",
          endpoint.address));
    }
  }
  std::map<std::string, std::string> out;
  for (const std::string& path : meta_data_paths) {
    absl::StatusOr<std::string> value = Exchange(
        endpoint,
        absl::StrFormat("GET /latest/meta-data/%s HTTP/1.0\r\n%sX-aws-ec2-metadata-token: %s\r\n\r\n",
                        path, host, *token),
        deadline);
    if (!value.ok()) {
      return absl::Status(value.status().code(),
                          absl::StrFormat("instance metadata service at %s: %s: %s",
                                          endpoint.address, path, value.status().message()));
    }
    out[path] = *std::move(value);
  }
  return out;
}

}  // namespace neuron::ls
