// Async point-to-point tensor transfer (nrt/nrt_async_sendrecv.h) over TCP.
//
// Each initialized logical core listens on port BASE + lnc, where BASE is
// NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT (kDefaultBasePort when 0; every
// process of a job must use the same). nrt_async_sendrecv_connect(ip, p, l)
// dials ip:BASE+p and says hello as (l, p, seq); the side that called
// nrt_async_sendrecv_accept(ip', l, p) takes it when ip' is the dialing
// host and seq matches: the k-th connect from l to (ip, p) pairs with the
// k-th accept on p from (the dialer's ip, l). A connection is one-way: the
// sender writes each tensor as a 16-byte header (magic, length) and the
// bytes; the receiver posts receives in the same order, each at least as
// large as the message (test_request reports the size received).
//
// One progress thread serves every core of the process: it polls the
// sockets that can move (and a wake-up eventfd for new work), so nothing
// spins. Connection attempts, and a transfer that moves no byte, give up
// after NEURON_RT_EXEC_TIMEOUT seconds (NRT_TIMEOUT). A peer that closes or
// dies fails its communicator: every request in flight on it finishes
// with NRT_FAILURE naming the peer, and later requests are refused.
//
// Limits: kMaxCommunicatorsPerLnc communicators per core (counted since
// nrt_async_sendrecv_init: they live until nrt_async_sendrecv_close) and
// kMaxPendingRequests unfinished requests per communicator.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/collectives/net.h"
#include "lib/nrt/api_state.h"
#include "nrt/nrt_async_sendrecv.h"

namespace neuron::nrt_api {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxCommunicatorsPerLnc = 64;
constexpr int kMaxPendingRequests = 64;
constexpr int kDefaultBasePort = 45645;
constexpr auto kRetryInterval = std::chrono::milliseconds(50);
// Bytes one communicator moves per pass of the progress thread, so one busy
// connection does not hold the lock (and the API calls) for long.
constexpr size_t kPassBudget = 8u << 20;

constexpr uint32_t kHelloMagic = 0x4e535248;  // "NSRH"
constexpr uint32_t kAckMagic = 0x4e535241;    // "NSRA"
constexpr uint32_t kDataMagic = 0x4e535244;   // "NSRD"

// Connection handshake: the dialer's hello, the acceptor's ack.
struct Hello {
  uint32_t magic, src_lnc, dst_lnc, seq;  // network order
};
struct Ack {
  uint32_t magic, reserved;
};
// Before each tensor's bytes.
struct DataHeader {
  uint32_t magic, reserved;
  uint64_t length;  // the sender's byte order: both ends are x86-64 here
};
static_assert(sizeof(Hello) == 16 && sizeof(Ack) == 8 && sizeof(DataHeader) == 16);

enum class CommState { kConnecting, kHandshake, kConnected, kFailed };

}  // namespace
}  // namespace neuron::nrt_api

struct nrt_async_sendrecv_comm;

struct nrt_async_sendrecv_request {
  nrt_async_sendrecv_comm* comm = nullptr;
  bool send = true;
  char* data = nullptr;
  size_t length = 0;  // the posted size
  neuron::nrt_api::DataHeader header{};
  size_t header_done = 0;
  size_t expected = 0;  // the message's bytes (a receive learns it from the header)
  size_t moved = 0;
  bool started = false;  // at the head of its communicator's queue
  std::chrono::steady_clock::time_point last_progress;
  bool done = false;
  NRT_STATUS status = NRT_SUCCESS;
  std::string reason;
};

struct nrt_async_sendrecv_comm {
  bool send = true;
  int lnc = 0;
  int peer_lnc = 0;
  in_addr_t peer = 0;  // network order
  int peer_port = 0;
  uint32_t seq = 0;
  neuron::nrt_api::CommState state = neuron::nrt_api::CommState::kConnecting;
  bool was_connected = false;
  NRT_STATUS fail_code = NRT_FAILURE;
  std::string reason;
  int fd = -1;
  bool dialing = false;  // a non-blocking connect is in progress on fd
  std::chrono::steady_clock::time_point deadline, next_retry;
  // Handshake bytes: out (hello or ack) and in (the dialer reads the ack).
  unsigned char hs_out[16] = {};
  size_t hs_out_len = 0, hs_out_done = 0;
  unsigned char hs_in[8] = {};
  size_t hs_in_done = 0;
  std::deque<nrt_async_sendrecv_request*> queue;  // unfinished, in order
  std::list<std::unique_ptr<nrt_async_sendrecv_request>> requests;  // not yet freed

