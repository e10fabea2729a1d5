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
#include "lib/collectives/wire.h"
#include "tests/collectives/stranger.h"

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

// Starts `core` alone on a free port (base + core), trying several: a port
// probed free may be taken by another test before Init binds it. The base
// port, or 0 when none worked.
int InitOnFreePort(int core, std::chrono::seconds timeout) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    absl::StatusOr<int> probe = net::Listen(*net::ParseHost("127.0.0.1"));
    if (!probe.ok()) continue;
    const int port = ntohs(net::LocalAddr(*probe).sin_port);
    close(*probe);
    if (port - core < 1) continue;
    if (Init(core, port - core, timeout).ok()) return port - core;
  }
  return 0;
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

// Strangers on core 1's port (a scan, an HTTP request, an idle and a
// dripping connection) are dropped; a real pair still connects and moves
// its bytes.
TEST_F(PointToPointTest, StrangersOnTheListenerChangeNothing) {
  sockaddr_in port{};
  port.sin_family = AF_INET;
  port.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  port.sin_port = htons(static_cast<uint16_t>(base_ + 1));
  std::vector<pid_t> strangers;
  for (testing::Stranger kind : {testing::Stranger::kScan, testing::Stranger::kGarbage,
                                 testing::Stranger::kIdle, testing::Stranger::kDrip}) {
    strangers.push_back(testing::StartStranger(kind, port, 2, false, 10));
  }
  absl::StatusOr<Comm*> s = Connect("127.0.0.1", 1, 0);
  absl::StatusOr<Comm*> r = Accept("127.0.0.1", 0, 1);
  ASSERT_TRUE(s.ok() && r.ok());
  ASSERT_TRUE(WaitFor([&] {
    absl::StatusOr<bool> a = IsConnected(*s), b = IsConnected(*r);
    EXPECT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
    return a.ok() && b.ok() && *a && *b;
  }));
  std::vector<char> out(1000), in(1000);
  std::iota(out.begin(), out.end(), 3);
  absl::StatusOr<Request*> rr = Recv(*r, in.data(), in.size());
  absl::StatusOr<Request*> sr = Send(*s, out.data(), out.size());
  ASSERT_TRUE(rr.ok() && sr.ok());
  EXPECT_TRUE(Wait(*sr).status.ok());
  const Completion c = Wait(*rr);
  EXPECT_TRUE(c.status.ok()) << c.status;
  EXPECT_EQ(in, out);
  for (pid_t p : strangers) testing::StopStranger(p);
}

