// TCP helpers for bootstrap and the inter-host transport: every call is
// bounded by a deadline, and a closed peer is reported as such.
#ifndef NEURON_LIB_COLLECTIVES_NET_H_
#define NEURON_LIB_COLLECTIVES_NET_H_

#include <netinet/in.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neuron::collectives::net {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

// The longest timeout honoured (NEURON_RT_EXEC_TIMEOUT): a year. More
// would overflow steady_clock's nanoseconds once added to now.
inline constexpr uint64_t kMaxTimeoutSeconds = 365ull * 24 * 3600;

// "host:port" (IPv4 address or resolvable name; port 1..65535).
absl::StatusOr<sockaddr_in> ParseHostPort(const std::string& text);
absl::StatusOr<sockaddr_in> ParseHost(const std::string& host);  // port 0
std::string FormatAddr(const sockaddr_in& addr);

// A listening socket on addr (port 0: any free port).
absl::StatusOr<int> Listen(const sockaddr_in& addr);
sockaddr_in LocalAddr(int fd);
// Accepts one connection, waiting until the deadline.
absl::StatusOr<int> Accept(int listen_fd, Deadline deadline);
// Connects, retrying while the listener is not up yet, until the deadline.
// bind_addr (port 0) chooses the source address when non-null.
absl::StatusOr<int> Connect(const sockaddr_in& addr, Deadline deadline,
                            const sockaddr_in* bind_addr);

// Non-blocking, TCP_NODELAY.
void Tune(int fd);

// Blocking-style transfers on a non-blocking socket. kUnavailable: the
// peer closed the connection; kDeadlineExceeded: timed out.
absl::Status SendAll(int fd, const void* data, size_t bytes, Deadline deadline);
absl::Status RecvAll(int fd, void* data, size_t bytes, Deadline deadline);

}  // namespace neuron::collectives::net

#endif  // NEURON_LIB_COLLECTIVES_NET_H_
