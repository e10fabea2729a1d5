// What three otherwise invisible variables change in the device profile,
// each unset, set, and at a boundary:
//  - NEURON_RT_DBG_DMA_PACKETIZATION_SIZE: the packets of host<->device copies;
//  - NEURON_RT_ENABLE_DGE_NOTIFICATIONS: DGE notifications of dynamic DMA;
//  - NEURON_RT_INSPECT_PRECACHE_ENABLE: metadata cached by the warmups;
//  - NEURON_RT_PROFILE_BUF_CC_CORE_EVENT_MB: the collectives events kept;
//  - every NEURON_RT_PROFILE_BUF_*_MB: the kind of event each holds.
#include <dirent.h>

#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/log/log.h"
#include "lib/runtime/observe.h"
#include "lib/runtime/runtime.h"
#include "nlohmann/json.hpp"
#include "tests/device/fast_temp_dir.h"
#include "tests/support/runtime_env.h"
#include "tests/runtime/test_neff.h"

namespace neuron::runtime {
namespace {

using nlohmann::json;
using Env = std::map<std::string, std::string>;

// 1 MiB in, 1 MiB out: 256 packets of the default 4096 bytes each way.
constexpr const char* kMiBHlo = R"(HloModule mib
ENTRY main {
  a = f32[262144] parameter(0)
  ROOT n = f32[262144] negate(a)
}
)";

// Two DGE instructions: a dynamic slice (16 floats read) and a dynamic
// update slice (16 floats written).
constexpr const char* kDynamicHlo = R"(HloModule dyn
ENTRY main {
  a = f32[64] parameter(0)
  i = s32[] parameter(1)
  d = f32[16] dynamic-slice(a, i), dynamic_slice_sizes={16}
  ROOT u = f32[64] dynamic-update-slice(a, d, i)
}
)";

class SeedEffectsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::FastTempDir();
  }

  // Runs `hlo` `times` on nc0 under the profile environment plus `extra`,
  // with profiles written to a directory of its own; writes `write_bytes`
  // to the first input through the C API's copy path first (a tensor
  // write). Returns the device profile written (session or model mode).
  json Profile(const std::string& case_name, const Env& extra, const std::string& hlo, int times,
               uint64_t write_bytes = 0) {
    const std::string out = root_ + "/" + case_name;
    Env env = {{"NEURON_SIM_ROOT", root_ + "/sim"},
               {"NEURON_RT_LOG_LEVEL", "WARN"},
               {"NEURON_RT_INSPECT_ENABLE", "1"},
               {"NEURON_RT_INSPECT_SYSTEM_PROFILE", "0"},
               {"NEURON_RT_INSPECT_OUTPUT_DIR", out}};
    for (const auto& [k, v] : extra) env[k] = v;
    InitOptions o;
    o.env = testing::MapEnv(env);
    {
      absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Init(o);
      EXPECT_TRUE(rt.ok()) << rt.status();
      if (!rt.ok()) return json();
      absl::StatusOr<std::string> neff = testing::BuildTestNeff(hlo);
      EXPECT_TRUE(neff.ok()) << neff.status();
      if (!neff.ok()) return json();
      const int core = (*rt)->cores()[0];
      absl::StatusOr<std::unique_ptr<Model>> model = (*rt)->LoadBytes(*neff, core);
      EXPECT_TRUE(model.ok()) << model.status();
      if (!model.ok()) return json();
      std::vector<std::unique_ptr<TensorBuffer>> in, outs;
      std::vector<const TensorBuffer*> ip;
      std::vector<TensorBuffer*> op;
      for (const TensorInfo& t : (*model)->inputs()) {
        in.push_back(*(*rt)->AllocateTensor(core, t.bytes, t.name));
        std::memset(in.back()->data(), 0, t.bytes);
        ip.push_back(in.back().get());
      }
      for (const TensorInfo& t : (*model)->outputs()) {
        outs.push_back(*(*rt)->AllocateTensor(core, t.bytes, t.name));
        op.push_back(outs.back().get());
      }
      if (write_bytes > 0) {
        std::vector<char> host(write_bytes);
        TensorOpScope dma("tensor_write", in[0].get(), nullptr, write_bytes);
        EXPECT_TRUE(in[0]->Write(host.data(), 0, write_bytes).ok());
      }
      for (int i = 0; i < times; ++i) EXPECT_TRUE((*model)->Execute(ip, op).ok());
    }  // unloaded: the session trace is written
    std::vector<std::string> found;
    if (DIR* d = opendir(out.c_str())) {
      while (dirent* e = readdir(d)) {
        const std::string n = e->d_name;
        if (n.rfind("device_profile_", 0) == 0) found.push_back(out + "/" + n);
      }
      closedir(d);
    }
    EXPECT_EQ(found.size(), 1u) << case_name << ": " << logs_;
    if (found.size() != 1) return json();
    std::ifstream f(found[0]);
    std::stringstream ss;
    ss << f.rdbuf();
    return json::parse(ss.str(), nullptr, false);
  }

  // Events of category `cat`, by name.
  static std::map<std::string, json> ByName(const json& doc, const std::string& cat) {
    std::map<std::string, json> events;
    if (!doc.contains("traceEvents")) return events;
    for (const json& e : doc["traceEvents"])
      if (e.value("cat", "") == cat) events[e["name"].get<std::string>()] = e;
    return events;
  }

  std::string root_;
  testing::LogCapture log_;
  std::string& logs_ = log_.console;
};