// A peer that trickles a message a byte at a time cannot keep a receive
// alive past the timeout of its start.
TEST(PointToPoint, DrippingPeerEndsTheRequestAtItsDeadline) {
  const int port = InitOnFreePort(0, std::chrono::seconds(1));
  ASSERT_NE(port, 0) << "no free port";
  absl::StatusOr<Comm*> r = Accept("127.0.0.1", 0, 0);
  ASSERT_TRUE(r.ok());
  // The dialer, by hand: lnc 0 to lnc 0, first connection, no secret.
  const net::Deadline deadline = net::Clock::now() + std::chrono::seconds(10);
  sockaddr_in at = *net::ParseHost("127.0.0.1");
  at.sin_port = htons(static_cast<uint16_t>(port));
  auto fd = net::Connect(at, deadline, nullptr);
  ASSERT_TRUE(fd.ok());
  wire::Challenge challenge{};
  ASSERT_TRUE(net::RecvAll(*fd, &challenge, sizeof(challenge), deadline).ok());
  wire::P2pHello h{};
  h.magic = htonl(wire::kP2pHelloMagic);
  ASSERT_TRUE(net::SendAll(*fd, &h, sizeof(h), deadline).ok());
  wire::P2pAck ack{};
  ASSERT_TRUE(net::RecvAll(*fd, &ack, sizeof(ack), deadline).ok());
  ASSERT_TRUE(WaitFor([&] { return IsConnected(*r).value_or(false); }));
  std::vector<char> in(64);
  absl::StatusOr<Request*> rr = Recv(*r, in.data(), in.size());
  ASSERT_TRUE(rr.ok());
  const wire::P2pDataHeader header{wire::kP2pDataMagic, 0, 64};
  ASSERT_TRUE(net::SendAll(*fd, &header, sizeof(header), deadline).ok());
  Completion c;
  for (int i = 0; i < 64 && !c.done; ++i) {
    (void)net::SendAll(*fd, "x", 1, deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    absl::StatusOr<Completion> t = p2p::Test(*rr);
    ASSERT_TRUE(t.ok());
    c = *t;
  }
  EXPECT_TRUE(c.done);
  EXPECT_EQ(NrtStatusOf(c.status), NRT_TIMEOUT) << c.status;
  EXPECT_NE(std::string(c.status.message()).find("not finished within 1 s"), std::string::npos)
      << c.status;
  close(*fd);
  Shutdown();
}

// With the job's secret, a hello that names the right core and sequence
// but cannot prove the secret is dropped: the real dialer gets the accept.
TEST(PointToPoint, ForgedHelloIsDroppedWithTheSecret) {
  setenv("NEURON_TOOLS_JOB_SECRET", "p2p-test-secret", 1);
  const int port = InitOnFreePort(0, kTimeout);
  ASSERT_NE(port, 0) << "no free port";
  absl::StatusOr<Comm*> r = Accept("127.0.0.1", 0, 0);
  ASSERT_TRUE(r.ok());
  const net::Deadline deadline = net::Clock::now() + std::chrono::seconds(10);
  sockaddr_in at = *net::ParseHost("127.0.0.1");
  at.sin_port = htons(static_cast<uint16_t>(port));
  auto forger = net::Connect(at, deadline, nullptr);
  ASSERT_TRUE(forger.ok());
  wire::Challenge challenge{};
  ASSERT_TRUE(net::RecvAll(*forger, &challenge, sizeof(challenge), deadline).ok());
  EXPECT_EQ(challenge.flags & wire::kFlagSecret, wire::kFlagSecret);
  wire::P2pHello h{};
  h.magic = htonl(wire::kP2pHelloMagic);
  h.proof.flags = wire::kFlagSecret;
  h.proof.mac[0] = 1;  // a guess
  ASSERT_TRUE(net::SendAll(*forger, &h, sizeof(h), deadline).ok());
  // Dropped: the forger's connection is closed without an ack.
  char byte;
  EXPECT_TRUE(absl::IsUnavailable(net::RecvAll(*forger, &byte, 1, deadline)));
  absl::StatusOr<bool> up = IsConnected(*r);
  EXPECT_TRUE(up.ok() && !*up);
  absl::StatusOr<Comm*> s = Connect("127.0.0.1", 0, 0);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(WaitFor([&] {
    return IsConnected(*r).value_or(false) && IsConnected(*s).value_or(false);
  }));
  close(*forger);
  Shutdown();
  unsetenv("NEURON_TOOLS_JOB_SECRET");
}

// With the job's secret, a real dialer's hello, captured and replayed on
// another connection, proves nothing: its MAC covers the challenge of the
// connection it was made for. The capture: core 1 dials core 0's port,
// where this test listens in core 0's place and challenges it.
TEST(PointToPoint, ReplayedHelloIsDroppedWithTheSecret) {
  setenv("NEURON_TOOLS_JOB_SECRET", "p2p-replay-secret", 1);
  sockaddr_in any = *net::ParseHost("127.0.0.1");
  absl::StatusOr<int> fake_core0 = net::Listen(any);
  ASSERT_TRUE(fake_core0.ok());
  const int base = ntohs(net::LocalAddr(*fake_core0).sin_port);
  ASSERT_TRUE(Init(1, base, kTimeout).ok());
  absl::StatusOr<Comm*> dialer = Connect("127.0.0.1", 0, 1);
  ASSERT_TRUE(dialer.ok());
  const net::Deadline deadline = net::Clock::now() + std::chrono::seconds(10);
  absl::StatusOr<int> captured = net::Accept(*fake_core0, deadline);
  ASSERT_TRUE(captured.ok());
  wire::Challenge first{};
  first.magic = wire::kChallengeMagic;
  first.version = wire::kProtocolVersion;
  first.flags = wire::kFlagSecret;
  first.nonce[0] = 7;
  ASSERT_TRUE(net::SendAll(*captured, &first, sizeof(first), deadline).ok());
  wire::P2pHello hello{};
  ASSERT_TRUE(net::RecvAll(*captured, &hello, sizeof(hello), deadline).ok());
  EXPECT_EQ(ntohl(hello.magic), wire::kP2pHelloMagic);
  EXPECT_EQ(ntohl(hello.src_lnc), 1u);
  close(*captured);
  close(*fake_core0);

  // Core 0 for real, waiting for core 1's first connection; the replay.
  ASSERT_TRUE(Init(0, base, kTimeout).ok());
  absl::StatusOr<Comm*> acceptor = Accept("127.0.0.1", 1, 0);
  ASSERT_TRUE(acceptor.ok());
  sockaddr_in at = any;
  at.sin_port = htons(static_cast<uint16_t>(base));
  auto replayer = net::Connect(at, deadline, nullptr);
  ASSERT_TRUE(replayer.ok());
  wire::Challenge second{};
  ASSERT_TRUE(net::RecvAll(*replayer, &second, sizeof(second), deadline).ok());
  EXPECT_NE(std::memcmp(first.nonce, second.nonce, wire::kNonceBytes), 0);
  ASSERT_TRUE(net::SendAll(*replayer, &hello, sizeof(hello), deadline).ok());
  // Dropped: closed without an ack, and core 0's accept is still waiting.
  char byte;
  EXPECT_TRUE(absl::IsUnavailable(net::RecvAll(*replayer, &byte, 1, deadline)));
  absl::StatusOr<bool> up = IsConnected(*acceptor);
  EXPECT_TRUE(up.ok() && !*up);
  close(*replayer);
  Shutdown();
  unsetenv("NEURON_TOOLS_JOB_SECRET");
}

}  // namespace
}  // namespace neuron::collectives::p2p
