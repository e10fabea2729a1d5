// The gate every set-up listener uses: strangers of each kind are dropped
// while a real rank is admitted; a rank with another secret is refused and
// told so; a dialer learns when the listener does not hold the secret.
#include "lib/collectives/gate.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <string_view>
#include <thread>

#include "gtest/gtest.h"
#include "lib/collectives/net.h"
#include "lib/log/log.h"
#include "lib/collectives/wire.h"
#include "tests/collectives/stranger.h"

namespace neuron::collectives {
namespace {

using testing::Stranger;

std::string Hello(uint32_t rank) {
  wire::BootHello h{};
  h.magic = wire::kBootHelloMagic;
  h.rank = rank;
  h.world = 2;
  h.data_port = 1;
  return std::string(reinterpret_cast<const char*>(&h), sizeof(h));
}

GateOptions Options(const std::string& secret) {
  GateOptions g;
  g.what = "the test's listener";
  g.secret = secret;
  g.magic = wire::kBootHelloMagic;
  g.hello_bytes = sizeof(wire::BootHello);
  g.identify = std::chrono::milliseconds(1500);
  return g;
}

// A listener, and a dialer thread that identifies itself with `secret`.
struct Dialer {
  explicit Dialer(int listen_fd, const std::string& secret) {
    const sockaddr_in at = net::LocalAddr(listen_fd);
    thread = std::thread([=, this] {
      const net::Deadline deadline = net::Clock::now() + std::chrono::seconds(20);
      auto fd = net::Connect(at, deadline, nullptr);
      if (!fd.ok()) {
        status = fd.status();
        return;
      }
      status = Identify(*fd, secret, Hello(1), deadline, "the test's listener");
      close(*fd);
    });
  }
  ~Dialer() { if (thread.joinable()) thread.join(); }
  std::thread thread;
  absl::Status status;
};

int Listener() {
  auto fd = net::Listen(*net::ParseHost("127.0.0.1"));
  EXPECT_TRUE(fd.ok()) << fd.status();
  return fd.ok() ? *fd : -1;
}

TEST(Gate, EveryStrangerIsDroppedAndTheRankAdmitted) {
  for (const std::string secret : {"", "s"}) {
    const int lfd = Listener();
    const sockaddr_in at = net::LocalAddr(lfd);
    std::vector<pid_t> strangers;
    for (Stranger kind : {Stranger::kScan, Stranger::kGarbage, Stranger::kIdle, Stranger::kDrip}) {
      strangers.push_back(testing::StartStranger(kind, at, 2, false, 10));
    }
    if (!secret.empty()) strangers.push_back(testing::StartStranger(Stranger::kForged, at, 2, false, 10));
    Gate gate(lfd, Options(secret));
    Dialer rank(lfd, secret);
    auto a = gate.Next(net::Clock::now() + std::chrono::seconds(20));
    ASSERT_TRUE(a.ok()) << a.status();
    auto h = wire::ParseBootHello(a->hello, 2);
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_EQ(h->rank, 1u);
    EXPECT_NE(std::string(h->host), "impostor");
    close(a->fd);
    rank.thread.join();
    EXPECT_TRUE(rank.status.ok()) << rank.status;
    // The rest of the strangers come and go; nothing else is admitted.
    auto more = gate.Next(net::Clock::now() + std::chrono::seconds(3));
    EXPECT_TRUE(absl::IsDeadlineExceeded(more.status())) << more.status();
    EXPECT_GE(gate.ignored(), 4) << gate.Strays();
    EXPECT_NE(gate.Strays().find("not ranks"), std::string::npos) << gate.Strays();
    if (!secret.empty()) {
      EXPECT_NE(gate.Strays().find("refused 1"), std::string::npos) << gate.Strays();
    }
    for (pid_t p : strangers) testing::StopStranger(p);
    close(lfd);
  }
}

// A listener whose accept(2) keeps failing (the process is out of
// descriptors) backs off instead of spinning on a listener that stays
// readable: over a second it tries about ten times, each logged, where a
// spinning loop would try thousands of times.
TEST(Gate, FailingAcceptBacksOff) {
  const int lfd = Listener();
  ASSERT_GE(lfd, 0);
  const sockaddr_in at = net::LocalAddr(lfd);
  // A connection waiting in the backlog, made while descriptors remain.
  const int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(client, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<const sockaddr*>(&at), sizeof(at)), 0);
  std::atomic<int> failures{0};
  log::SetConsoleSink([&](std::string_view line) {
    if (line.find("accept failed") != std::string_view::npos) ++failures;
  });
  Gate gate(lfd, Options(""));
  // The lowest free descriptor becomes the limit: accept(2) gets EMFILE.
  const int lowest = dup(lfd);
  ASSERT_GE(lowest, 0);
  close(lowest);
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  rlimit tight = old;
  tight.rlim_cur = static_cast<rlim_t>(lowest);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &tight), 0);
  auto a = gate.Next(net::Clock::now() + std::chrono::seconds(1));
  setrlimit(RLIMIT_NOFILE, &old);
  log::SetConsoleSink(nullptr);
  EXPECT_TRUE(absl::IsDeadlineExceeded(a.status())) << a.status();
  EXPECT_GE(failures.load(), 1);
  // kAcceptBackoff (100 ms) apart: at most about ten in the second.
  EXPECT_LE(failures.load(), 30);
  close(client);
  close(lfd);
}