  std::string Describe() const {
    char ip[INET_ADDRSTRLEN] = {};
    in_addr a{};
    a.s_addr = peer;
    inet_ntop(AF_INET, &a, ip, sizeof(ip));
    return send ? absl::StrFormat("send communicator lnc %d -> %s lnc %d", lnc, ip, peer_lnc)
                : absl::StrFormat("receive communicator lnc %d <- %s lnc %d", lnc, ip, peer_lnc);
  }
};

namespace neuron::nrt_api {
namespace {

using Comm = nrt_async_sendrecv_comm;
using Request = nrt_async_sendrecv_request;

// A dialer's connection waiting for its hello to be read and matched with
// an accept.
struct Incoming {
  int fd = -1;
  in_addr_t from = 0;
  Hello hello{};
  size_t hello_done = 0;
  Clock::time_point deadline;
};

struct Lnc {
  int id = 0;
  int listen_fd = -1;
  int base_port = kDefaultBasePort;
  std::chrono::seconds timeout{30};
  std::vector<std::unique_ptr<Comm>> comms;
  std::vector<Incoming> incoming;
  std::map<std::pair<in_addr_t, int>, uint32_t> connect_seq, accept_seq;
};

// Serializes init / close / shutdown, and the progress thread's start and
// stop (joined holding only this lock).
std::mutex g_life_mu;
std::thread g_thread;  // guarded by g_life_mu
// Everything else, taken by the API calls and by each pass of the thread.
std::mutex g_mu;
std::map<int, std::unique_ptr<Lnc>> g_lncs;  // guarded by g_mu
std::set<int> g_failed_close;                // guarded by g_mu
std::set<Comm*> g_comms;                     // guarded by g_mu
std::set<Request*> g_requests;               // guarded by g_mu
bool g_stop = false;                         // guarded by g_mu
int g_wake_fd = -1;

void Wake() {
  if (g_wake_fd < 0) return;
  const uint64_t one = 1;
  (void)!write(g_wake_fd, &one, sizeof(one));
}

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

bool IsLoopback(in_addr_t a) { return (ntohl(a) >> 24) == 127; }

// Whether this host owns the address (it can bind to it).
bool IsLocal(in_addr_t a) {
  if (IsLoopback(a)) return true;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = a;
  const bool ok = bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) == 0;
  close(fd);
  return ok;
}

// The dialer reached us from `from`; the accept named `named`.
bool SameHost(in_addr_t from, in_addr_t named) {
  if (from == named) return true;
  return IsLocal(from) && IsLocal(named);
}

void Tune(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

enum class Io { kDone, kBlocked, kClosed };

// One non-blocking transfer step: moves up to `n` bytes. kClosed sets why.
Io SendSome(int fd, const void* p, size_t n, size_t* moved, std::string* why) {
  *moved = 0;
  for (;;) {
    const ssize_t r = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r >= 0) {
      *moved = static_cast<size_t>(r);
      return Io::kDone;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Io::kBlocked;
    *why = absl::StrCat("the peer closed the connection (", std::strerror(errno), ")");
    return Io::kClosed;
  }
}

Io RecvSome(int fd, void* p, size_t n, size_t* moved, std::string* why) {
  *moved = 0;
  for (;;) {
    const ssize_t r = recv(fd, p, n, MSG_DONTWAIT);
    if (r > 0) {
      *moved = static_cast<size_t>(r);
      return Io::kDone;
    }
    if (r == 0) {
      *why = "the peer closed the connection";
      return Io::kClosed;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Io::kBlocked;
    *why = absl::StrCat("the connection broke (", std::strerror(errno), ")");
    return Io::kClosed;
  }
}

// A connection whose peer must not write: readable means closed, or a
// protocol error. Returns "" while healthy.
std::string CheckQuiet(int fd) {
  char byte;
  const ssize_t r = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (r == 0) return "the peer closed the connection";
  if (r > 0) return "the peer sent bytes it should not have (not a send/recv peer?)";
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return "";
  return absl::StrCat("the connection broke (", std::strerror(errno), ")");
}

// Fails the communicator: every unfinished request ends with `code`.
void FailComm(Comm& c, NRT_STATUS code, const std::string& why) {
  if (c.state == CommState::kFailed) return;
  c.state = CommState::kFailed;
  c.fail_code = code;
  c.reason = absl::StrCat(c.Describe(), ": ", why);
  CloseFd(c.fd);
  for (Request* r : c.queue) {
    r->done = true;
    r->status = code;
    r->reason = absl::StrFormat("%s of %d bytes on %s failed after %d bytes: %s",
                                r->send ? "send" : "receive", r->length, c.Describe(), r->moved,
                                why);
  }
  c.queue.clear();
}

void Sooner(Clock::time_point* next, Clock::time_point t) {
  if (t < *next) *next = t;
}

// Moves the head requests of a connected communicator as far as the socket
// allows.
void Transfer(Comm& c, const Lnc& l, Clock::time_point now, Clock::time_point* next) {
  if (c.send) {
    if (std::string why = CheckQuiet(c.fd); !why.empty()) {
      FailComm(c, NRT_FAILURE, why);
      return;
    }
  }
  size_t budget = kPassBudget;
  std::string why;
  while (!c.queue.empty() && budget > 0) {
    Request& r = *c.queue.front();
    if (!r.started) {
      r.started = true;
      r.last_progress = now;
    }
    size_t n = 0;
    Io io = Io::kDone;
    if (r.header_done < sizeof(DataHeader)) {
      char* h = reinterpret_cast<char*>(&r.header) + r.header_done;
      const size_t left = sizeof(DataHeader) - r.header_done;
      io = c.send ? SendSome(c.fd, h, left, &n, &why) : RecvSome(c.fd, h, left, &n, &why);
      r.header_done += n;
      if (n > 0) r.last_progress = now;
      if (io == Io::kDone && r.header_done == sizeof(DataHeader) && !c.send) {
        if (r.header.magic != kDataMagic) {
          FailComm(c, NRT_FAILURE, "the peer sent a malformed message header");
          return;
        }
        if (r.header.length > r.length) {
          FailComm(c, NRT_FAILURE,
                   absl::StrFormat("the peer sent a %d-byte tensor to a %d-byte receive",
                                   r.header.length, r.length));
          return;
        }
        r.expected = r.header.length;
      }
    } else if (r.moved < r.expected) {
      const size_t chunk = std::min(r.expected - r.moved, budget);
      io = c.send ? SendSome(c.fd, r.data + r.moved, chunk, &n, &why)
                  : RecvSome(c.fd, r.data + r.moved, chunk, &n, &why);
      r.moved += n;
      budget -= n;
      if (n > 0) r.last_progress = now;
    }
    if (io == Io::kClosed) {
      FailComm(c, NRT_FAILURE, why);
      return;
    }
    if (r.header_done == sizeof(DataHeader) && r.moved == r.expected) {
      r.done = true;
      r.status = NRT_SUCCESS;
      c.queue.pop_front();
      continue;
    }
    if (io == Io::kBlocked) break;
  }
  if (!c.queue.empty()) {
    const Request& r = *c.queue.front();
    const Clock::time_point give_up = r.last_progress + l.timeout;
    if (now >= give_up) {
      FailComm(c, NRT_TIMEOUT,
               absl::StrFormat("no byte moved for %d s (NEURON_RT_EXEC_TIMEOUT)",
                               l.timeout.count()));
      return;
    }
    Sooner(next, give_up);
  }
}

// Starts (or checks) the dialer's non-blocking connect.
void Dial(Comm& c, Clock::time_point now, Clock::time_point* next) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = c.peer;
  sa.sin_port = htons(static_cast<uint16_t>(c.peer_port));
  if (c.fd < 0) {
    if (now < c.next_retry) {
      Sooner(next, c.next_retry);
      return;
    }
    c.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (c.fd < 0) {
      FailComm(c, NRT_RESOURCE, absl::StrCat("cannot open a socket: ", std::strerror(errno)));
      return;
    }
    c.dialing = true;
  }
  // connect() again reports how the attempt in progress went.
  int err = 0;
  if (connect(c.fd, reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) != 0) err = errno;
  if (err == 0 || err == EISCONN) {
    Tune(c.fd);
    c.dialing = false;
    c.state = CommState::kHandshake;
    Hello h{htonl(kHelloMagic), htonl(static_cast<uint32_t>(c.lnc)),
            htonl(static_cast<uint32_t>(c.peer_lnc)), htonl(c.seq)};
    std::memcpy(c.hs_out, &h, sizeof(h));
    c.hs_out_len = sizeof(h);
    return;
  }
  if (err == EINPROGRESS || err == EALREADY || err == EINTR) return;  // wait for POLLOUT
  // Refused (the peer's core is not listening yet) or unreachable: again
  // a little later, until the deadline.
  CloseFd(c.fd);
  c.dialing = false;
  c.next_retry = now + kRetryInterval;
  Sooner(next, c.next_retry);
}

void Handshake(Comm& c) {
  std::string why;
  while (c.hs_out_done < c.hs_out_len) {
    size_t n = 0;
    Io io = SendSome(c.fd, c.hs_out + c.hs_out_done, c.hs_out_len - c.hs_out_done, &n, &why);
    if (io == Io::kClosed) return FailComm(c, NRT_FAILURE, absl::StrCat("during the handshake, ", why));
    if (io == Io::kBlocked) return;
    c.hs_out_done += n;
  }
  if (!c.send) {  // the acceptor is done once its ack is out
    c.state = CommState::kConnected;
    c.was_connected = true;
    return;
  }
  while (c.hs_in_done < sizeof(Ack)) {
    size_t n = 0;
    Io io = RecvSome(c.fd, c.hs_in + c.hs_in_done, sizeof(Ack) - c.hs_in_done, &n, &why);
    if (io == Io::kClosed) {
      return FailComm(c, NRT_FAILURE,
                      absl::StrCat("during the handshake, ", why,
                                   " (no matching nrt_async_sendrecv_accept, or its core closed)"));
    }
    if (io == Io::kBlocked) return;
    c.hs_in_done += n;
  }
  Ack ack;
  std::memcpy(&ack, c.hs_in, sizeof(ack));
  if (ntohl(ack.magic) != kAckMagic) {
    return FailComm(c, NRT_FAILURE, "the peer answered the handshake with something else");
  }
  c.state = CommState::kConnected;
  c.was_connected = true;
}

// Accepts new connections, reads hellos, pairs them with accepts.
void ServeListener(Lnc& l, Clock::time_point now, Clock::time_point* next) {
  for (;;) {
    sockaddr_in from{};
    socklen_t len = sizeof(from);
    const int fd = accept4(l.listen_fd, reinterpret_cast<sockaddr*>(&from), &len,
                           SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) break;  // EAGAIN, or a connection that vanished meanwhile
    Tune(fd);
    Incoming in;
    in.fd = fd;
    in.from = from.sin_addr.s_addr;
    in.deadline = now + l.timeout;
    l.incoming.push_back(in);
  }
  std::vector<Incoming> keep;
  for (Incoming& in : l.incoming) {
    std::string why;
    bool drop = false;
    while (in.hello_done < sizeof(Hello)) {
      size_t n = 0;
      Io io = RecvSome(in.fd, reinterpret_cast<char*>(&in.hello) + in.hello_done,
                       sizeof(Hello) - in.hello_done, &n, &why);
      if (io == Io::kClosed) drop = true;
      if (io != Io::kDone) break;
      in.hello_done += n;
    }
    if (!drop && in.hello_done == sizeof(Hello)) {
      const bool valid = ntohl(in.hello.magic) == kHelloMagic &&
                         static_cast<int>(ntohl(in.hello.dst_lnc)) == l.id;
      Comm* match = nullptr;
      for (auto& c : l.comms) {
        if (!valid || c->send || c->state != CommState::kConnecting) continue;
        if (c->peer_lnc == static_cast<int>(ntohl(in.hello.src_lnc)) &&
            c->seq == ntohl(in.hello.seq) && SameHost(in.from, c->peer)) {
          match = c.get();
          break;
        }
      }
      if (!valid) {
        drop = true;
      } else if (match != nullptr) {
        match->fd = in.fd;
        match->state = CommState::kHandshake;
        Ack ack{htonl(kAckMagic), 0};
        std::memcpy(match->hs_out, &ack, sizeof(ack));
        match->hs_out_len = sizeof(ack);
        continue;  // the communicator owns the socket now
      } else if (!CheckQuiet(in.fd).empty()) {
        drop = true;  // the dialer gave up
      }
    }
    if (drop || now >= in.deadline) {
      CloseFd(in.fd);
      continue;
    }
    Sooner(next, in.deadline);
    keep.push_back(in);
  }
  l.incoming = std::move(keep);
}

void Step(Lnc& l, Clock::time_point now, Clock::time_point* next) {
  ServeListener(l, now, next);
  for (auto& cp : l.comms) {
    Comm& c = *cp;
    if (c.state == CommState::kConnecting && c.send) Dial(c, now, next);
    if (c.state == CommState::kHandshake) Handshake(c);
    if (c.state == CommState::kConnecting || c.state == CommState::kHandshake) {
      if (now >= c.deadline) {
        FailComm(c, NRT_TIMEOUT,
                 absl::StrFormat("not connected within %d s (NEURON_RT_EXEC_TIMEOUT)%s",
                                 l.timeout.count(),
                                 c.send ? "; is the peer's core initialized and accepting?"
                                        : "; did the peer connect?"));
        continue;
      }
      Sooner(next, c.deadline);
    }
    if (c.state == CommState::kConnected) Transfer(c, l, now, next);
  }
}

// What each socket waits for.
void AddPollFds(const Lnc& l, std::vector<pollfd>* fds) {
  fds->push_back({l.listen_fd, POLLIN, 0});
  for (const Incoming& in : l.incoming) fds->push_back({in.fd, POLLIN, 0});
  for (const auto& cp : l.comms) {
    const Comm& c = *cp;
    if (c.fd < 0) continue;
    short events = 0;
    switch (c.state) {
      case CommState::kConnecting:
        events = POLLOUT;  // a connect in progress
        break;
      case CommState::kHandshake:
        events = c.hs_out_done < c.hs_out_len ? POLLOUT : POLLIN;
        break;
      case CommState::kConnected:
        // A receive side is read only for a posted receive (the rest waits
        // in the socket); a send side watches for the peer going away.
        if (c.send) events = static_cast<short>(POLLIN | (c.queue.empty() ? 0 : POLLOUT));
        else if (!c.queue.empty()) events = POLLIN;
        break;
      case CommState::kFailed:
        break;
    }
    if (events != 0) fds->push_back({c.fd, events, 0});
  }
}

void ProgressLoop() {
  std::vector<pollfd> fds;
  for (;;) {
    int timeout_ms = -1;
    {
      std::lock_guard<std::mutex> lock(g_mu);
      if (g_stop) return;
      const Clock::time_point now = Clock::now();
      Clock::time_point next = Clock::time_point::max();
      fds.clear();
      fds.push_back({g_wake_fd, POLLIN, 0});
      for (auto& [id, l] : g_lncs) {
        Step(*l, now, &next);
        AddPollFds(*l, &fds);
      }
      if (next != Clock::time_point::max()) {
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1;
        timeout_ms = static_cast<int>(std::clamp<int64_t>(ms, 0, 60'000));
      }
    }
    const int n = poll(fds.data(), fds.size(), timeout_ms);
    if (n > 0 && (fds[0].revents & POLLIN)) {
      uint64_t count;
      (void)!read(g_wake_fd, &count, sizeof(count));
    }
  }
}

// Closes everything of a core; returns what was still unfinished.
void TearDown(Lnc& l, int* unconnected, int* in_flight) {
  for (auto& cp : l.comms) {
    Comm& c = *cp;
    if (!c.was_connected) ++*unconnected;
    *in_flight += static_cast<int>(c.queue.size());
    CloseFd(c.fd);
    for (auto& r : c.requests) g_requests.erase(r.get());
    g_comms.erase(&c);
  }
  for (Incoming& in : l.incoming) CloseFd(in.fd);
  CloseFd(l.listen_fd);
}

// Stops the progress thread when no core uses it. Caller holds g_life_mu.
void StopThreadIfIdle() {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_lncs.empty() || !g_thread.joinable()) return;
    g_stop = true;
    Wake();
  }
  g_thread.join();
  std::lock_guard<std::mutex> lock(g_mu);
  g_stop = false;
  CloseFd(g_wake_fd);
}

// The initialized core, or a failure naming the function.
NRT_STATUS FindLnc(const char* function, int lnc, Lnc** out) {
  auto it = g_lncs.find(lnc);
  if (it == g_lncs.end()) {
    return Fail(NRT_FAILURE,
                absl::StrFormat("%s: lnc %d is not initialized (nrt_async_sendrecv_init)", function, lnc));
  }
  *out = it->second.get();
  return NRT_SUCCESS;
}

NRT_STATUS NewComm(const char* function, const char* peer_ip, int peer_lnc, int lnc, bool send,
                   nrt_async_sendrecv_comm_t** out) {
  if (out == nullptr) return Fail(NRT_INVALID, absl::StrFormat("%s: null communicator pointer", function));
  *out = nullptr;
  if (peer_ip == nullptr) return Fail(NRT_INVALID, absl::StrFormat("%s: null peer address", function));
  if (peer_lnc < 0) {
    return Fail(NRT_INVALID, absl::StrFormat("%s: peer lnc %d is negative", function, peer_lnc));
  }
  absl::StatusOr<sockaddr_in> addr = collectives::net::ParseHost(peer_ip);
  if (!addr.ok()) {
    return Fail(NRT_INVALID, absl::StrFormat("%s: peer address '%s': %s", function, peer_ip,
                                             addr.status().message()));
  }
  std::lock_guard<std::mutex> lock(g_mu);
  Lnc* l = nullptr;
  if (NRT_STATUS s = FindLnc(function, lnc, &l); s != NRT_SUCCESS) return s;
  if (static_cast<int>(l->comms.size()) >= kMaxCommunicatorsPerLnc) {
    return Fail(NRT_RESOURCE,
                absl::StrFormat("%s: lnc %d already has %d communicators, the most it may have", function,
                                lnc, kMaxCommunicatorsPerLnc));
  }
  if (send && l->base_port + peer_lnc > 65535) {
    return Fail(NRT_INVALID, absl::StrFormat("%s: peer lnc %d would listen past port 65535 (base %d)",
                                             function, peer_lnc, l->base_port));
  }
  auto c = std::make_unique<Comm>();
  c->send = send;
  c->lnc = lnc;
  c->peer_lnc = peer_lnc;
  c->peer = addr->sin_addr.s_addr;
  c->peer_port = l->base_port + peer_lnc;
  auto& seqs = send ? l->connect_seq : l->accept_seq;
  c->seq = seqs[{c->peer, peer_lnc}]++;
  const Clock::time_point now = Clock::now();
  c->deadline = now + l->timeout;
  c->next_retry = now;
  *out = c.get();
  g_comms.insert(c.get());
  l->comms.push_back(std::move(c));
  Wake();
  return NRT_SUCCESS;
}

NRT_STATUS Post(const char* function, nrt_tensor_t* tensor, size_t offset, size_t length,
                nrt_async_sendrecv_comm_t* comm, bool send, nrt_async_sendrecv_request_t** out) {
  if (out == nullptr) return Fail(NRT_INVALID, absl::StrFormat("%s: null request pointer", function));
  *out = nullptr;
  if (tensor == nullptr) return Fail(NRT_INVALID_HANDLE, absl::StrFormat("%s: null tensor", function));
  if (comm == nullptr) return Fail(NRT_INVALID_HANDLE, absl::StrFormat("%s: null communicator", function));
  runtime::TensorBuffer* buffer = tensor->buffer();
  if (buffer == nullptr) {
    return Fail(NRT_INVALID,
                absl::StrFormat("%s: tensor '%s' has no storage", function, tensor->name));
  }
  if (offset > buffer->size() || length > buffer->size() - offset) {
    return Fail(NRT_INVALID, absl::StrFormat("%s: %d bytes at offset %d is outside tensor '%s' (%d bytes)",
                                             function, length, offset, tensor->name, buffer->size()));
  }
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_comms.count(comm)) {
    return Fail(NRT_INVALID_HANDLE,
                absl::StrFormat("%s: not a live communicator (closed with its core?)", function));
  }
  Comm& c = *comm;
  if (c.send != send) {
    return Fail(NRT_INVALID, absl::StrFormat("%s: %s cannot %s", function, c.Describe(),
                                             send ? "send" : "receive"));
  }
  if (c.state == CommState::kFailed) {
    return Fail(NRT_FAILURE, absl::StrCat(function, ": ", c.reason));
  }
  if (c.state != CommState::kConnected) {
    return Fail(NRT_FAILURE, absl::StrFormat("%s: %s is not connected yet (wait for "
                                             "nrt_async_sendrecv_test_comm)",
                                             function, c.Describe()));
  }
  if (static_cast<int>(c.queue.size()) >= kMaxPendingRequests) {
    return Fail(NRT_RESOURCE, absl::StrFormat("%s: %s already has %d requests in flight, the most "
                                              "it may have",
                                              function, c.Describe(), kMaxPendingRequests));
  }
  auto r = std::make_unique<Request>();
  r->comm = comm;
  r->send = send;
  r->data = static_cast<char*>(buffer->data()) + offset;
  r->length = length;
  if (send) {
    r->header.magic = kDataMagic;
    r->header.length = length;
    r->expected = length;
  }
  *out = r.get();
  c.queue.push_back(r.get());
  g_requests.insert(r.get());
  c.requests.push_back(std::move(r));
  Wake();
  return NRT_SUCCESS;
}

}  // namespace

