// The fallback transport: one TCP connection per pair of ranks, used only
// when libfabric finds no provider for the job. A transfer is a duplex
// exchange on non-blocking sockets; while nothing moves it sleeps in
// poll(2), so waiting ranks give their CPU to the ones working.
#include "lib/collectives/tcp_transport.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/str_cat.h"
#include "lib/collectives/wire.h"

namespace neuron::collectives {
namespace {

class TcpTransport : public Transport {
 public:
  TcpTransport(std::vector<int> fds, TransferHooks hooks, bool spin)
      : fds_(std::move(fds)), hooks_(std::move(hooks)), spin_(spin),
        sent_ops_(fds_.size(), 0), received_ops_(fds_.size(), 0) {}
  ~TcpTransport() override {
    for (int fd : fds_) if (fd >= 0) close(fd);
  }
  std::string Name() const override { return "tcp"; }

  // One socket a peer and no message slots: the streams share it, and
  // nothing is registered (TransportStats stays empty). Every transfer is
  // framed (wire::TcpFrame: its number on the pair and its length), so
  // bytes that belong to no transfer are never taken for a result.
  absl::Status Exchange(int to, const void* sbuf, size_t sbytes, int from,
                        void* rbuf, size_t rbytes, int /*stream*/) override {
    const char* sp = static_cast<const char*>(sbuf);
    char* rp = static_cast<char*>(rbuf);
    if (to < 0) sbytes = 0;
    if (from < 0) rbytes = 0;
    wire::TcpFrame out{wire::kTcpFrameMagic, 0, sbytes};
    if (sbytes > 0) out.op = sent_ops_[to]++;
    char in[sizeof(wire::TcpFrame)];
    const size_t frame = sizeof(wire::TcpFrame);
    // Bytes moved, the frame's included.
    size_t sent = 0, got = 0;
    const size_t stotal = sbytes > 0 ? frame + sbytes : 0;
    const size_t rtotal = rbytes > 0 ? frame + rbytes : 0;
    while (sent < stotal || got < rtotal) {
      bool progress = false;
      if (sent < stotal) {
        const ssize_t n = sent < frame
                              ? send(fds_[to], reinterpret_cast<const char*>(&out) + sent,
                                     frame - sent, MSG_NOSIGNAL)
                              : send(fds_[to], sp + (sent - frame), stotal - sent, MSG_NOSIGNAL);
        if (n > 0) {
          sent += static_cast<size_t>(n);
          progress = true;
        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
          return hooks_.lost(to, "its connection closed");
        }
      }
      if (got < rtotal) {
        const ssize_t n = got < frame ? recv(fds_[from], in + got, frame - got, 0)
                                      : recv(fds_[from], rp + (got - frame), rtotal - got, 0);
        if (n > 0) {
          got += static_cast<size_t>(n);
          progress = true;
          if (got == frame) {
            auto f = wire::ParseTcpFrame(std::string_view(in, frame), received_ops_[from], rbytes);
            if (!f.ok()) return hooks_.lost(from, absl::StrCat("it sent ", f.status().message()));
            ++received_ops_[from];
          }
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          return hooks_.lost(from, "its connection closed");
        }
      }
      if (progress) continue;
      absl::Status st = hooks_.check();
      if (!st.ok()) return st;
      const auto now = net::Clock::now();
      if (now >= *hooks_.deadline) {
        return hooks_.lost(got < rtotal ? from : to, "no progress");
      }
      pollfd fds[2];
      nfds_t n = 0;
      if (sent < stotal) fds[n++] = {fds_[to], POLLOUT, 0};
      if (got < rtotal) fds[n++] = {fds_[from], POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            *hooks_.deadline - now).count();
      poll(fds, n, spin_ ? 0 : static_cast<int>(std::min<long>(left + 1, 50)));
    }
    return absl::OkStatus();
  }

 private:
  std::vector<int> fds_;
  TransferHooks hooks_;
  bool spin_;
  std::vector<uint32_t> sent_ops_, received_ops_;  // per peer: transfers framed so far
};

}  // namespace

std::unique_ptr<Transport> MakeTcpTransport(std::vector<int> fds,
                                            TransferHooks hooks, bool spin) {
  return std::make_unique<TcpTransport>(std::move(fds), std::move(hooks), spin);
}

}  // namespace neuron::collectives
