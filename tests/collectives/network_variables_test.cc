// The runtime variables that shape traffic between hosts, each run unset,
// set, and at a boundary, with the difference asserted on what the
// transport reports (Communicator::NetworkStats):
//   NEURON_RT_CC_STREAM_SPLIT   messages in flight per stream
//   NEURON_RT_REGISTER_HBM_MR   one registration per device memory region
//   NEURON_RT_ENABLE_P2P        the registration interface named
// The variables go through the configuration (OptionsFromConfig), as the
// tools and libnrt pass them, so the resolution rules apply too.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "lib/collectives/communicator.h"
#include "lib/collectives/launch.h"
#include "lib/config/config.h"
#include "tests/collectives/rank_harness.h"

namespace neuron::collectives {
namespace {

using testing::JobOptions;
using testing::RunJob;

using Env = std::map<std::string, std::string>;

config::RuntimeConfig Resolve(const Env& env) {
  config::PlatformFacts facts;
  auto it = env.find("NEURON_SIM_INSTANCE_TYPE");
  facts.arch = it != env.end() && it->second.rfind("trn2", 0) == 0 ? "trn2" : "trn1";
  const config::Resolution r = config::Resolve(
      [&](std::string_view name) -> std::optional<std::string> {
        auto v = env.find(std::string(name));
        if (v == env.end()) return std::nullopt;
        return v->second;
      },
      facts);
  return r.config;
}

// Two hosts of one rank each; every rank all-reduces 4 MiB from buffers
// named as its device memory, then sends as much to its partner, and checks
// its transport's figures against `want` (a mismatch exits non-zero).
struct Expect {
  int collective_limit = -1;  // -1: not checked
  int p2p_limit = -1;
  bool regions = false;
  const char* interface_name = "dma-buf";
};

void RunTwoHosts(const Env& env, const Expect& want) {
  const config::RuntimeConfig cfg = Resolve(env);
  JobOptions o;
  o.base = OptionsFromConfig(cfg, [](std::string_view) { return std::optional<std::string>(); });
  o.base.world = 2;
  o.base.timeout_s = 20;
  o.base.chunk_bytes = 64 * 1024;
  o.host_addr = {"127.0.0.1", "127.0.0.2"};
  auto results = RunJob(o, [&](Communicator& c) {
    int bad = 0;
    const size_t count = 1 << 20;  // 4 MiB: many messages, every slot used
    std::vector<float> in(count, 1.0f + static_cast<float>(c.rank())), out(count);
    if (!c.AddDeviceMemory(in.data(), in.size() * sizeof(float)).ok()) ++bad;
    if (!c.AddDeviceMemory(out.data(), out.size() * sizeof(float)).ok()) ++bad;
    if (!c.AllReduce(in.data(), out.data(), count, DataType::kF32, ReduceOp::kSum).ok()) ++bad;
    if (out[0] != 3.0f || out[count - 1] != 3.0f) ++bad;
    const TransportStats after_collective = c.NetworkStats();
    const int partner = 1 - c.rank();
    if (!c.SendRecv(in.data(), partner, out.data(), partner, count * sizeof(float)).ok()) ++bad;
    if (out[0] != 1.0f + static_cast<float>(partner)) ++bad;
    const TransportStats s = c.NetworkStats();
    if (c.TransportName().rfind("libfabric", 0) != 0) return 0;  // TCP fallback: no slots
    auto fail = [&](const char* what) {
      std::fprintf(stderr, "rank %d: %s (limits %d+%d, most %d+%d, %llu registrations, "
                   "%llu region hits, memory '%s')\n",
                   c.rank(), what, s.inflight_limit[0], s.inflight_limit[1], s.max_inflight[0],
                   s.max_inflight[1], static_cast<unsigned long long>(s.registrations),
                   static_cast<unsigned long long>(s.region_hits), s.memory.c_str());
      ++bad;
    };
    if (want.collective_limit >= 0 && s.inflight_limit[0] != want.collective_limit) {
      fail("collective stream limit differs");
    }
    if (want.p2p_limit >= 0 && s.inflight_limit[1] != want.p2p_limit) {
      fail("point-to-point stream limit differs");
    }
    // The limits are what the transfers keep to, and each stream is used by
    // its own operations only.
    if (s.max_inflight[0] > s.inflight_limit[0] || s.max_inflight[1] > s.inflight_limit[1]) {
      fail("more in flight than the stream's share");
    }
    if (after_collective.max_inflight[1] != 0) fail("the all-reduce used the point-to-point stream");
    if (s.max_inflight[1] < 1) fail("the send/recv did not use the point-to-point stream");
    if (want.collective_limit >= 0 && s.max_inflight[0] != want.collective_limit) {
      fail("a 4 MiB all-reduce did not fill the collective stream's share");
    }
    if (want.regions != (s.region_hits > 0)) fail("device memory registration differs");
    if (s.memory.find(want.interface_name) == std::string::npos) fail("interface not named");
    return bad ? 1 : 0;
  });
  for (size_t r = 0; r < results.size(); ++r) {
    EXPECT_EQ(results[r].exit_code, 0) << "rank " << r << " (see its messages above)";
  }
}

TEST(NetworkVariables, StreamSplitDividesTheMessagesInFlight) {
  // 64 KiB messages of 64 KiB chunks, 8 channel buffers: 8 in flight in all.
  struct Case {
    const char* split;  // nullptr: unset
    int collective, p2p;
  };
  for (const Case& k : {Case{nullptr, 6, 2}, Case{"1:1", 4, 4}, Case{"1:7", 1, 7},
                        Case{"7:1", 7, 1}, Case{"1000:1", 7, 1}, Case{"3:x", 6, 2}}) {
    SCOPED_TRACE(k.split ? k.split : "unset");
    Env env = {{"NEURON_RT_CC_CHUNK_SIZE", "65536"}, {"NEURON_RT_CC_CHANNEL_BUFFER_N", "8"}};
    if (k.split) env["NEURON_RT_CC_STREAM_SPLIT"] = k.split;
    RunTwoHosts(env, Expect{k.collective, k.p2p});
  }
}

TEST(NetworkVariables, RegisterHbmMrRegistersDeviceMemoryOnce) {
  struct Case {
    Env env;
    bool regions;
  };
  const char* kTrn2 = "trn2.48xlarge";
  for (const Case& k :
       {Case{{}, false},  // trn1: no HBM mapping, so per transfer
        Case{{{"NEURON_SIM_INSTANCE_TYPE", kTrn2}}, true},
        Case{{{"NEURON_SIM_INSTANCE_TYPE", kTrn2}, {"NEURON_RT_REGISTER_HBM_MR", "0"}}, false},
        // Forced off without the mapping it needs.
        Case{{{"NEURON_SIM_INSTANCE_TYPE", kTrn2}, {"NEURON_RT_MAP_HBM", "0"}}, false}}) {
    SCOPED_TRACE(k.env.empty() ? "trn1" : k.env.rbegin()->first);
    Expect want;
    want.regions = k.regions;
    RunTwoHosts(k.env, want);
  }
}

TEST(NetworkVariables, EnableP2pNamesTheRegistrationInterface) {
  for (const auto& [value, name] :
       std::vector<std::pair<const char*, const char*>>{{nullptr, "dma-buf"},
                                                        {"1", "p2p"},
                                                        {"0", "dma-buf"}}) {
    SCOPED_TRACE(value ? value : "unset");
    Env env;
    if (value) env["NEURON_RT_ENABLE_P2P"] = value;
    Expect want;
    want.interface_name = name;
    RunTwoHosts(env, want);
  }
}

}  // namespace
}  // namespace neuron::collectives
