// The point-to-point engine on its own: two cores of this process talking
// over loopback TCP, a receive too small for its message, and a peer core
// closing under a posted receive.
#include "lib/collectives/point_to_point.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "lib/collectives/communicator.h"
#include "lib/collectives/net.h"

namespace neuron::collectives::p2p {
namespace {

constexpr auto kTimeout = std::chrono::seconds(10);

bool WaitFor(const std::function<bool()>& ready) {
  const auto give_up = std::chrono::steady_clock::now() + kTimeout;
  while (std::chrono::steady_clock::now() < give_up) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// Polls a request until it finishes.
Completion Wait(Request* request) {
  Completion c;
  EXPECT_TRUE(WaitFor([&] {
    absl::StatusOr<Completion> t = Test(request);
    if (!t.ok()) {
      c.done = true;
      c.status = t.status();
      return true;
    }
    c = *t;
    return c.done;
  }));
  return c;
}

// Cores 0 and 1 started on a base port that has both of theirs free, with a
// connection each way.
class PointToPointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int attempt = 0; attempt < 20 && base_ == 0; ++attempt) {
      sockaddr_in any{};
      any.sin_family = AF_INET;
      absl::StatusOr<int> probe = net::Listen(any);  // a free port to start from
      ASSERT_TRUE(probe.ok()) << probe.status();
      const int base = ntohs(net::LocalAddr(*probe).sin_port);
      close(*probe);
      if (base + 1 > 65535) continue;
      if (!Init(0, base, kTimeout).ok()) continue;
      if (!Init(1, base, kTimeout).ok()) {
        Shutdown();
        continue;
      }
      base_ = base;
    }
    ASSERT_NE(base_, 0) << "no two free ports in a row";
    absl::StatusOr<Comm*> s01 = Connect("127.0.0.1", 1, 0);
    absl::StatusOr<Comm*> r01 = Accept("127.0.0.1", 0, 1);
    absl::StatusOr<Comm*> s10 = Connect("127.0.0.1", 0, 1);
    absl::StatusOr<Comm*> r10 = Accept("127.0.0.1", 1, 0);
    ASSERT_TRUE(s01.ok() && r01.ok() && s10.ok() && r10.ok());
    send01_ = *s01, recv01_ = *r01, send10_ = *s10, recv10_ = *r10;
    ASSERT_TRUE(WaitFor([&] {
      for (Comm* c : {send01_, recv01_, send10_, recv10_}) {
        absl::StatusOr<bool> up = IsConnected(c);
        EXPECT_TRUE(up.ok()) << up.status();
        if (!up.ok() || !*up) return false;
      }
      return true;
    }));
  }
  void TearDown() override { Shutdown(); }

  int base_ = 0;
  Comm *send01_ = nullptr, *recv01_ = nullptr, *send10_ = nullptr, *recv10_ = nullptr;
};

TEST_F(PointToPointTest, ExchangesBytesBothWays) {
  constexpr size_t kBytes = (3u << 20) + 5;  // several passes of the progress thread
  std::vector<char> a(kBytes), b(kBytes), into_a(kBytes + 64), into_b(kBytes + 64);
  std::iota(a.begin(), a.end(), 1);
  std::iota(b.begin(), b.end(), 7);
  absl::StatusOr<Request*> ra = Recv(recv10_, into_a.data(), into_a.size());
  absl::StatusOr<Request*> rb = Recv(recv01_, into_b.data(), into_b.size());
  absl::StatusOr<Request*> sa = Send(send01_, a.data(), a.size());
  absl::StatusOr<Request*> sb = Send(send10_, b.data(), b.size());
  ASSERT_TRUE(ra.ok() && rb.ok() && sa.ok() && sb.ok());
  for (Request* r : {*ra, *rb, *sa, *sb}) {
    const Completion c = Wait(r);
    EXPECT_TRUE(c.status.ok()) << c.status;
    EXPECT_EQ(c.bytes, kBytes);
  }
  ASSERT_TRUE(Flush(0).ok() && Flush(1).ok());
  EXPECT_EQ(std::memcmp(into_b.data(), a.data(), kBytes), 0);  // core 0 -> core 1
  EXPECT_EQ(std::memcmp(into_a.data(), b.data(), kBytes), 0);  // core 1 -> core 0
  // A finished request is gone; the wrong side of a communicator is refused.
  EXPECT_EQ(NrtStatusOf(p2p::Test(*ra).status()), NRT_INVALID_HANDLE);
  EXPECT_EQ(NrtStatusOf(Send(recv01_, a.data(), 8).status()), NRT_INVALID);
  EXPECT_TRUE(Close(0).ok());
  EXPECT_TRUE(Close(1).ok());
  EXPECT_EQ(NrtStatusOf(IsConnected(send01_).status()), NRT_INVALID_HANDLE);
}

TEST_F(PointToPointTest, ReceiveSmallerThanTheMessageFails) {
  std::vector<char> out(64, 'x'), in(16);
  absl::StatusOr<Request*> r = Recv(recv01_, in.data(), in.size());
  absl::StatusOr<Request*> s = Send(send01_, out.data(), out.size());
  ASSERT_TRUE(r.ok() && s.ok());
  const Completion c = Wait(*r);
  EXPECT_EQ(NrtStatusOf(c.status), NRT_FAILURE);
  EXPECT_NE(std::string(c.status.message()).find("64-byte tensor to a 16-byte receive"),
            std::string::npos)
      << c.status;
  // The receive side failed: its communicator refuses more.
  EXPECT_EQ(NrtStatusOf(IsConnected(recv01_).status()), NRT_FAILURE);
  EXPECT_EQ(NrtStatusOf(Recv(recv01_, in.data(), in.size()).status()), NRT_FAILURE);
  Wait(*s);  // small enough to be out before the peer closed, or failed with it
}

TEST_F(PointToPointTest, PeerClosingFailsAPostedReceive) {
  std::vector<char> in(64);
  absl::StatusOr<Request*> r = Recv(recv01_, in.data(), in.size());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(Close(0).ok());
  const Completion c = Wait(*r);
  EXPECT_EQ(NrtStatusOf(c.status), NRT_FAILURE);
  EXPECT_NE(std::string(c.status.message()).find("closed"), std::string::npos) << c.status;
  EXPECT_EQ(c.bytes, 0u);
  EXPECT_EQ(NrtStatusOf(Recv(recv01_, in.data(), in.size()).status()), NRT_FAILURE);
  EXPECT_TRUE(Close(1).ok());
}

}  // namespace
}  // namespace neuron::collectives::p2p
