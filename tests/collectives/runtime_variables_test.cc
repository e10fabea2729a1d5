// The runtime variables of the collectives engine, each run unset, set, and
// at a boundary, with the difference asserted on what the engine reports or
// does:
//   NEURON_RT_CC_STREAM_SPLIT   messages in flight per stream (NetworkStats)
//   NEURON_RT_REGISTER_HBM_MR   one registration per device memory region
//   NEURON_RT_ENABLE_P2P        the registration interface named
//   NEURON_RT_LOW_LATENCY_TASKS_CPU_AFFINITY, NEURON_RT_ONE_THREAD_PER_CORE
//                               the CPU each rank is pinned to
//   NEURON_RT_ENABLE_HW_EXECUTION_BARRIER, NEURON_RT_DISABLE_EXECUTION_BARRIER,
//   NEURON_RT_DBG_CC_DMA_PACKET_SIZE
//                               what neuron-allreduce says and does
// The variables go through the configuration (OptionsFromConfig), as the
// tools and libnrt pass them, so the resolution rules apply too.
#include <sched.h>
#include <unistd.h>

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
#include "tests/support/runtime_env.h"
#include "tests/support/tool_runner.h"

namespace neuron::collectives {
namespace {

using testing::JobOptions;
using testing::RunJob;

using Env = std::map<std::string, std::string>;

config::RuntimeConfig Resolve(const Env& env) {
  config::PlatformFacts facts;
  facts.host_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  auto it = env.find("NEURON_SIM_INSTANCE_TYPE");
  facts.arch = it != env.end() && it->second.rfind("trn2", 0) == 0 ? "trn2" : "trn1";
  return config::Resolve(neuron::testing::MapEnv(env), facts).config;
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

TEST(CollectivesVariables, StreamSplitDividesTheMessagesInFlight) {
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

TEST(CollectivesVariables, RegisterHbmMrRegistersDeviceMemoryOnce) {
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

TEST(CollectivesVariables, EnableP2pNamesTheRegistrationInterface) {
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

// The CPUs this process may run on.
std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

TEST(CollectivesVariables, AffinityVariablesPinEachRank) {
  const int ncpu = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  const int last = ncpu - 1;
  struct Case {
    Env env;
    std::vector<int> want;  // per rank: the one CPU; empty: not pinned
  };
  const std::string last_cpu = std::to_string(last);
  for (const Case& k :
       {Case{{}, {}},
        Case{{{"NEURON_RT_LOW_LATENCY_TASKS_CPU_AFFINITY", last_cpu}}, {last, last}},
        Case{{{"NEURON_RT_LOW_LATENCY_TASKS_CPU_AFFINITY", "0-" + last_cpu}}, {0, 1 % ncpu}},
        Case{{{"NEURON_RT_ONE_THREAD_PER_CORE", "1"}}, {0, 1 % ncpu}},
        // The list wins over one-thread-per-core's own choice.
        Case{{{"NEURON_RT_ONE_THREAD_PER_CORE", "1"},
              {"NEURON_RT_LOW_LATENCY_TASKS_CPU_AFFINITY", "0"}},
             {0, 0}}}) {
    SCOPED_TRACE(k.env.empty() ? "unset" : k.env.begin()->first + "=" + k.env.begin()->second);
    JobOptions o;
    o.base = OptionsFromConfig(Resolve(k.env),
                               [](std::string_view) { return std::optional<std::string>(); });
    o.base.world = 2;
    o.base.timeout_s = 20;
    const std::vector<int> before = AllowedCpus();
    auto results = RunJob(o, [&](Communicator& c) {
      const std::vector<int> now = AllowedCpus();
      const std::vector<int> want =
          k.want.empty() ? before : std::vector<int>{k.want[static_cast<size_t>(c.rank())]};
      if (now != want) {
        std::fprintf(stderr, "rank %d runs on %zu CPU(s), first %d; wanted %zu, first %d\n",
                     c.rank(), now.size(), now.empty() ? -1 : now[0], want.size(), want[0]);
        return 1;
      }
      return 0;
    });
    for (size_t r = 0; r < results.size(); ++r) EXPECT_EQ(results[r].exit_code, 0) << "rank " << r;
  }
}

TEST(CollectivesVariables, BarrierVariablesChangeWhatNeuronAllreduceWaitsOn) {
  struct Case {
    Env env;
    const char* line;
  };
  for (const Case& k :
       {Case{{}, "# barrier before each size: through rank 0's socket"},
        Case{{{"NEURON_RT_ENABLE_HW_EXECUTION_BARRIER", "1"}},
             "# barrier before each size: on shared-memory flags"},
        Case{{{"NEURON_RT_ENABLE_HW_EXECUTION_BARRIER", "0"}},
             "# barrier before each size: through rank 0's socket"},
        Case{{{"NEURON_RT_DISABLE_EXECUTION_BARRIER", "1"}},
             "# barrier before each size: none (NEURON_RT_DISABLE_EXECUTION_BARRIER)"},
        // Disabled wins over the hardware barrier.
        Case{{{"NEURON_RT_DISABLE_EXECUTION_BARRIER", "1"},
              {"NEURON_RT_ENABLE_HW_EXECUTION_BARRIER", "1"}},
             "# barrier before each size: none"}}) {
    SCOPED_TRACE(k.line);
    neuron::testing::ToolOptions options;
    options.env = k.env;
    const neuron::testing::ToolResult r = neuron::testing::RunTool(
        "neuron-allreduce", {"-r", "2", "-b", "8", "-e", "64", "-c", "random", "--show-algorithm"},
        options);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(k.line), std::string::npos) << r.out;
  }
  // With percentiles the barrier runs before every iteration too.
  neuron::testing::ToolOptions options;
  const neuron::testing::ToolResult r = neuron::testing::RunTool(
      "neuron-allreduce", {"-r", "2", "-b", "8", "-e", "8", "-t", "p50", "--show-algorithm"},
      options);
  EXPECT_NE(r.out.find("# barrier before each size and iteration:"), std::string::npos) << r.out;
}

TEST(CollectivesVariables, IgnoredCcPacketSizeIsWarnedAbout) {
  for (const auto& [value, warned] : std::vector<std::pair<const char*, bool>>{
           {nullptr, false}, {"4096", true}, {"0,65536", true}}) {
    SCOPED_TRACE(value ? value : "unset");
    neuron::testing::ToolOptions options;
    if (value) options.env["NEURON_RT_DBG_CC_DMA_PACKET_SIZE"] = value;
    const neuron::testing::ToolResult r =
        neuron::testing::RunTool("neuron-allreduce", {"-r", "2", "-b", "8", "-e", "8"}, options);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err.find("NEURON_RT_DBG_CC_DMA_PACKET_SIZE=") != std::string::npos &&
                  r.err.find("is ignored") != std::string::npos,
              warned)
        << r.err;
  }
  // Malformed: init fails, naming the variable.
  neuron::testing::ToolOptions options;
  options.env["NEURON_RT_DBG_CC_DMA_PACKET_SIZE"] = "big";
  const neuron::testing::ToolResult r =
      neuron::testing::RunTool("neuron-allreduce", {"-r", "2", "-b", "8", "-e", "8"}, options);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("NEURON_RT_DBG_CC_DMA_PACKET_SIZE"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace neuron::collectives
