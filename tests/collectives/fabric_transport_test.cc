// The libfabric transport counts what a receive got, not what it posted: a
// peer whose message is shorter than the chunk both ends cut is named, and
// the rest of the buffer is never taken for data.
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "lib/collectives/net.h"
#include "lib/collectives/transport.h"

namespace neuron::collectives {
namespace {

// A peer's endpoint name shorter than this provider's addresses would be
// read past its end by fi_av_insert: refused, naming the rank.
TEST(FabricTransport, AnEndpointNameOfTheWrongLengthIsRefused) {
  const std::string provider = BestFabricProvider();
  if (provider.empty()) GTEST_SKIP() << "no libfabric provider here";
  net::Deadline deadline = net::Clock::now() + std::chrono::seconds(10);
  TransportSetup s;
  s.rank = 1;
  s.world = 2;
  sockaddr_in lo = *net::ParseHost("127.0.0.1");
  s.addrs = {lo, lo};
  s.all_gather = [&](const std::string& mine) -> absl::StatusOr<std::vector<std::string>> {
    if (mine[0] != 'F') return absl::UnavailableError("no endpoint here");
    const std::string short_name = mine.substr(0, mine.find('\0') + 1) + "abc";
    return std::vector<std::string>{short_name, mine};
  };
  s.tcp_mesh = []() -> absl::StatusOr<std::vector<int>> {
    return absl::UnavailableError("no TCP mesh in this test");
  };
  s.hooks.check = [] { return absl::OkStatus(); };
  s.hooks.deadline = &deadline;
  auto t = MakeInterHostTransport(s);
  ASSERT_FALSE(t.ok());
  if (absl::IsUnavailable(t.status())) GTEST_SKIP() << t.status();
  EXPECT_NE(std::string(t.status().message()).find("rank 0 gave a libfabric"), std::string::npos)
      << t.status();
  EXPECT_NE(std::string(t.status().message()).find("endpoint name of 3 bytes"), std::string::npos)
      << t.status();
}

TEST(FabricTransport, AShortMessageNamesItsSender) {
  if (BestFabricProvider().empty()) GTEST_SKIP() << "no libfabric provider here";
  // Two ranks in two threads; all_gather meets in the middle.
  std::promise<std::string> blob[2];
  std::shared_future<std::string> got[2] = {blob[0].get_future().share(),
                                            blob[1].get_future().share()};
  net::Deadline deadline = net::Clock::now() + std::chrono::seconds(10);
  auto make = [&](int rank) {
    TransportSetup s;
    s.rank = rank;
    s.world = 2;
    sockaddr_in lo = *net::ParseHost("127.0.0.1");
    s.addrs = {lo, lo};
    s.chunk_bytes = 4096;
    s.all_gather = [&, rank](const std::string& mine) -> absl::StatusOr<std::vector<std::string>> {
      blob[rank].set_value(mine);
      return std::vector<std::string>{got[0].get(), got[1].get()};
    };
    s.tcp_mesh = []() -> absl::StatusOr<std::vector<int>> {
      return absl::UnavailableError("no TCP mesh in this test");
    };
    s.hooks.check = [] { return absl::OkStatus(); };
    s.hooks.lost = [](int peer, const std::string& why) {
      return absl::DeadlineExceededError("rank " + std::to_string(peer) + " lost: " + why);
    };
    s.hooks.deadline = &deadline;
    return MakeInterHostTransport(s);
  };
  absl::StatusOr<std::unique_ptr<Transport>> t1;
  std::thread other([&] { t1 = make(1); });
  absl::StatusOr<std::unique_ptr<Transport>> t0 = make(0);
  other.join();
  ASSERT_TRUE(t0.ok() && t1.ok()) << t0.status() << t1.status();
  if ((*t0)->Name().rfind("libfabric", 0) != 0) GTEST_SKIP() << "the job took " << (*t0)->Name();
  std::vector<char> out(100, 'a'), in(200, 'z');
  absl::Status sent;
  std::thread sender([&] { sent = (*t0)->Exchange(1, out.data(), out.size(), -1, nullptr, 0, 0); });
  absl::Status st = (*t1)->Exchange(-1, nullptr, 0, 0, in.data(), in.size(), 0);
  sender.join();
  EXPECT_TRUE(sent.ok()) << sent;
  EXPECT_NE(std::string(st.message()).find("rank 0 lost: it sent a 100-byte message where 200 bytes "
                                           "were due"),
            std::string::npos)
      << st;
}

}  // namespace
}  // namespace neuron::collectives
