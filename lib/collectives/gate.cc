#include "lib/collectives/gate.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/collectives/job_secret.h"
#include "lib/collectives/wire.h"
#include "lib/log/log.h"

namespace neuron::collectives {
namespace {

using wire::Proof;

// Strays logged one by one per listener; more are counted only, so a scan
// of many connections does not flood the log.
constexpr int kLoggedStrays = 8;

constexpr std::string_view kHelloLabel = "neuron-cc hello";
constexpr std::string_view kVerdictLabel = "neuron-cc verdict";

std::string VerdictMac(const std::string& secret, const uint8_t* dialer_nonce,
                       uint32_t code, const std::string& challenge_nonce) {
  std::string data(kVerdictLabel);
  data.append(reinterpret_cast<const char*>(dialer_nonce), wire::kNonceBytes);
  data.append(reinterpret_cast<const char*>(&code), sizeof(code));
  data.append(challenge_nonce);
  const Mac mac = HmacSha256(secret, data);
  return std::string(reinterpret_cast<const char*>(mac.data()), mac.size());
}

bool SameMac(const std::string& a, const uint8_t* b) {
  Mac x{}, y{};
  std::memcpy(x.data(), a.data(), std::min(a.size(), x.size()));
  std::memcpy(y.data(), b, y.size());
  return MacEqual(x, y);
}

// The first bytes a stranger sent, readable in a log line.
std::string Sample(const std::string& buf, size_t got) {
  return absl::CHexEscape(buf.substr(0, std::min<size_t>(got, 8)));
}

int MsUntil(net::Deadline t, net::Deadline now) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - now).count() + 1;
  return static_cast<int>(std::clamp<int64_t>(ms, 0, 1000));
}

}  // namespace

std::string HelloMac(const std::string& secret, const std::string& challenge_nonce,
                     const std::string& hello) {
  // Everything before the MAC: the hello, the proof's flags and nonce.
  std::string data(kHelloLabel);
  data.append(challenge_nonce);
  data.append(hello, 0, hello.size() - wire::kMacBytes);
  const Mac mac = HmacSha256(secret, data);
  return std::string(reinterpret_cast<const char*>(mac.data()), mac.size());
}

Gate::Gate(int listen_fd, GateOptions options) : listen_fd_(listen_fd), opt_(std::move(options)) {
  fcntl(listen_fd_, F_SETFL, fcntl(listen_fd_, F_GETFL) | O_NONBLOCK);
}

Gate::~Gate() {
  for (Pending& p : pending_) if (p.fd >= 0) close(p.fd);
}

void Gate::Drop(Pending& p, const std::string& why, bool refused) {
  const std::string addr = net::FormatAddr(p.from);
  if (refused) {
    ++refused_;
    last_refused_ = absl::StrCat(addr, ": ", why);
  } else {
    ++ignored_;
    last_stray_ = absl::StrCat(addr, ": ", why);
  }
  if (logged_ < kLoggedStrays) {
    NEURON_LOG(NRT, kWarn, "%s %s a connection from %s: %s%s", opt_.what,
               refused ? "refused" : "ignored", addr, why,
               ++logged_ == kLoggedStrays ? " (further ones are not logged)" : "");
  }
  close(p.fd);
  p.fd = -1;
}

void Gate::AcceptAll(net::Deadline now) {
  while (pending_.size() < opt_.max_pending) {
    Pending p;
    socklen_t len = sizeof(p.from);
    p.fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&p.from), &len, SOCK_CLOEXEC);
    if (p.fd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED) return;
      // Out of descriptors or memory: try again a little later rather than
      // spinning on a listener that stays readable.
      NEURON_LOG(NRT, kWarn, "%s: accept failed (%s); retrying in %d ms", opt_.what,
                 std::strerror(errno), static_cast<int>(kAcceptBackoff.count()));
      accept_resume_ = now + kAcceptBackoff;
      return;
    }
    net::Tune(p.fd);
    p.until = now + opt_.identify;
    p.challenge_nonce = RandomBytes(wire::kNonceBytes);
    p.buf.assign(opt_.hello_bytes, '\0');
    wire::Challenge c{};
    c.magic = wire::kChallengeMagic;
    c.version = wire::kProtocolVersion;
    c.flags = opt_.secret.empty() ? 0 : wire::kFlagSecret;
    std::memcpy(c.nonce, p.challenge_nonce.data(), wire::kNonceBytes);
    // A fresh socket's buffer takes 32 bytes at once.
    if (send(p.fd, &c, sizeof(c), MSG_NOSIGNAL | MSG_DONTWAIT) != sizeof(c)) {
      Drop(p, "it closed before it was challenged");
      continue;
    }
    pending_.push_back(std::move(p));
  }
}

