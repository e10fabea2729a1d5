// Async point-to-point transfers between logical cores over TCP: the engine
// behind nrt/nrt_async_sendrecv.h, with no knowledge of NRT handles or
// tensors (it moves caller-owned bytes).
//
// Each initialized logical core listens on port BASE + lnc, where BASE is
// NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT (kDefaultBasePort when 0; every
// process of a job must use the same). Connect(ip, p, l) dials ip:BASE+p and
// says hello as (l, p, seq); the side that called Accept(ip', l, p) takes it
// when ip' is the dialing host and seq matches: the k-th connect from l to
// (ip, p) pairs with the k-th accept on p from (the dialer's ip, l). A
// connection is one-way: the sender writes each message as a 16-byte header
// (magic, length) and the bytes; the receiver posts receives in the same
// order, each at least as large as the message (Test reports the size
// received).
//
// One progress thread serves every core of the process: it polls the
// sockets that can move (and a wake-up eventfd for new work), so nothing
// spins. Connection attempts, and a transfer that moves no byte, give up
// after the timeout given to Init (NEURON_RT_EXEC_TIMEOUT; NRT_TIMEOUT). A
// peer that closes or dies fails its communicator: every request in flight
// on it finishes with NRT_FAILURE naming the peer, and later requests are
// refused.
//
// Limits: kMaxCommunicatorsPerLnc communicators per core (counted since
// Init: they live until Close) and kMaxPendingRequests unfinished requests
// per communicator.
//
// Failures carry their NRT status (NrtError in communicator.h; NrtStatusOf
// recovers it). The state is process-wide: every function is thread-safe.
#ifndef NEURON_LIB_COLLECTIVES_POINT_TO_POINT_H_
#define NEURON_LIB_COLLECTIVES_POINT_TO_POINT_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neuron::collectives::p2p {

inline constexpr int kMaxCommunicatorsPerLnc = 64;
inline constexpr int kMaxPendingRequests = 64;
inline constexpr int kDefaultBasePort = 45645;

// A communicator and a request as callers hold them. The engine owns both
// and frees them (a communicator at Close of its core, a request once Test
// reports it finished, or at that Close), so a stale pointer is detected
// without being read. A caller may pass in an object of a derived type
// (libnrt's opaque handles are) to get that object back.
class Comm {
 public:
  Comm() = default;
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  virtual ~Comm() = default;
};

class Request {
 public:
  Request() = default;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  virtual ~Request() = default;
};

// Starts core `lnc`: listens on base_port + lnc (base_port 0:
// kDefaultBasePort). `timeout` bounds connecting and each stalled transfer.
absl::Status Init(int lnc, int base_port, std::chrono::seconds timeout);
// Closes the core's listener, communicators and requests. Fails (closing
// anyway) when a communicator never connected or a request was in flight;
// the core then cannot start again before Shutdown.
absl::Status Close(int lnc);
// Closes every core and stops the progress thread.
void Shutdown();

// A send communicator from `lnc` to core `peer_lnc` of host `peer_ip`, or
// the receive side of the matching connect. Both connect in the background
// (IsConnected). `handle`: the object to return (null: a plain Comm).
absl::StatusOr<Comm*> Connect(const std::string& peer_ip, int peer_lnc, int lnc,
                              std::unique_ptr<Comm> handle = nullptr);
absl::StatusOr<Comm*> Accept(const std::string& peer_ip, int peer_lnc, int lnc,
                             std::unique_ptr<Comm> handle = nullptr);
// Whether the handshake finished; the failure that ended the communicator.
absl::StatusOr<bool> IsConnected(const Comm* comm);

// Posts a transfer of `bytes` at `data`, which must stay valid until Test
// reports the request finished (or its core closes). A receive takes a
// message of up to `bytes`.
absl::StatusOr<Request*> Send(Comm* comm, const void* data, size_t bytes,
                              std::unique_ptr<Request> handle = nullptr);
absl::StatusOr<Request*> Recv(Comm* comm, void* data, size_t bytes,
                              std::unique_ptr<Request> handle = nullptr);

struct Completion {
  bool done = false;
  size_t bytes = 0;     // moved (the message's size for a receive)
  absl::Status status;  // the request's outcome, once done
};
// A finished request is freed here, failed or not. An error: not a live
// request.
absl::StatusOr<Completion> Test(Request* request);

// Orders the received bytes of finished requests for the caller's reads.
absl::Status Flush(int lnc);

}  // namespace neuron::collectives::p2p

#endif  // NEURON_LIB_COLLECTIVES_POINT_TO_POINT_H_
