// The TCP algorithms for groups that span hosts: a ring (reduce-scatter then
// all-gather) for all-reduce, rings for reduce-scatter and all-gather, and a
// star from the root for broadcast. Every transfer is a duplex exchange
// bounded by the operation's deadline; a closed connection names its peer.
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "lib/collectives/comm_impl.h"

namespace neuron::collectives {
namespace {

#define RETURN_IF_ERROR(expr)  \
  do {                         \
    absl::Status _st = (expr); \
    if (!_st.ok()) return _st; \
  } while (0)

inline size_t Mod(long a, long g) { return static_cast<size_t>(((a % g) + g) % g); }

}  // namespace

absl::Status Communicator::Impl::Duplex(int to, const void* sbuf, size_t sbytes,
                                        int from, void* rbuf, size_t rbytes) {
  // A peer that went away: prefer the loss another rank announced (the
  // neighbour may only have given up because of it).
  auto gone = [&](int peer) {
    const int announced = PollLossNotice(50);
    if (announced >= 0) {
      return NrtError(NRT_TIMEOUT, absl::StrCat("rank ", announced,
                                                " lost (detected by another rank)"));
    }
    return Lost(peer, "its connection closed");
  };
  const char* sp = static_cast<const char*>(sbuf);
  char* rp = static_cast<char*>(rbuf);
  size_t sent = 0, got = 0;
  if (to < 0) sbytes = 0;
  if (from < 0) rbytes = 0;
  while (sent < sbytes || got < rbytes) {
    bool progress = false;
    if (sent < sbytes) {
      const ssize_t n = send(links[to], sp + sent, sbytes - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<size_t>(n);
        progress = true;
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        return gone(to);
      }
    }
    if (got < rbytes) {
      const ssize_t n = recv(links[from], rp + got, rbytes - got, 0);
      if (n > 0) {
        got += static_cast<size_t>(n);
        progress = true;
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        return gone(from);
      }
    }
    if (progress) continue;
    const int announced = PollLossNotice(0);
    if (announced >= 0) {
      return NrtError(NRT_TIMEOUT, absl::StrCat("rank ", announced,
                                                " lost (detected by another rank)"));
    }
    pollfd fds[2];
    int nfds = 0;
    if (sent < sbytes) fds[nfds++] = {links[to], POLLOUT, 0};
    if (got < rbytes) fds[nfds++] = {links[from], POLLIN, 0};
    const auto now = net::Clock::now();
    if (now >= deadline) {
      return Lost(got < rbytes ? from : to,
                  absl::StrCat("no progress within ", opt.timeout_s,
                               " s (NEURON_RT_EXEC_TIMEOUT)"));
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    poll(fds, static_cast<nfds_t>(nfds), static_cast<int>(std::min<long>(left + 1, 100)));
  }
  return absl::OkStatus();
}

absl::Status Communicator::Impl::RingAllReduce(const GroupView& v, const char* in,
                                               char* out, size_t count,
                                               DataType type, ReduceOp op) {
  const size_t es = DataTypeSize(type), g = v.members.size();
  step += AllReduceSteps(count, es, g);
  if (out != in && count) std::memmove(out, in, count * es);
  if (g == 1 || count == 0) return absl::OkStatus();
  const long me = v.me, G = static_cast<long>(g);
  const int next = v.members[Mod(me + 1, G)], prev = v.members[Mod(me - 1, G)];
  auto off = [&](size_t b) { return count * b / g; };
  auto len = [&](size_t b) { return off(b + 1) - off(b); };
  scratch.resize(std::max(scratch.size(), (count / g + 1) * es));
  for (long k = 0; k < G - 1; ++k) {  // reduce-scatter: block me ends whole here
    const size_t sb = Mod(me - k - 1, G), rb = Mod(me - k - 2, G);
    RETURN_IF_ERROR(Duplex(next, out + off(sb) * es, len(sb) * es, prev,
                           scratch.data(), len(rb) * es));
    ReduceInto(out + off(rb) * es, scratch.data(), len(rb), type, op);
  }
  for (long k = 0; k < G - 1; ++k) {  // all-gather of the reduced blocks
    const size_t sb = Mod(me - k, G), rb = Mod(me - k - 1, G);
    RETURN_IF_ERROR(Duplex(next, out + off(sb) * es, len(sb) * es, prev,
                           out + off(rb) * es, len(rb) * es));
  }
  return absl::OkStatus();
}

absl::Status Communicator::Impl::RingReduceScatter(const GroupView& v,
                                                   const char* in, char* out,
                                                   size_t count, DataType type,
                                                   ReduceOp op) {
  const size_t es = DataTypeSize(type), g = v.members.size();
  step += ReduceScatterSteps(count, es, g);
  const size_t block = count * es;
  if (g == 1 || count == 0) {
    if (out != in && count) std::memmove(out, in, block);
    return absl::OkStatus();
  }
  const long me = v.me, G = static_cast<long>(g);
  const int next = v.members[Mod(me + 1, G)], prev = v.members[Mod(me - 1, G)];
  scratch.resize(std::max(scratch.size(), block * (g + 1)));
  char* work = scratch.data() + block;  // a copy of in, reduced in place
  char* recv = scratch.data();
  std::memcpy(work, in, block * g);
  for (long k = 0; k < G - 1; ++k) {
    const size_t sb = Mod(me - k - 1, G), rb = Mod(me - k - 2, G);
    RETURN_IF_ERROR(Duplex(next, work + sb * block, block, prev, recv, block));
    ReduceInto(work + rb * block, recv, count, type, op);
  }
  std::memcpy(out, work + static_cast<size_t>(me) * block, block);
  return absl::OkStatus();
}

absl::Status Communicator::Impl::RingAllGather(const GroupView& v, const char* in,
                                               char* out, size_t bytes) {
  const size_t g = v.members.size();
  step += CopySteps(bytes, g);
  if (bytes == 0) return absl::OkStatus();
  const long me = v.me, G = static_cast<long>(g);
  if (out + me * bytes != in) std::memmove(out + me * bytes, in, bytes);
  const int next = v.members[Mod(me + 1, G)], prev = v.members[Mod(me - 1, G)];
  for (long k = 0; k < G - 1; ++k) {
    const size_t sb = Mod(me - k, G), rb = Mod(me - k - 1, G);
    RETURN_IF_ERROR(Duplex(next, out + sb * bytes, bytes, prev, out + rb * bytes, bytes));
  }
  return absl::OkStatus();
}

absl::Status Communicator::Impl::RingBroadcast(const GroupView& v, const char* in,
                                               char* out, size_t bytes, int root) {
  const size_t g = v.members.size();
  step += CopySteps(bytes, g);
  if (v.me == root && out != in && bytes) std::memmove(out, in, bytes);
  if (g == 1 || bytes == 0) return absl::OkStatus();
  if (v.me != root) {
    return Duplex(-1, nullptr, 0, v.members[static_cast<size_t>(root)], out, bytes);
  }
  for (size_t j = 0; j < g; ++j) {
    if (static_cast<int>(j) == root) continue;
    RETURN_IF_ERROR(Duplex(v.members[j], in, bytes, -1, nullptr, 0));
  }
  return absl::OkStatus();
}

}  // namespace neuron::collectives
