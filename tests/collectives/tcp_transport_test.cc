// The TCP mesh transport's framing: a transfer arrives whole and in order;
// bytes that belong to no transfer (a stray write, a late or repeated
// message) end the transfer naming the peer, instead of landing in a
// result.
#include "lib/collectives/tcp_transport.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/collectives/wire.h"

namespace neuron::collectives {
namespace {

struct Pair {
  Pair() {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    for (int fd : sv) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    raw = dup(sv[0]);  // rank 0's end, for writing around its transport
    deadline = net::Clock::now() + std::chrono::seconds(10);
    TransferHooks hooks;
    hooks.check = [] { return absl::OkStatus(); };
    hooks.lost = [](int peer, const std::string& why) {
      return absl::DeadlineExceededError("rank " + std::to_string(peer) + " lost: " + why);
    };
    hooks.deadline = &deadline;
    zero = MakeTcpTransport({-1, sv[0]}, hooks, false);
    one = MakeTcpTransport({sv[1], -1}, hooks, false);
  }
  ~Pair() { close(raw); }
  int raw = -1;
  net::Deadline deadline;
  std::unique_ptr<Transport> zero, one;
};

TEST(TcpTransport, FramedTransfersArriveInOrder) {
  Pair p;
  std::vector<char> a(100), b(200), got(200);
  std::iota(a.begin(), a.end(), 1);
  std::iota(b.begin(), b.end(), 9);
  ASSERT_TRUE(p.zero->Exchange(1, a.data(), a.size(), -1, nullptr, 0, 0).ok());
  ASSERT_TRUE(p.zero->Exchange(1, b.data(), b.size(), -1, nullptr, 0, 0).ok());
  ASSERT_TRUE(p.one->Exchange(-1, nullptr, 0, 0, got.data(), a.size(), 0).ok());
  EXPECT_EQ(std::memcmp(got.data(), a.data(), a.size()), 0);
  ASSERT_TRUE(p.one->Exchange(-1, nullptr, 0, 0, got.data(), b.size(), 0).ok());
  EXPECT_EQ(got, b);
}

TEST(TcpTransport, StrayBytesAreNotAResult) {
  Pair p;
  ASSERT_EQ(write(p.raw, "HTTP/1.1 200 OK\r\n\r\n", 19), 19);
  std::vector<char> got(64, 0);
  absl::Status st = p.one->Exchange(-1, nullptr, 0, 0, got.data(), got.size(), 0);
  EXPECT_NE(std::string(st.message()).find("rank 0 lost: it sent not a transfer header"),
            std::string::npos)
      << st;
  EXPECT_EQ(got, std::vector<char>(64, 0));
}

TEST(TcpTransport, AMessageOfAnotherTransferIsRefused) {
  Pair p;
  // Transfer 1's header where transfer 0 is due, and a length that differs.
  const wire::TcpFrame late{wire::kTcpFrameMagic, 1, 64};
  ASSERT_EQ(write(p.raw, &late, sizeof(late)), static_cast<ssize_t>(sizeof(late)));
  std::vector<char> got(64);
  absl::Status st = p.one->Exchange(-1, nullptr, 0, 0, got.data(), got.size(), 0);
  EXPECT_NE(std::string(st.message()).find("transfer 1 arrived where transfer 0 was due"),
            std::string::npos)
      << st;
  Pair q;
  const wire::TcpFrame longer{wire::kTcpFrameMagic, 0, 65};
  ASSERT_EQ(write(q.raw, &longer, sizeof(longer)), static_cast<ssize_t>(sizeof(longer)));
  st = q.one->Exchange(-1, nullptr, 0, 0, got.data(), got.size(), 0);
  EXPECT_NE(std::string(st.message()).find("65 bytes where 64 were due"), std::string::npos) << st;
}

}  // namespace
}  // namespace neuron::collectives