void ShutdownSendRecv() {
  std::lock_guard<std::mutex> life(g_life_mu);
  {
    std::lock_guard<std::mutex> lock(g_mu);
    int unconnected = 0, in_flight = 0;
    for (auto& [id, l] : g_lncs) TearDown(*l, &unconnected, &in_flight);
    g_lncs.clear();
    g_failed_close.clear();
  }
  StopThreadIfIdle();
}

}  // namespace neuron::nrt_api

using namespace neuron::nrt_api;  // NOLINT: the C API is this file's whole job

extern "C" {

NRT_STATUS nrt_async_sendrecv_get_max_num_communicators_per_lnc(int* num) {
  if (num == nullptr) {
    return Fail(NRT_INVALID, "nrt_async_sendrecv_get_max_num_communicators_per_lnc: null pointer");
  }
  *num = kMaxCommunicatorsPerLnc;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_async_sendrecv_get_max_num_pending_request(int* num) {
  if (num == nullptr) {
    return Fail(NRT_INVALID, "nrt_async_sendrecv_get_max_num_pending_request: null pointer");
  }
  *num = kMaxPendingRequests;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_async_sendrecv_init(int lnc) {
  static constexpr const char* kFn = "nrt_async_sendrecv_init";
  std::lock_guard<std::mutex> life(g_life_mu);
  int base = kDefaultBasePort;
  std::chrono::seconds timeout{30};
  {
    RuntimeRef rt(kFn);
    if (!rt.ok()) return rt.status();
    const neuron::config::RuntimeConfig& config = rt->config();
    if (!config.async_sendrecv_experimental) {
      return Fail(NRT_FAILURE, "nrt_async_sendrecv_init: async send/recv is experimental; set "
                               "NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED=1 to use it");
    }
    if (absl::StatusOr<neuron::runtime::Core*> core = rt->GetCore(lnc); !core.ok()) {
      return Fail(kFn, core.status());
    }
    if (config.async_sendrecv_bootstrap_port != 0) {
      base = static_cast<int>(config.async_sendrecv_bootstrap_port);
    }
    timeout = std::chrono::seconds(std::max<uint64_t>(1, config.exec_timeout_s));
  }
  const int port = base + lnc;
  if (port > 65535) {
    return Fail(NRT_INVALID,
                absl::StrFormat("%s: lnc %d would listen on port %d (NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_"
                                "PORT %d + lnc), past 65535",
                                kFn, lnc, port, base));
  }
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_failed_close.count(lnc)) {
      return Fail(NRT_FAILURE, absl::StrFormat("%s: the last nrt_async_sendrecv_close(%d) failed; lnc "
                                               "%d cannot start again before nrt_close",
                                               kFn, lnc, lnc));
    }
    if (g_lncs.count(lnc)) {
      return Fail(NRT_FAILURE, absl::StrFormat("%s: lnc %d is already initialized", kFn, lnc));
    }
    sockaddr_in any{};
    any.sin_family = AF_INET;
    any.sin_addr.s_addr = htonl(INADDR_ANY);
    any.sin_port = htons(static_cast<uint16_t>(port));
    absl::StatusOr<int> fd = neuron::collectives::net::Listen(any);
    if (!fd.ok()) {
      return Fail(NRT_FAILURE,
                  absl::StrFormat("%s: lnc %d: %s (the port is NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT "
                                  "%d + lnc)",
                                  kFn, lnc, fd.status().message(), base));
    }
    fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) | O_NONBLOCK);
    auto l = std::make_unique<Lnc>();
    l->id = lnc;
    l->listen_fd = *fd;
    l->base_port = base;
    l->timeout = timeout;
    g_lncs[lnc] = std::move(l);
    if (g_wake_fd < 0) g_wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    Wake();
  }
  if (!g_thread.joinable()) g_thread = std::thread(ProgressLoop);
  return NRT_SUCCESS;
}

