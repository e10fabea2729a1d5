// A real rank against a fake rank 0 that sends values no real rank 0
// would: a rank table entry of another rank, an arena that would overflow
// the shared segment, a barrier verdict naming a rank outside the world.
// The rank must fail with a message naming the value, never use it.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "lib/collectives/comm_impl.h"
#include "lib/collectives/communicator.h"
#include "lib/collectives/gate.h"
#include "lib/collectives/net.h"
#include "lib/collectives/wire.h"

namespace neuron::collectives {
namespace {

constexpr char kSecret[] = "peer-values-test";

// Runs rank 1 of 2 in a child against a fake rank 0 (`serve`, given the
// admitted connection and rank 1's hello); returns rank 1's error ("" : none).
std::string RankOneAgainst(const std::function<void(int fd, const wire::BootHello&)>& serve) {
  auto lfd = net::Listen(*net::ParseHost("127.0.0.1"));
  EXPECT_TRUE(lfd.ok());
  const std::string root = net::FormatAddr(net::LocalAddr(*lfd));
  char path[] = "/tmp/peer_values_test.XXXXXX";
  const int out = mkstemp(path);
  close(out);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(*lfd);
    CommOptions o;
    o.world = 2;
    o.rank = 1;
    o.root_comm_id = root;
    o.timeout_s = 10;
    o.secret = kSecret;
    auto c = Communicator::Create(o);
    std::ofstream(path) << (c.ok() ? std::string() : std::string(c.status().message()));
    _exit(0);
  }
  GateOptions g;
  g.what = "the fake rank 0";
  g.secret = kSecret;
  g.magic = wire::kBootHelloMagic;
  g.hello_bytes = sizeof(wire::BootHello);
  {
    Gate gate(*lfd, g);
    auto a = gate.Next(net::Clock::now() + std::chrono::seconds(10));
    EXPECT_TRUE(a.ok()) << a.status();
    if (a.ok()) {
      auto h = wire::ParseBootHello(a->hello, 2);
      EXPECT_TRUE(h.ok()) << h.status();
      if (h.ok()) serve(a->fd, *h);
      close(a->fd);
    }
  }
  close(*lfd);
  int status = 0;
  waitpid(pid, &status, 0);
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  unlink(path);
  return text.str();
}

// Rank 0's entry: on another "host", so rank 1 needs no shared memory.
wire::RankTable TableFor(const wire::BootHello& one) {
  wire::RankTable t;
  t.nonce = 7;
  t.ranks = {one, one};
  t.ranks[0].rank = 0;
  t.ranks[0].pid = static_cast<uint32_t>(getpid());
  std::snprintf(t.ranks[0].host, sizeof(t.ranks[0].host), "fake-rank-0");
  return t;
}

void SendTable(int fd, const wire::RankTable& t) {
  const net::Deadline d = net::Clock::now() + std::chrono::seconds(5);
  const uint32_t missing = 0;
  const std::string bytes = wire::SerializeRankTable(t);
  (void)net::SendAll(fd, &missing, sizeof(missing), d);
  (void)net::SendAll(fd, bytes.data(), bytes.size(), d);
}

TEST(PeerValues, RankTableEntryOfAnotherRank) {
  const std::string err = RankOneAgainst([](int fd, const wire::BootHello& one) {
    wire::RankTable t = TableFor(one);
    t.ranks[0].rank = 1;  // would index as rank 1
    SendTable(fd, t);
  });
  EXPECT_NE(err.find("rank table entry 0 is rank 1's"), std::string::npos) << err;
}

TEST(PeerValues, ArenaThatWouldOverflowTheSegment) {
  const std::string err = RankOneAgainst([](int fd, const wire::BootHello& one) {
    wire::RankTable t = TableFor(one);
    t.ranks[0].arena_bytes = ~uint64_t{0} & ~uint64_t{4095};
    SendTable(fd, t);
  });
  EXPECT_NE(err.find("arena"), std::string::npos) << err;
}

TEST(PeerValues, BarrierVerdictOutsideTheWorld) {
  const std::string err = RankOneAgainst([](int fd, const wire::BootHello& one) {
    SendTable(fd, TableFor(one));
    // Rank 1's first set-up barrier: answered with rank 99.
    const net::Deadline d = net::Clock::now() + std::chrono::seconds(5);
    int32_t got = 0;
    (void)net::RecvAll(fd, &got, sizeof(got), d);
    const int32_t verdict = 99;
    (void)net::SendAll(fd, &verdict, sizeof(verdict), d);
    char byte;
    (void)net::RecvAll(fd, &byte, 1, d);  // until rank 1 closes
  });
  EXPECT_NE(err.find("barrier verdict names rank 99, outside 0..1"), std::string::npos) << err;
}

// A lost rank named by a peer (rank 0's verdict, the word another rank of
// the host wrote in the shared segment) outside the world is reported as
// such, not used to look up its host.
TEST(PeerValues, LostRankOutsideTheWorld) {
  Communicator::Impl impl;
  impl.world = 2;
  impl.peers.resize(2);
  for (int lost : {-7, 2, 1 << 30}) {
    absl::Status st = impl.Lost(lost, "");
    EXPECT_EQ(NrtStatusOf(st), NRT_TIMEOUT);
    EXPECT_NE(std::string(st.message()).find("outside 0..1"), std::string::npos) << st;
  }
}

}  // namespace
}  // namespace neuron::collectives