TEST_F(SeedEffectsTest, DmaPacketizationSizeSetsThePacketsOfEachCopy) {
  constexpr uint64_t kMiB = 1 << 20;
  struct Case {
    const char* name;
    std::optional<std::string> value;
    uint64_t packet_bytes, packets_per_mib;
  };
  const Case cases[] = {
      {"unset", std::nullopt, 4096, 256},
      {"64k", "64k", 65536, 16},
      {"cap", "1048575", 1048575, 2},  // 1 MiB - 1: the cap, one byte short
      {"small", "64", 64, 16384},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Env env = {{"NEURON_RT_INSPECT_DEVICE_PROFILE", "session"}};
    if (c.value) env["NEURON_RT_DBG_DMA_PACKETIZATION_SIZE"] = *c.value;
    const json doc = Profile(c.name, env, kMiBHlo, 1, /*write_bytes=*/kMiB);
    const auto copies = ByName(doc, "h2d_dma");
    // The execution's input and output, the tensor write, the weights.
    for (const char* span : {"h2d a", "d2h n", "h2d tensor_write 'a'"}) {
      ASSERT_EQ(copies.count(span), 1u) << span << " in " << doc.dump(1);
      const json& args = copies.at(span)["args"];
      EXPECT_EQ(args["bytes"], kMiB) << span;
      EXPECT_EQ(args["queue"], std::string(span).substr(0, 3)) << span;
      EXPECT_EQ(args["packet_bytes"], c.packet_bytes) << span;
      EXPECT_EQ(args["packets"], c.packets_per_mib) << span;
    }
    ASSERT_EQ(copies.count("h2d weights of model 'mib'"), 1u) << doc.dump(1);
    const json& weights = copies.at("h2d weights of model 'mib'")["args"];
    const uint64_t bytes = weights["bytes"];
    EXPECT_GT(bytes, 0u);
    EXPECT_EQ(weights["packets"], (bytes + c.packet_bytes - 1) / c.packet_bytes);
  }
}