NRT_STATUS nrt_async_sendrecv_close(int lnc) {
  static constexpr const char* kFn = "nrt_async_sendrecv_close";
  std::lock_guard<std::mutex> life(g_life_mu);
  int unconnected = 0, in_flight = 0;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    Lnc* l = nullptr;
    if (NRT_STATUS s = FindLnc(kFn, lnc, &l); s != NRT_SUCCESS) return s;
    TearDown(*l, &unconnected, &in_flight);
    g_lncs.erase(lnc);
    if (unconnected > 0 || in_flight > 0) g_failed_close.insert(lnc);
    Wake();
  }
  StopThreadIfIdle();
  if (unconnected > 0 || in_flight > 0) {
    return Fail(NRT_FAILURE,
                absl::StrFormat("%s: lnc %d had %d communicators never connected and %d requests in "
                                "flight (closed anyway)",
                                kFn, lnc, unconnected, in_flight));
  }
  return NRT_SUCCESS;
}

NRT_STATUS nrt_async_sendrecv_connect(const char* peer_ip, int peer_lnc, int lnc,
                                      nrt_async_sendrecv_comm_t** send_comm) {
  return NewComm("nrt_async_sendrecv_connect", peer_ip, peer_lnc, lnc, /*send=*/true, send_comm);
}

