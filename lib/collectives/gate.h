// Who may connect: the listener side of every set-up connection (rank 0's
// bootstrap listener, each rank's mesh listener) and the dialer side that
// identifies itself to it (wire.h has the handshake).
//
// A Gate accepts connections concurrently and gives each a short window to
// prove it is a rank of this job. One that closes early, sends anything but
// a hello, stays silent or drips past the window is dropped and logged
// once, at WARN, with its address; the caller keeps waiting for its ranks
// until the job's deadline. Pending connections are capped (the listener is
// not polled while the cap is reached) and a failing accept(2) backs off.
#ifndef NEURON_LIB_COLLECTIVES_GATE_H_
#define NEURON_LIB_COLLECTIVES_GATE_H_

#include <netinet/in.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/collectives/net.h"

namespace neuron::collectives {

inline constexpr std::chrono::milliseconds kIdentifyWindow{5000};
inline constexpr size_t kMaxPendingConnections = 64;
inline constexpr std::chrono::milliseconds kAcceptBackoff{100};

struct GateOptions {
  std::string what;    // the listener, as logs name it ("rank 0's bootstrap listener")
  std::string secret;  // the job's ("" : none)
  uint32_t magic = 0;      // a hello's first four bytes
  size_t hello_bytes = 0;  // a hello's size, its wire::Proof last
  std::chrono::milliseconds identify = kIdentifyWindow;
  size_t max_pending = kMaxPendingConnections;
};

struct Admitted {
  int fd = -1;        // the caller's now (non-blocking, TCP_NODELAY)
  std::string hello;  // hello_bytes bytes, proof verified
  sockaddr_in from{};
};

class Gate {
 public:
  // Takes no ownership of listen_fd (made non-blocking).
  Gate(int listen_fd, GateOptions options);
  ~Gate();
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;

  // The next connection that proved itself, or kDeadlineExceeded.
  absl::StatusOr<Admitted> Next(net::Deadline deadline);
  // What strangers did so far, for an error message ("" when nothing):
  // "; ignored 2 connections that were not ranks (last from ADDR: why)".
  std::string Strays() const;
  int ignored() const { return ignored_; }

 private:
  struct Pending {
    int fd = -1;
    sockaddr_in from{};
    net::Deadline until;
    std::string challenge_nonce;
    std::string buf;
    size_t got = 0;
  };
  void AcceptAll(net::Deadline now);
  // Reads what is there; true when the hello is complete (or the
  // connection was dropped: fd < 0).
  bool Read(Pending& p);
  void Drop(Pending& p, const std::string& why, bool refused = false);

  int listen_fd_;
  GateOptions opt_;
  std::vector<Pending> pending_;
  net::Deadline accept_resume_{};
  int ignored_ = 0, refused_ = 0, logged_ = 0;
  std::string last_stray_, last_refused_;
};

// The dialer's side: on a connected fd, reads the listener's challenge,
// sends `hello` (hello_bytes, its Proof filled in here) and waits to be
// admitted. `listener` names the other end in errors ("rank 0 at ADDR").
// kPermissionDenied: the secrets disagree; kDeadlineExceeded: no answer.
absl::Status Identify(int fd, const std::string& secret, std::string hello,
                      net::Deadline deadline, const std::string& listener);

// The MAC a hello carries (exposed for tests that forge one).
std::string HelloMac(const std::string& secret, const std::string& challenge_nonce,
                     const std::string& hello);

}  // namespace neuron::collectives

#endif  // NEURON_LIB_COLLECTIVES_GATE_H_