TEST_F(SeedEffectsTest, DgeNotificationsAppearOnlyWhenEnabled) {
  struct Case {
    const char* name;
    std::optional<std::string> value;
    std::optional<std::string> filter;  // NEURON_RT_INSPECT_EVENT_FILTER_TYPE
    bool notified;
  };
  const Case cases[] = {
      {"unset", std::nullopt, std::nullopt, false},
      {"off", "0", std::nullopt, false},
      {"on", "1", std::nullopt, true},
      {"true", "true", std::nullopt, true},
      {"on_but_filtered", "1", "hardware,^dge", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Env env = {{"NEURON_RT_INSPECT_DEVICE_PROFILE", "model"}};
    if (c.value) env["NEURON_RT_ENABLE_DGE_NOTIFICATIONS"] = *c.value;
    if (c.filter) env["NEURON_RT_INSPECT_EVENT_FILTER_TYPE"] = *c.filter;
    const json doc = Profile(c.name, env, kDynamicHlo, 1);
    const auto dge = ByName(doc, "dge");
    // The instructions ran as DMA spans either way.
    EXPECT_EQ(ByName(doc, "dma").count("d"), 1u) << doc.dump(1);
    if (!c.notified) {
      EXPECT_TRUE(dge.empty()) << doc.dump(1);
      continue;
    }
    ASSERT_EQ(dge.size(), 2u) << doc.dump(1);
    const json& slice = dge.at("dge d");
    EXPECT_EQ(slice["ph"], "i");
    EXPECT_EQ(slice["args"]["queue"], "dge0");
    EXPECT_EQ(slice["args"]["bytes"], 16 * 4);
    EXPECT_EQ(slice["args"]["opcode"], "dynamic-slice");
    const json& update = dge.at("dge u");
    EXPECT_EQ(update["args"]["queue"], "dge1");
    EXPECT_EQ(update["args"]["bytes"], 16 * 4);
    bool track = false;
    for (const json& e : doc["traceEvents"])
      if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "nc0 dge") {
        track = e["tid"] == slice["tid"];
      }
    EXPECT_TRUE(track) << "the notifications are on the core's dge track";
  }
}

TEST_F(SeedEffectsTest, PrecacheMovesMetadataWorkIntoTheWarmups) {
  struct Case {
    const char* name;
    std::optional<std::string> value;
    const char* warmup;
    bool cached;
  };
  const Case cases[] = {
      {"unset", std::nullopt, "2", false},
      {"off", "0", "2", false},
      {"on", "1", "2", true},
      {"on_one_warmup", "true", "1", true},
      {"on_no_warmup", "1", "0", false},  // nothing ran before the profiled one
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Env env = {{"NEURON_RT_INSPECT_DEVICE_PROFILE", "model"},
               {"NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP", c.warmup}};
    if (c.value) env["NEURON_RT_INSPECT_PRECACHE_ENABLE"] = *c.value;
    const json doc = Profile(c.name, env, kDynamicHlo, std::stoi(c.warmup) + 1);
    ASSERT_TRUE(doc.contains("otherData")) << doc.dump(1);
    const json& m = doc["otherData"]["metadata"];
    ASSERT_TRUE(m.is_object()) << doc["otherData"];
    EXPECT_EQ(m["precache"], c.value.has_value() && *c.value != "0");
    if (c.cached) {
      // Every instruction span (d, u) found its metadata cached.
      const size_t spans = ByName(doc, "dma").size() + ByName(doc, "compute").size();
      EXPECT_EQ(spans, 2u) << doc.dump(1);
      EXPECT_EQ(m["cache_hits"], spans) << m;
      EXPECT_EQ(m["build_ns"], 0) << m;
    } else {
      EXPECT_EQ(m["cache_hits"], 0) << m;
      EXPECT_GT(m["build_ns"].get<int64_t>(), 0) << m;
    }
  }
}

// A collective: its span is a cc_running instruction, and its issue is a
// cc_pending event kept in the collectives event buffer.
constexpr const char* kCollectiveHlo = R"(HloModule cc
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[256] parameter(0)
  ROOT r = f32[256] all-reduce(a), replica_groups={}, to_apply=add
}
)";