NRT_STATUS nrt_async_sendrecv_accept(const char* peer_ip, int peer_lnc, int lnc,
                                     nrt_async_sendrecv_comm_t** recv_comm) {
  return NewComm("nrt_async_sendrecv_accept", peer_ip, peer_lnc, lnc, /*send=*/false, recv_comm);
}

NRT_STATUS nrt_async_sendrecv_test_comm(nrt_async_sendrecv_comm_t* comm, bool* done) {
  static constexpr const char* kFn = "nrt_async_sendrecv_test_comm";
  if (done == nullptr) return Fail(NRT_INVALID, "nrt_async_sendrecv_test_comm: null result pointer");
  *done = false;
  std::lock_guard<std::mutex> lock(g_mu);
  if (comm == nullptr || !g_comms.count(comm)) {
    return Fail(NRT_INVALID_HANDLE,
                "nrt_async_sendrecv_test_comm: not a live communicator (closed with its core?)");
  }
  if (comm->state == CommState::kFailed) {
    return Fail(comm->fail_code, absl::StrCat(kFn, ": ", comm->reason));
  }
  *done = comm->state == CommState::kConnected;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_async_sendrecv_send_tensor(nrt_tensor_t* tensor, size_t offset, size_t length,
                                          nrt_async_sendrecv_comm_t* send_comm,
                                          nrt_async_sendrecv_request_t** request) {
  return Post("nrt_async_sendrecv_send_tensor", tensor, offset, length, send_comm, /*send=*/true,
              request);
}

NRT_STATUS nrt_async_sendrecv_recv_tensor(nrt_tensor_t* tensor, size_t offset, size_t length,
                                          nrt_async_sendrecv_comm_t* recv_comm,
                                          nrt_async_sendrecv_request_t** request) {
  return Post("nrt_async_sendrecv_recv_tensor", tensor, offset, length, recv_comm, /*send=*/false,
              request);
}

// A finished request is freed here, failed or not; a failure returns its
// status with the reason.
NRT_STATUS nrt_async_sendrecv_test_request(nrt_async_sendrecv_request_t* request, bool* done,
                                           size_t* size) {
  static constexpr const char* kFn = "nrt_async_sendrecv_test_request";
  if (done == nullptr) return Fail(NRT_INVALID, "nrt_async_sendrecv_test_request: null result pointer");
  *done = false;
  std::lock_guard<std::mutex> lock(g_mu);
  if (request == nullptr || !g_requests.count(request)) {
    return Fail(NRT_INVALID_HANDLE,
                "nrt_async_sendrecv_test_request: not a live request (already completed, or closed "
                "with its core?)");
  }
  Request& r = *request;
  if (!r.done) return NRT_SUCCESS;
  *done = true;
  if (size != nullptr) *size = r.moved;
  const NRT_STATUS status = r.status;
  const std::string reason = r.reason;
  g_requests.erase(request);
  auto& owned = r.comm->requests;
  for (auto it = owned.begin(); it != owned.end(); ++it) {
    if (it->get() == request) {
      owned.erase(it);
      break;
    }
  }
  if (status != NRT_SUCCESS) return Fail(status, absl::StrCat(kFn, ": ", reason));
  return NRT_SUCCESS;
}

NRT_STATUS nrt_async_sendrecv_flush(int lnc) {
  std::lock_guard<std::mutex> lock(g_mu);
  Lnc* l = nullptr;
  if (NRT_STATUS s = FindLnc("nrt_async_sendrecv_flush", lnc, &l); s != NRT_SUCCESS) return s;
  // Received bytes were written by recv(2) into host-visible memory before
  // their request finished; a fence orders them for the caller's reads.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return NRT_SUCCESS;
}

}  // extern "C"