// More silent strangers than the gate holds: the rest wait in the
// listener's backlog, each gets its window in turn, and the rank behind
// them is admitted in the end.
TEST(Gate, ConnectionsBeyondTheCapWaitTheirTurn) {
  const int lfd = Listener();
  const sockaddr_in at = net::LocalAddr(lfd);
  // Silent connections, in the backlog before the rank's.
  std::vector<int> idle;
  for (int i = 0; i < 6; ++i) {
    auto fd = net::Connect(at, net::Clock::now() + std::chrono::seconds(5), nullptr);
    ASSERT_TRUE(fd.ok());
    idle.push_back(*fd);
  }
  GateOptions g = Options("");
  g.max_pending = 2;
  g.identify = std::chrono::milliseconds(200);
  Gate gate(lfd, g);
  Dialer rank(lfd, "");
  auto a = gate.Next(net::Clock::now() + std::chrono::seconds(20));
  ASSERT_TRUE(a.ok()) << a.status() << gate.Strays();
  close(a->fd);
  rank.thread.join();
  EXPECT_TRUE(rank.status.ok()) << rank.status;
  EXPECT_EQ(gate.ignored(), 6) << gate.Strays();
  for (int fd : idle) close(fd);
  close(lfd);
}

TEST(Gate, ARankWithAnotherSecretIsRefusedAndToldWhy) {
  const int lfd = Listener();
  Gate gate(lfd, Options("right"));
  Dialer wrong(lfd, "wrong");
  auto a = gate.Next(net::Clock::now() + std::chrono::seconds(3));
  EXPECT_FALSE(a.ok());
  wrong.thread.join();
  EXPECT_TRUE(absl::IsPermissionDenied(wrong.status)) << wrong.status;
  EXPECT_NE(wrong.status.message().find("NEURON_TOOLS_JOB_SECRET differs"), std::string::npos)
      << wrong.status;
  EXPECT_NE(gate.Strays().find("did not prove the job secret"), std::string::npos) << gate.Strays();
  close(lfd);
}

TEST(Gate, SecretOnOneSideOnlyIsNamed) {
  const int lfd = Listener();
  Gate gate(lfd, Options(""));
  Dialer with(lfd, "mine");
  auto a = gate.Next(net::Clock::now() + std::chrono::seconds(2));
  EXPECT_FALSE(a.ok());
  with.thread.join();
  EXPECT_TRUE(absl::IsPermissionDenied(with.status)) << with.status;
  EXPECT_NE(with.status.message().find("has no job secret and this rank one"), std::string::npos)
      << with.status;
  close(lfd);
}

// A listener that is not a rank (it sends nothing, or the wrong thing):
// the dialer says so instead of waiting for ever.
TEST(Gate, ADialerTellsAStrangerListenerFromARank) {
  const int lfd = Listener();
  std::thread server([&] {
    const int fd = accept(lfd, nullptr, nullptr);
    const char banner[] = "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n";
    (void)!send(fd, banner, 32, MSG_NOSIGNAL);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    close(fd);
  });
  const net::Deadline deadline = net::Clock::now() + std::chrono::seconds(5);
  auto fd = net::Connect(net::LocalAddr(lfd), deadline, nullptr);
  ASSERT_TRUE(fd.ok());
  absl::Status st = Identify(*fd, "", Hello(1), deadline, "rank 0 at the test's port");
  EXPECT_NE(st.message().find("is it a rank of this job"), std::string::npos) << st;
  close(*fd);
  server.join();
  close(lfd);
}

}  // namespace
}  // namespace neuron::collectives