TEST_F(SeedEffectsTest, CcCoreEventBufferHoldsTheIssueOfEachCollective) {
  struct Case {
    const char* name;
    std::optional<std::string> mib;  // NEURON_RT_PROFILE_BUF_CC_CORE_EVENT_MB
    std::optional<std::string> filter;
    bool kept;
  };
  const Case cases[] = {
      {"unset", std::nullopt, std::nullopt, true},
      {"one", "1", std::nullopt, true},
      {"zero", "0", std::nullopt, false},  // no room: dropped, and the trace says so
      {"filtered", std::nullopt, "hardware,^cc_pending", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Env env = {{"NEURON_RT_INSPECT_DEVICE_PROFILE", "model"}};
    if (c.mib) env["NEURON_RT_PROFILE_BUF_CC_CORE_EVENT_MB"] = *c.mib;
    if (c.filter) env["NEURON_RT_INSPECT_EVENT_FILTER_TYPE"] = *c.filter;
    const json doc = Profile(std::string("cc_") + c.name, env, kCollectiveHlo, 1);
    EXPECT_EQ(ByName(doc, "cc_running").count("r"), 1u) << doc.dump(1);
    const auto pending = ByName(doc, "cc_pending");
    EXPECT_EQ(pending.count("issued r"), c.kept ? 1u : 0u) << doc.dump(1);
    if (c.mib && *c.mib == "0") {
      EXPECT_NE(doc.dump().find("NEURON_RT_PROFILE_BUF_CC_CORE_EVENT_MB"), std::string::npos)
          << "the truncation names the buffer's variable: " << doc.dump(1);
    }
  }
}

// Compute and data movement (with kCollectiveHlo, every device buffer gets
// events).
constexpr const char* kComputeAndDmaHlo = R"(HloModule every
ENTRY main {
  a = f32[16,16] parameter(0)
  t = f32[16,16] transpose(a), dimensions={1,0}
  m = f32[16,16] multiply(a, a)
  ROOT out = (f32[16,16], f32[16,16]) tuple(t, m)
}
)";

// Each NEURON_RT_PROFILE_BUF_*_MB at 0 drops its kind of event, and the
// trace names the variable; THROTTLE has nothing to hold here.
TEST_F(SeedEffectsTest, EachProfileBufferHoldsItsKindOfEvent) {
  struct Case {
    const char* variable;  // nullptr: none at 0
    const char* category;  // the events it holds ("" : none here)
  };
  const Case cases[] = {
      {nullptr, ""},
      {"NEURON_RT_PROFILE_BUF_INSTRUCTION_MB", "compute"},
      {"NEURON_RT_PROFILE_BUF_DMA_MB", "dma"},
      {"NEURON_RT_PROFILE_BUF_CC_CORE_INSTRUCTION_MB", "cc_running"},
      {"NEURON_RT_PROFILE_BUF_CC_CORE_EVENT_MB", "cc_pending"},
      {"NEURON_RT_PROFILE_BUF_EVENT_MB", "nc_exec"},
      {"NEURON_RT_PROFILE_BUF_H2D_DMA_MB", "h2d_dma"},
      {"NEURON_RT_PROFILE_BUF_THROTTLE_MB", ""},
  };
  const char* kCategories[] = {"compute", "dma", "cc_running", "cc_pending", "nc_exec", "h2d_dma"};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.variable ? c.variable : "none at 0");
    Env env = {{"NEURON_RT_INSPECT_DEVICE_PROFILE", "model"}};
    if (c.variable) env[c.variable] = "0";
    const std::string name = std::string("buf_") + (c.variable ? c.variable : "none");
    const json docs[] = {Profile(name + "_a", env, kComputeAndDmaHlo, 1),
                         Profile(name + "_b", env, kCollectiveHlo, 1)};
    for (const char* cat : kCategories) {
      const bool dropped = std::string(cat) == c.category;
      EXPECT_EQ(ByName(docs[0], cat).empty() && ByName(docs[1], cat).empty(), dropped)
          << cat << ": " << docs[0].dump(1) << docs[1].dump(1);
    }
    json truncated = json::object();
    for (const json& doc : docs) {
      if (doc.contains("otherData") && doc["otherData"].contains("truncated")) {
        truncated.update(doc["otherData"]["truncated"]);
      }
    }
    if (c.variable != nullptr && *c.category != '\0') {
      EXPECT_TRUE(truncated.contains(c.variable)) << truncated.dump(1);
    } else {
      EXPECT_TRUE(truncated.empty()) << truncated.dump(1);
    }
  }
}

}  // namespace
}  // namespace neuron::runtime
