// The point-to-point engine (point_to_point.h): a listener per core, the
// dial / hello / ack handshake, and one poll()-driven progress thread.
#include "lib/collectives/point_to_point.h"

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
#include "lib/collectives/communicator.h"
#include "lib/collectives/gate.h"
#include "lib/collectives/job_secret.h"
#include "lib/collectives/net.h"
#include "lib/collectives/wire.h"
#include "lib/log/log.h"

namespace neuron::collectives::p2p {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kRetryInterval = std::chrono::milliseconds(50);
// Bytes one communicator moves per pass of the progress thread, so one busy
// connection does not hold the lock (and the API calls) for long.
constexpr size_t kPassBudget = 8u << 20;

// Connection handshake: the acceptor's challenge, the dialer's hello, the
// acceptor's ack; a header before each message (wire.h).
using Challenge = wire::Challenge;
using Hello = wire::P2pHello;
using Ack = wire::P2pAck;
using DataHeader = wire::P2pDataHeader;

// Strays logged one by one per core; more are only counted.
constexpr int kLoggedStrays = 8;

// The dialer's proof: HMAC(secret, label, the acceptor's challenge nonce,
// hello up to the MAC), so a hello seen on the wire proves nothing on
// another connection. The acceptor answers with HMAC(secret, label, the
// hello with the dialer's fresh nonce), so each end knows the other holds
// the job's secret.
std::string ProofMac(const std::string& secret, std::string_view label,
                     std::string_view challenge_nonce, const Hello& h) {
  std::string data(label);
  data.append(challenge_nonce);
  data.append(reinterpret_cast<const char*>(&h), sizeof(Hello) - wire::kMacBytes);
  const Mac mac = HmacSha256(secret, data);
  return std::string(reinterpret_cast<const char*>(mac.data()), mac.size());
}
constexpr std::string_view kHelloLabel = "neuron-p2p hello";
constexpr std::string_view kAckLabel = "neuron-p2p ack";

bool MacMatches(const std::string& want, const uint8_t* got) {
  Mac a{}, b{};
  std::memcpy(a.data(), want.data(), a.size());
  std::memcpy(b.data(), got, b.size());
  return MacEqual(a, b);
}

enum class CommState { kConnecting, kHandshake, kConnected, kFailed };

// The engine's side of a communicator and of a request. `handle` is what
// the caller holds: g_comms / g_requests map the live ones back here, so a
// stale handle is refused without being read.
struct CommImpl;

struct RequestImpl {
  std::unique_ptr<Request> handle;  // what the caller holds
  CommImpl* comm = nullptr;
  bool send = true;
  char* data = nullptr;  // only read for a send
  size_t length = 0;     // the posted size
  DataHeader header{};
  size_t header_done = 0;
  size_t expected = 0;  // the message's bytes (a receive learns it from the header)
  size_t moved = 0;
  bool started = false;  // at the head of its communicator's queue
  // Started + the timeout: a peer that drips bytes cannot keep it alive.
  Clock::time_point deadline;
  bool done = false;
  NRT_STATUS status = NRT_SUCCESS;
  std::string reason;
};

struct CommImpl {
  std::unique_ptr<Comm> handle;  // what the caller holds
  bool send = true;
  int lnc = 0;
  int peer_lnc = 0;
  in_addr_t peer = 0;  // network order
  int peer_port = 0;
  uint32_t seq = 0;
  CommState state = CommState::kConnecting;
  bool was_connected = false;
  NRT_STATUS fail_code = NRT_FAILURE;
  std::string reason;
  int fd = -1;
  bool dialing = false;  // a non-blocking connect is in progress on fd
  Clock::time_point deadline, next_retry;
  // Handshake bytes: out (hello or ack) and in (the dialer reads the
  // challenge, then the ack).
  unsigned char hs_out[sizeof(Hello)] = {};
  size_t hs_out_len = 0, hs_out_done = 0;
  unsigned char hs_in[std::max(sizeof(Challenge), sizeof(Ack))] = {};
  size_t hs_in_done = 0;
  bool challenged = false;  // the dialer has read the challenge
  Hello hello{};  // the dialer's, for checking the ack
  // Messages framed so far (DataHeader::seq).
  uint32_t messages = 0;
  std::deque<RequestImpl*> queue;                    // unfinished, in order
  std::list<std::unique_ptr<RequestImpl>> requests;  // not yet freed

