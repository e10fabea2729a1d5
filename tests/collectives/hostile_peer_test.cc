// Strangers against a job: a port scan, an HTTP request, an idle
// connection, a dripping one and an impostor's hello, during the bootstrap
// and while collectives run, on 2 ranks of one host and 4 ranks on two
// loopback "hosts", with and without the job secret. Every job must finish
// with the right results; the gate's own test checks what each stranger
// is told and logged.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/collectives/communicator.h"
#include "tests/collectives/rank_harness.h"
#include "tests/collectives/stranger.h"

namespace neuron::collectives {
namespace {

using testing::JobOptions;
using testing::RunJob;
using testing::Stranger;

// All-reduces whose sums every rank checks.
int SumsAgree(Communicator& c, int iterations) {
  constexpr size_t kCount = 1000;
  std::vector<float> in(kCount), out(kCount);
  for (int it = 0; it < iterations; ++it) {
    for (size_t i = 0; i < kCount; ++i) in[i] = static_cast<float>(c.rank() * 7 + i % 13 + it);
    absl::Status st = c.AllReduce(in.data(), out.data(), kCount, DataType::kF32, ReduceOp::kSum);
    if (!st.ok()) {
      std::fprintf(stderr, "rank %d: %s\n", c.rank(), std::string(st.message()).c_str());
      return 1;
    }
    for (size_t i = 0; i < kCount; ++i) {
      float want = 0;
      for (int r = 0; r < c.world(); ++r) want += static_cast<float>(r * 7 + i % 13 + it);
      if (out[i] != want) {
        std::fprintf(stderr, "rank %d: [%zu] = %g, want %g\n", c.rank(), i, out[i], want);
        return 1;
      }
    }
  }
  absl::Status st = c.Barrier();
  if (!st.ok()) std::fprintf(stderr, "rank %d: %s\n", c.rank(), std::string(st.message()).c_str());
  return st.ok() ? 0 : 1;
}

struct Case {
  Stranger kind;
  int world;
  bool secret;
  bool during;  // while collectives run, else during the bootstrap
};

std::string Name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return std::string(testing::StrangerName(c.kind)) + "_" + std::to_string(c.world) + "ranks_" +
         (c.secret ? "secret" : "nosecret") + "_" + (c.during ? "running" : "bootstrap");
}

class HostilePeer : public ::testing::TestWithParam<Case> {};

TEST_P(HostilePeer, JobFinishesWithRightResults) {
  const Case& c = GetParam();
  JobOptions o;
  o.base.world = c.world;
  o.base.timeout_s = 20;
  o.limit_s = 60;
  if (c.secret) o.base.secret = "hostile-peer-test-secret";
  if (c.world == 4) o.host_addr = {"127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.2"};
  pid_t stranger = -1;
  sockaddr_in root{};
  o.before_start = [&](const sockaddr_in& addr) {
    root = addr;
    // Connected before any rank starts: rank 0 meets it first.
    if (!c.during) stranger = testing::StartStranger(c.kind, addr, c.world, false, 10);
  };
  o.while_running = [&](const std::vector<pid_t>&) {
    if (c.during) stranger = testing::StartStranger(c.kind, root, c.world, true, 10);
  };
  auto results = RunJob(o, [&](Communicator& comm) { return SumsAgree(comm, c.during ? 200 : 5); });
  testing::StopStranger(stranger);
  for (size_t r = 0; r < results.size(); ++r) {
    EXPECT_EQ(results[r].exit_code, 0) << "rank " << r << " (see its messages above)";
  }
}

std::vector<Case> Cases() {
  std::vector<Case> out;
  for (Stranger kind : {Stranger::kScan, Stranger::kGarbage, Stranger::kIdle, Stranger::kDrip,
                        Stranger::kForged}) {
    for (int world : {2, 4}) {
      for (bool secret : {false, true}) {
        // Without a secret a forged hello is a rank as far as anyone can
        // tell; only the secret keeps it out.
        if (kind == Stranger::kForged && !secret) continue;
        for (bool during : {false, true}) out.push_back({kind, world, secret, during});
      }
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Strangers, HostilePeer, ::testing::ValuesIn(Cases()), Name);

}  // namespace
}  // namespace neuron::collectives