bool Gate::Read(Pending& p) {
  while (p.got < opt_.hello_bytes) {
    const ssize_t n = recv(p.fd, p.buf.data() + p.got, opt_.hello_bytes - p.got, MSG_DONTWAIT);
    if (n > 0) {
      const size_t before = p.got;
      p.got += static_cast<size_t>(n);
      if (before < 4 && p.got >= 4) {
        uint32_t magic = 0;
        std::memcpy(&magic, p.buf.data(), 4);
        if (magic != opt_.magic) {
          Drop(p, absl::StrCat("it sent \"", Sample(p.buf, p.got), "...\", not a hello of this job"));
          return true;
        }
      }
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
    Drop(p, p.got == 0 ? "it closed without a word"
                       : absl::StrCat("it closed after ", p.got, " of the hello's ",
                                      opt_.hello_bytes, " bytes"));
    return true;
  }
  return true;
}

absl::StatusOr<Admitted> Gate::Next(net::Deadline deadline) {
  std::vector<pollfd> fds;
  for (;;) {
    const net::Deadline now = net::Clock::now();
    for (Pending& p : pending_) {
      if (now < p.until) continue;
      Drop(p, p.got == 0 ? absl::StrCat("it said nothing within ", opt_.identify.count(), " ms")
                         : absl::StrCat("it sent only ", p.got, " of the hello's ", opt_.hello_bytes,
                                        " bytes within ", opt_.identify.count(), " ms"));
    }
    std::erase_if(pending_, [](const Pending& p) { return p.fd < 0; });
    if (now >= deadline) return absl::DeadlineExceededError("timed out");
    net::Deadline wake = deadline;
    const bool listening = pending_.size() < opt_.max_pending && now >= accept_resume_;
    if (!listening && pending_.size() < opt_.max_pending) wake = std::min(wake, accept_resume_);
    fds.clear();
    if (listening) fds.push_back({listen_fd_, POLLIN, 0});
    for (const Pending& p : pending_) {
      fds.push_back({p.fd, POLLIN, 0});
      wake = std::min(wake, p.until);
    }
    const int n = poll(fds.data(), fds.size(), MsUntil(wake, now));
    if (n < 0 && errno != EINTR) {
      return absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
    }
    if (n <= 0) continue;
    // Pending connections first (AcceptAll appends to pending_).
    const size_t first = listening ? 1 : 0;
    const size_t polled = fds.size() - first;
    for (size_t i = 0; i < polled; ++i) {
      Pending& p = pending_[i];
      if (fds[first + i].revents == 0 || p.fd < 0 || !Read(p) || p.fd < 0) continue;
      Proof proof;
      std::memcpy(&proof, p.buf.data() + opt_.hello_bytes - sizeof(Proof), sizeof(Proof));
      const bool has = (proof.flags & wire::kFlagSecret) != 0;
      uint32_t code = wire::kAdmitted;
      std::string why;
      if (has != !opt_.secret.empty()) {
        code = wire::kSecretMismatch;
        why = has ? "a rank with a job secret, while this job has none"
                  : "a hello without the job secret (a stranger, or a rank started without "
                    "NEURON_TOOLS_JOB_SECRET)";
      } else if (has && !SameMac(HelloMac(opt_.secret, p.challenge_nonce, p.buf), proof.mac)) {
        code = wire::kWrongSecret;
        why = "its hello did not prove the job secret (a stranger, or a rank with another "
              "NEURON_TOOLS_JOB_SECRET)";
      }
      wire::Verdict v{};
      v.magic = wire::kVerdictMagic;
      v.code = code;
      if (!opt_.secret.empty()) {
        const std::string mac = VerdictMac(opt_.secret, proof.nonce, code, p.challenge_nonce);
        std::memcpy(v.mac, mac.data(), sizeof(v.mac));
      }
      const bool sent = send(p.fd, &v, sizeof(v), MSG_NOSIGNAL | MSG_DONTWAIT) == sizeof(v);
      if (code != wire::kAdmitted) {
        Drop(p, why, /*refused=*/true);
        continue;
      }
      if (!sent) {
        Drop(p, "it closed before it was admitted");
        continue;
      }
      Admitted a{p.fd, std::move(p.buf), p.from};
      p.fd = -1;
      std::erase_if(pending_, [](const Pending& q) { return q.fd < 0; });
      return a;
    }
    if (listening && (fds[0].revents & POLLIN)) AcceptAll(net::Clock::now());
  }
}

std::string Gate::Strays() const {
  std::string out;
  if (refused_ > 0) {
    absl::StrAppend(&out, "; refused ", refused_, refused_ == 1 ? " connection" : " connections",
                    " (last from ", last_refused_, ")");
  }
  if (ignored_ > 0) {
    absl::StrAppend(&out, "; ignored ", ignored_,
                    ignored_ == 1 ? " connection that was not a rank" : " connections that were not ranks",
                    " (last from ", last_stray_, ")");
  }
  return out;
}

absl::Status Identify(int fd, const std::string& secret, std::string hello, net::Deadline deadline,
                      const std::string& listener) {
  std::string cbuf(sizeof(wire::Challenge), '\0');
  absl::Status st = net::RecvAll(fd, cbuf.data(), cbuf.size(), deadline);
  if (!st.ok()) {
    return absl::Status(st.code(), absl::StrCat(listener, " did not challenge this rank (",
                                                st.message(), "): is it a rank of this job?"));
  }
  auto c = wire::ParseChallenge(cbuf);
  if (!c.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(listener, " sent ", c.status().message(),
                                                   ": is it a rank of this job?"));
  }
  const bool theirs = (c->flags & wire::kFlagSecret) != 0;
  if (theirs != !secret.empty()) {
    return absl::PermissionDeniedError(absl::StrCat(
        listener, theirs ? " has a job secret and this rank none" : " has no job secret and this rank one",
        ": give every rank the same NEURON_TOOLS_JOB_SECRET (or none)"));
  }
  Proof proof{};
  proof.flags = secret.empty() ? 0 : wire::kFlagSecret;
  const std::string nonce = RandomBytes(wire::kNonceBytes);
  std::memcpy(proof.nonce, nonce.data(), wire::kNonceBytes);
  std::memcpy(hello.data() + hello.size() - sizeof(Proof), &proof, sizeof(Proof));
  const std::string challenge_nonce(reinterpret_cast<const char*>(c->nonce), wire::kNonceBytes);
  if (!secret.empty()) {
    const std::string mac = HelloMac(secret, challenge_nonce, hello);
    std::memcpy(hello.data() + hello.size() - wire::kMacBytes, mac.data(), wire::kMacBytes);
  }
  st = net::SendAll(fd, hello.data(), hello.size(), deadline);
  std::string vbuf(sizeof(wire::Verdict), '\0');
  if (st.ok()) st = net::RecvAll(fd, vbuf.data(), vbuf.size(), deadline);
  if (!st.ok()) {
    return absl::Status(st.code(), absl::StrCat(listener, " did not admit this rank (",
                                                st.message(), ")"));
  }
  auto v = wire::ParseVerdict(vbuf);
  if (!v.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(listener, " sent ", v.status().message()));
  }
  // A refusal cannot carry a MAC this rank would accept (the secrets
  // differ); an admission must.
  if (v->code == wire::kAdmitted && !secret.empty() &&
      !SameMac(VerdictMac(secret, proof.nonce, v->code, challenge_nonce), v->mac)) {
    return absl::PermissionDeniedError(absl::StrCat(
        listener, " did not prove the job secret: a stranger listens there, or a rank with "
                  "another NEURON_TOOLS_JOB_SECRET"));
  }
  if (v->code == wire::kWrongSecret) {
    return absl::PermissionDeniedError(absl::StrCat(
        listener, " refused this rank: its NEURON_TOOLS_JOB_SECRET differs"));
  }
  if (v->code == wire::kSecretMismatch) {
    return absl::PermissionDeniedError(absl::StrCat(
        listener, " refused this rank: one of them has a job secret, the other none"));
  }
  return absl::OkStatus();
}

}  // namespace neuron::collectives