  std::string Describe() const {
    char ip[INET_ADDRSTRLEN] = {};
    in_addr a{};
    a.s_addr = peer;
    inet_ntop(AF_INET, &a, ip, sizeof(ip));
    return send ? absl::StrFormat("send communicator lnc %d -> %s lnc %d", lnc, ip, peer_lnc)
                : absl::StrFormat("receive communicator lnc %d <- %s lnc %d", lnc, ip, peer_lnc);
  }
};

// A dialer's connection waiting for its hello to be read and matched with
// an accept.
struct Incoming {
  int fd = -1;
  in_addr_t from = 0;
  std::string challenge_nonce;  // sent on accept; the hello's MAC covers it
  Hello hello{};
  size_t hello_done = 0;
  int from_port = 0;
  Clock::time_point identify_by;  // the hello must be complete by then
  Clock::time_point deadline;     // and matched with an accept by then
};

struct Lnc {
  int id = 0;
  int listen_fd = -1;
  int base_port = kDefaultBasePort;
  std::chrono::seconds timeout{30};
  std::vector<std::unique_ptr<CommImpl>> comms;
  std::vector<Incoming> incoming;
  std::map<std::pair<in_addr_t, int>, uint32_t> connect_seq, accept_seq;
  std::string secret;  // the job's (job_secret.h); "" : none
  Clock::time_point accept_resume;  // after a failed accept(2)
  int logged = 0;                   // strays logged
};

// A connection that is not a send/recv peer: dropped, logged once.
void Stray(Lnc& l, Incoming& in, const std::string& why) {
  if (l.logged < kLoggedStrays) {
    char ip[INET_ADDRSTRLEN] = {};
    in_addr a{};
    a.s_addr = in.from;
    inet_ntop(AF_INET, &a, ip, sizeof(ip));
    NEURON_LOG(NRT, kWarn, "lnc %d's send/recv listener ignored a connection from %s:%d: %s%s",
               l.id, ip, in.from_port, why,
               ++l.logged == kLoggedStrays ? " (further ones are not logged)" : "");
  }
  if (in.fd >= 0) close(in.fd);
  in.fd = -1;
}

// Serializes init / close / shutdown, and the progress thread's start and
// stop (joined holding only this lock).
std::mutex g_life_mu;
std::thread g_thread;  // guarded by g_life_mu
// Everything else, taken by the API calls and by each pass of the thread.
std::mutex g_mu;
std::map<int, std::unique_ptr<Lnc>> g_lncs;         // guarded by g_mu
std::set<int> g_failed_close;                       // guarded by g_mu
std::map<const Comm*, CommImpl*> g_comms;           // guarded by g_mu
std::map<const Request*, RequestImpl*> g_requests;  // guarded by g_mu
bool g_stop = false;                                // guarded by g_mu
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
void FailComm(CommImpl& c, NRT_STATUS code, const std::string& why) {
  if (c.state == CommState::kFailed) return;
  c.state = CommState::kFailed;
  c.fail_code = code;
  c.reason = absl::StrCat(c.Describe(), ": ", why);
  CloseFd(c.fd);
  for (RequestImpl* r : c.queue) {
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
void Transfer(CommImpl& c, const Lnc& l, Clock::time_point now, Clock::time_point* next) {
  if (c.send) {
    if (std::string why = CheckQuiet(c.fd); !why.empty()) {
      FailComm(c, NRT_FAILURE, why);
      return;
    }
  }
  size_t budget = kPassBudget;
  std::string why;
  while (!c.queue.empty() && budget > 0) {
    RequestImpl& r = *c.queue.front();
    if (!r.started) {
      r.started = true;
      r.deadline = now + l.timeout;
      if (c.send) r.header.seq = c.messages++;
    }
    size_t n = 0;
    Io io = Io::kDone;
    if (r.header_done < sizeof(DataHeader)) {
      char* h = reinterpret_cast<char*>(&r.header) + r.header_done;
      const size_t left = sizeof(DataHeader) - r.header_done;
      io = c.send ? SendSome(c.fd, h, left, &n, &why) : RecvSome(c.fd, h, left, &n, &why);
      r.header_done += n;
      if (io == Io::kDone && r.header_done == sizeof(DataHeader) && !c.send) {
        auto h = wire::ParseP2pDataHeader(
            std::string_view(reinterpret_cast<const char*>(&r.header), sizeof(DataHeader)),
            c.messages, r.length);
        if (!h.ok()) {
          FailComm(c, NRT_FAILURE, absl::StrCat("the peer sent ", h.status().message()));
          return;
        }
        ++c.messages;
        r.expected = h->length;
      }
    } else if (r.moved < r.expected) {
      const size_t chunk = std::min(r.expected - r.moved, budget);
      io = c.send ? SendSome(c.fd, r.data + r.moved, chunk, &n, &why)
                  : RecvSome(c.fd, r.data + r.moved, chunk, &n, &why);
      r.moved += n;
      budget -= n;
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
    const RequestImpl& r = *c.queue.front();
    if (now >= r.deadline) {
      FailComm(c, NRT_TIMEOUT,
               absl::StrFormat("not finished within %d s of its start (NEURON_RT_EXEC_TIMEOUT; "
                               "%d of %d bytes moved)",
                               l.timeout.count(), r.moved, r.send ? r.length : r.expected));
      return;
    }
    Sooner(next, r.deadline);
  }
}

// Starts (or checks) the dialer's non-blocking connect.
void Dial(CommImpl& c, const Lnc& l, Clock::time_point now, Clock::time_point* next) {
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
    c.state = CommState::kHandshake;  // the acceptor's challenge comes first
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

// The dialer's hello, answering the acceptor's challenge.
void AnswerChallenge(CommImpl& c, const Lnc& l) {
  auto challenge = wire::ParseChallenge(
      std::string_view(reinterpret_cast<const char*>(c.hs_in), sizeof(Challenge)));
  if (!challenge.ok()) {
    return FailComm(c, NRT_FAILURE, absl::StrCat("the peer opened the handshake with ",
                                                 challenge.status().message()));
  }
  const bool theirs = (challenge->flags & wire::kFlagSecret) != 0;
  if (theirs != !l.secret.empty()) {
    return FailComm(c, NRT_FAILURE,
                    theirs ? "the peer has a job secret and this process none: give both the "
                             "same NEURON_TOOLS_JOB_SECRET"
                           : "the peer has no job secret and this process one: give both the "
                             "same NEURON_TOOLS_JOB_SECRET");
  }
  Hello h{};
  h.magic = htonl(wire::kP2pHelloMagic);
  h.src_lnc = htonl(static_cast<uint32_t>(c.lnc));
  h.dst_lnc = htonl(static_cast<uint32_t>(c.peer_lnc));
  h.seq = htonl(c.seq);
  h.proof.flags = l.secret.empty() ? 0 : wire::kFlagSecret;
  const std::string nonce = RandomBytes(wire::kNonceBytes);
  std::memcpy(h.proof.nonce, nonce.data(), wire::kNonceBytes);
  if (!l.secret.empty()) {
    const std::string mac = ProofMac(
        l.secret, kHelloLabel,
        std::string_view(reinterpret_cast<const char*>(challenge->nonce), wire::kNonceBytes), h);
    std::memcpy(h.proof.mac, mac.data(), wire::kMacBytes);
  }
  c.hello = h;
  std::memcpy(c.hs_out, &h, sizeof(h));
  c.hs_out_len = sizeof(h);
  c.hs_out_done = 0;
  c.hs_in_done = 0;
  c.challenged = true;
}

void Handshake(CommImpl& c, const Lnc& l) {
  std::string why;
  while (c.send && !c.challenged) {
    size_t n = 0;
    Io io = RecvSome(c.fd, c.hs_in + c.hs_in_done, sizeof(Challenge) - c.hs_in_done, &n, &why);
    if (io == Io::kClosed) {
      return FailComm(c, NRT_FAILURE, absl::StrCat("before the handshake, ", why));
    }
    if (io == Io::kBlocked) return;
    c.hs_in_done += n;
    if (c.hs_in_done == sizeof(Challenge)) AnswerChallenge(c, l);
    if (c.state != CommState::kHandshake) return;
  }
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
  auto ack = wire::ParseP2pAck(std::string_view(reinterpret_cast<const char*>(c.hs_in), sizeof(Ack)));
  if (!ack.ok()) {
    return FailComm(c, NRT_FAILURE, absl::StrCat("the peer answered the handshake with ",
                                                 ack.status().message()));
  }
  if (!l.secret.empty() && !MacMatches(ProofMac(l.secret, kAckLabel, {}, c.hello), ack->mac)) {
    return FailComm(c, NRT_FAILURE,
                    "the peer did not prove the job secret (another NEURON_TOOLS_JOB_SECRET, or "
                    "not a send/recv peer of this job)");
  }
  c.state = CommState::kConnected;
  c.was_connected = true;
}

// Accepts new connections (at most kMaxPendingConnections waiting, backing
// off when accept(2) fails), reads hellos, pairs them with accepts. A
// connection that does not send a valid hello within kIdentifyWindow is a
// stranger: dropped and logged, never fatal.
void ServeListener(Lnc& l, Clock::time_point now, Clock::time_point* next) {
  while (l.incoming.size() < kMaxPendingConnections && now >= l.accept_resume) {
    sockaddr_in from{};
    socklen_t len = sizeof(from);
    const int fd = accept4(l.listen_fd, reinterpret_cast<sockaddr*>(&from), &len,
                           SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED) {
        // Out of descriptors or memory: the listener stays readable, so
        // polling it again at once would spin.
        NEURON_LOG(NRT, kWarn, "lnc %d's send/recv listener: accept failed (%s); retrying in %d ms",
                   l.id, std::strerror(errno), static_cast<int>(kAcceptBackoff.count()));
        l.accept_resume = now + kAcceptBackoff;
      }
      break;
    }
    Tune(fd);
    Incoming in;
    in.fd = fd;
    in.from = from.sin_addr.s_addr;
    in.from_port = ntohs(from.sin_port);
    in.identify_by = now + std::min<Clock::duration>(kIdentifyWindow, l.timeout);
    in.deadline = now + l.timeout;
    in.challenge_nonce = RandomBytes(wire::kNonceBytes);
    Challenge challenge{};
    challenge.magic = wire::kChallengeMagic;
    challenge.version = wire::kProtocolVersion;
    challenge.flags = l.secret.empty() ? 0 : wire::kFlagSecret;
    std::memcpy(challenge.nonce, in.challenge_nonce.data(), wire::kNonceBytes);
    // A fresh socket's buffer takes the few bytes at once.
    if (send(fd, &challenge, sizeof(challenge), MSG_NOSIGNAL | MSG_DONTWAIT) !=
        static_cast<ssize_t>(sizeof(challenge))) {
      Stray(l, in, "it closed before it was challenged");
      continue;
    }
    l.incoming.push_back(in);
  }
  if (now < l.accept_resume) Sooner(next, l.accept_resume);
  std::vector<Incoming> keep;
  for (Incoming& in : l.incoming) {
    std::string why;
    while (in.fd >= 0 && in.hello_done < sizeof(Hello)) {
      size_t n = 0;
      const size_t before = in.hello_done;
      Io io = RecvSome(in.fd, reinterpret_cast<char*>(&in.hello) + in.hello_done,
                       sizeof(Hello) - in.hello_done, &n, &why);
      if (io == Io::kClosed) {
        Stray(l, in, in.hello_done == 0 ? "it closed without a word"
                                        : absl::StrCat("it closed after ", in.hello_done,
                                                       " bytes of a hello"));
      }
      if (io != Io::kDone) break;
      in.hello_done += n;
      if (before < 4 && in.hello_done >= 4 && ntohl(in.hello.magic) != wire::kP2pHelloMagic) {
        Stray(l, in, "it sent something other than a send/recv hello");
      }
    }
    if (in.fd < 0) continue;
    if (in.hello_done < sizeof(Hello)) {
      if (now >= in.identify_by) {
        Stray(l, in, in.hello_done == 0
                         ? "it said nothing in time"
                         : absl::StrCat("it sent only ", in.hello_done, " bytes of a hello in time"));
        continue;
      }
      Sooner(next, in.identify_by);
      keep.push_back(in);
      continue;
    }
    auto hello = wire::ParseP2pHello(
        std::string_view(reinterpret_cast<const char*>(&in.hello), sizeof(Hello)), l.id);
    if (!hello.ok()) {
      Stray(l, in, std::string(hello.status().message()));
      continue;
    }
    const bool has = (in.hello.proof.flags & wire::kFlagSecret) != 0;
    if (has != !l.secret.empty()) {
      Stray(l, in, has ? "a dialer with a job secret, while this process has none"
                       : "a hello without the job secret (a stranger, or a process started "
                         "without NEURON_TOOLS_JOB_SECRET)");
      continue;
    }
    if (has && !MacMatches(ProofMac(l.secret, kHelloLabel, in.challenge_nonce, in.hello),
                           in.hello.proof.mac)) {
      Stray(l, in, "its hello did not prove the job secret for this connection");
      continue;
    }
    CommImpl* match = nullptr;
    for (auto& c : l.comms) {
      if (c->send || c->state != CommState::kConnecting) continue;
      if (c->peer_lnc == static_cast<int>(ntohl(in.hello.src_lnc)) &&
          c->seq == ntohl(in.hello.seq) && SameHost(in.from, c->peer)) {
        match = c.get();
        break;
      }
    }
    if (match != nullptr) {
      match->fd = in.fd;
      match->state = CommState::kHandshake;
      Ack ack{};
      ack.magic = htonl(wire::kP2pAckMagic);
      if (!l.secret.empty()) {
        const std::string mac = ProofMac(l.secret, kAckLabel, {}, in.hello);
        std::memcpy(ack.mac, mac.data(), wire::kMacBytes);
      }
      std::memcpy(match->hs_out, &ack, sizeof(ack));
      match->hs_out_len = sizeof(ack);
      continue;  // the communicator owns the socket now
    }
    if (!CheckQuiet(in.fd).empty() || now >= in.deadline) {
      CloseFd(in.fd);  // the dialer gave up, or no accept came for it
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
    CommImpl& c = *cp;
    if (c.state == CommState::kConnecting && c.send) Dial(c, l, now, next);
    if (c.state == CommState::kHandshake) Handshake(c, l);
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
  // Not while the pending connections are at their cap, or accept(2) backs off.
  if (l.incoming.size() < kMaxPendingConnections && Clock::now() >= l.accept_resume) {
    fds->push_back({l.listen_fd, POLLIN, 0});
  }
  for (const Incoming& in : l.incoming) fds->push_back({in.fd, POLLIN, 0});
  for (const auto& cp : l.comms) {
    const CommImpl& c = *cp;
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
    CommImpl& c = *cp;
    if (!c.was_connected) ++*unconnected;
    *in_flight += static_cast<int>(c.queue.size());
    CloseFd(c.fd);
    for (auto& r : c.requests) g_requests.erase(r->handle.get());
    g_comms.erase(c.handle.get());
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

// The initialized core. Caller holds g_mu.
absl::StatusOr<Lnc*> FindLnc(int lnc) {
  auto it = g_lncs.find(lnc);
  if (it == g_lncs.end()) {
    return NrtError(NRT_FAILURE,
                    absl::StrFormat("lnc %d is not initialized (nrt_async_sendrecv_init)", lnc));
  }
  return it->second.get();
}

// The live communicator behind a handle. Caller holds g_mu.
absl::StatusOr<CommImpl*> FindComm(const Comm* comm) {
  auto it = g_comms.find(comm);
  if (it == g_comms.end()) {
    return NrtError(NRT_INVALID_HANDLE, "not a live communicator (closed with its core?)");
  }
  return it->second;
}

absl::StatusOr<Comm*> NewComm(const std::string& peer_ip, int peer_lnc, int lnc, bool send,
                              std::unique_ptr<Comm> handle) {
  if (peer_lnc < 0) {
    return NrtError(NRT_INVALID, absl::StrFormat("peer lnc %d is negative", peer_lnc));
  }
  absl::StatusOr<sockaddr_in> addr = net::ParseHost(peer_ip);
  if (!addr.ok()) {
    return NrtError(NRT_INVALID,
                    absl::StrFormat("peer address '%s': %s", peer_ip, addr.status().message()));
  }
  std::lock_guard<std::mutex> lock(g_mu);
  absl::StatusOr<Lnc*> found = FindLnc(lnc);
  if (!found.ok()) return found.status();
  Lnc* l = *found;
  if (static_cast<int>(l->comms.size()) >= kMaxCommunicatorsPerLnc) {
    return NrtError(NRT_RESOURCE,
                    absl::StrFormat("lnc %d already has %d communicators, the most it may have", lnc,
                                    kMaxCommunicatorsPerLnc));
  }
  if (send && l->base_port + peer_lnc > 65535) {
    return NrtError(NRT_INVALID, absl::StrFormat("peer lnc %d would listen past port 65535 (base %d)",
                                                 peer_lnc, l->base_port));
  }
  auto c = std::make_unique<CommImpl>();
  c->handle = handle != nullptr ? std::move(handle) : std::make_unique<Comm>();
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
  Comm* out = c->handle.get();
  g_comms[out] = c.get();
  l->comms.push_back(std::move(c));
  Wake();
  return out;
}

absl::StatusOr<Request*> Post(Comm* comm, char* data, size_t bytes, bool send,
                              std::unique_ptr<Request> handle) {
  std::lock_guard<std::mutex> lock(g_mu);
  absl::StatusOr<CommImpl*> found = FindComm(comm);
  if (!found.ok()) return found.status();
  CommImpl& c = **found;
  if (c.send != send) {
    return NrtError(NRT_INVALID,
                    absl::StrFormat("%s cannot %s", c.Describe(), send ? "send" : "receive"));
  }
  if (c.state == CommState::kFailed) return NrtError(NRT_FAILURE, c.reason);
  if (c.state != CommState::kConnected) {
    return NrtError(NRT_FAILURE, absl::StrFormat("%s is not connected yet (wait for "
                                                 "nrt_async_sendrecv_test_comm)",
                                                 c.Describe()));
  }
  if (static_cast<int>(c.queue.size()) >= kMaxPendingRequests) {
    return NrtError(NRT_RESOURCE, absl::StrFormat("%s already has %d requests in flight, the most "
                                                  "it may have",
                                                  c.Describe(), kMaxPendingRequests));
  }
  auto r = std::make_unique<RequestImpl>();
  r->handle = handle != nullptr ? std::move(handle) : std::make_unique<Request>();
  r->comm = &c;
  r->send = send;
  r->data = data;
  r->length = bytes;
  if (send) {
    r->header.magic = wire::kP2pDataMagic;
    r->header.length = bytes;
    r->expected = bytes;
  }
  Request* out = r->handle.get();
  c.queue.push_back(r.get());
  g_requests[out] = r.get();
  c.requests.push_back(std::move(r));
  Wake();
  return out;
}

}  // namespace

absl::Status Init(int lnc, int base_port, std::chrono::seconds timeout) {
  std::lock_guard<std::mutex> life(g_life_mu);
  const int base = base_port != 0 ? base_port : kDefaultBasePort;
  const int port = base + lnc;
  if (port > 65535) {
    return NrtError(NRT_INVALID,
                    absl::StrFormat("lnc %d would listen on port %d (NEURON_RT_ASYNC_SENDRECV_"
                                    "BOOTSTRAP_PORT %d + lnc), past 65535",
                                    lnc, port, base));
  }
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_failed_close.count(lnc)) {
      return NrtError(NRT_FAILURE,
                      absl::StrFormat("the last nrt_async_sendrecv_close(%d) failed; lnc %d cannot "
                                      "start again before nrt_close",
                                      lnc, lnc));
    }
    if (g_lncs.count(lnc)) {
      return NrtError(NRT_FAILURE, absl::StrFormat("lnc %d is already initialized", lnc));
    }
    // On the job's interface (NEURON_HOST_ADDR) where it is named, else
    // every interface: peers dial whatever address their caller gives.
    const config::EnvLookup env = config::ProcessEnv();
    absl::StatusOr<std::string> secret = JobSecretFromEnv(env);
    if (!secret.ok()) return NrtError(NRT_INVALID, std::string(secret.status().message()));
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_ANY);
    if (std::optional<std::string> host = env("NEURON_HOST_ADDR"); host && !host->empty()) {
      absl::StatusOr<sockaddr_in> a = net::ParseHost(*host);
      if (!a.ok()) {
        return NrtError(NRT_INVALID, absl::StrCat("NEURON_HOST_ADDR: ", a.status().message()));
      }
      at = *a;
    }
    at.sin_port = htons(static_cast<uint16_t>(port));
    absl::StatusOr<int> fd = net::Listen(at);
    if (!fd.ok()) {
      return NrtError(NRT_FAILURE,
                      absl::StrFormat("lnc %d: %s (the port is NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_"
                                      "PORT %d + lnc)",
                                      lnc, fd.status().message(), base));
    }
    fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) | O_NONBLOCK);
    auto l = std::make_unique<Lnc>();
    l->id = lnc;
    l->listen_fd = *fd;
    l->base_port = base;
    // Seconds far beyond any job would overflow the clock once added to now.
    l->timeout = std::clamp(timeout, std::chrono::seconds(1),
                            std::chrono::seconds(net::kMaxTimeoutSeconds));
    l->secret = *secret;
    g_lncs[lnc] = std::move(l);
    if (g_wake_fd < 0) g_wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    Wake();
  }
  if (!g_thread.joinable()) g_thread = std::thread(ProgressLoop);
  return absl::OkStatus();
}

absl::Status Close(int lnc) {
  std::lock_guard<std::mutex> life(g_life_mu);
  int unconnected = 0, in_flight = 0;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    absl::StatusOr<Lnc*> l = FindLnc(lnc);
    if (!l.ok()) return l.status();
    TearDown(**l, &unconnected, &in_flight);
    g_lncs.erase(lnc);
    if (unconnected > 0 || in_flight > 0) g_failed_close.insert(lnc);
    Wake();
  }
  StopThreadIfIdle();
  if (unconnected > 0 || in_flight > 0) {
    return NrtError(NRT_FAILURE,
                    absl::StrFormat("lnc %d had %d communicators never connected and %d requests "
                                    "in flight (closed anyway)",
                                    lnc, unconnected, in_flight));
  }
  return absl::OkStatus();
}

void Shutdown() {
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

absl::StatusOr<Comm*> Connect(const std::string& peer_ip, int peer_lnc, int lnc,
                              std::unique_ptr<Comm> handle) {
  return NewComm(peer_ip, peer_lnc, lnc, /*send=*/true, std::move(handle));
}

absl::StatusOr<Comm*> Accept(const std::string& peer_ip, int peer_lnc, int lnc,
                             std::unique_ptr<Comm> handle) {
  return NewComm(peer_ip, peer_lnc, lnc, /*send=*/false, std::move(handle));
}

absl::StatusOr<bool> IsConnected(const Comm* comm) {
  std::lock_guard<std::mutex> lock(g_mu);
  absl::StatusOr<CommImpl*> c = FindComm(comm);
  if (!c.ok()) return c.status();
  if ((*c)->state == CommState::kFailed) return NrtError((*c)->fail_code, (*c)->reason);
  return (*c)->state == CommState::kConnected;
}

absl::StatusOr<Request*> Send(Comm* comm, const void* data, size_t bytes,
                              std::unique_ptr<Request> handle) {
  // A send only reads the bytes.
  return Post(comm, const_cast<char*>(static_cast<const char*>(data)), bytes, /*send=*/true,
              std::move(handle));
}

absl::StatusOr<Request*> Recv(Comm* comm, void* data, size_t bytes,
                              std::unique_ptr<Request> handle) {
  return Post(comm, static_cast<char*>(data), bytes, /*send=*/false, std::move(handle));
}

absl::StatusOr<Completion> Test(Request* request) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_requests.find(request);
  if (it == g_requests.end()) {
    return NrtError(NRT_INVALID_HANDLE,
                    "not a live request (already completed, or closed with its core?)");
  }
  RequestImpl& r = *it->second;
  Completion out;
  if (!r.done) return out;
  out.done = true;
  out.bytes = r.moved;
  if (r.status != NRT_SUCCESS) out.status = NrtError(r.status, r.reason);
  g_requests.erase(it);
  auto& owned = r.comm->requests;
  for (auto o = owned.begin(); o != owned.end(); ++o) {
    if (o->get() == &r) {
      owned.erase(o);  // frees r and its handle
      break;
    }
  }
  return out;
}

absl::Status Flush(int lnc) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (absl::StatusOr<Lnc*> l = FindLnc(lnc); !l.ok()) return l.status();
  // Received bytes were written by recv(2) into host-visible memory before
  // their request finished; a fence orders them for the caller's reads.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return absl::OkStatus();
}

}  // namespace neuron::collectives::p2p
