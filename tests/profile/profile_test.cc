// Profile capture through the runtime: which executions are captured
// (model/session modes, warmup, ON_FAIL, core filter), what the Trace
// Event JSON holds (per-instruction spans named after HLO instructions,
// per-core tracks, args), filters, host counters and truncation.
#include <dirent.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/log/log.h"
#include "lib/profile/profiler.h"
#include "lib/profile/trace.h"
#include "lib/runtime/runtime.h"
#include "nlohmann/json.hpp"
#include "tests/device/fast_temp_dir.h"
#include "tests/profile/pftrace_reader.h"
#include "tests/runtime/test_neff.h"

namespace neuron::runtime {
namespace {

using nlohmann::json;

constexpr const char* kDotHlo = R"(HloModule mm
ENTRY main {
  a = f32[8,16] parameter(0)
  b = f32[16,4] parameter(1)
  d = f32[8,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[4,8] transpose(d), dimensions={1,0}
  ROOT n = f32[4,8] negate(t)
}
)";

// A loop of `n` trips: many instruction notifications from a small program.
std::string LoopHlo(int n) {
  return absl::StrFormat(R"(HloModule loop
cond {
  p = s32[] parameter(0)
  lim = s32[] constant(%d)
  ROOT lt = pred[] compare(p, lim), direction=LT
}
body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT inc = s32[] add(p, one)
}
ENTRY main {
  x = s32[] parameter(0)
  ROOT w = s32[] while(x), condition=cond, body=body
}
)", n);
}

class ProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::FastTempDir();
    out_ = root_ + "/profiles";
    env_["NEURON_SIM_ROOT"] = root_ + "/sim";
    env_["NEURON_RT_LOG_LEVEL"] = "WARN";
    env_["NEURON_RT_INSPECT_ENABLE"] = "1";
    env_["NEURON_RT_INSPECT_OUTPUT_DIR"] = out_;
    env_["NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY"] = root_ + "/core";
    log::SetConsoleSink([this](std::string_view line) { logs_ += line; });
    log::SetSyslogSink([](int, std::string_view) {});
  }
  void TearDown() override {
    log::SetConsoleSink(nullptr);
    log::SetSyslogSink(nullptr);
    log::ConfigureDefaults();
  }

  std::unique_ptr<Runtime> Init() {
    InitOptions o;
    std::map<std::string, std::string> env = env_;
    o.env = [env](std::string_view name) -> std::optional<std::string> {
      auto it = env.find(std::string(name));
      if (it == env.end()) return std::nullopt;
      return it->second;
    };
    absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Init(o);
    EXPECT_TRUE(rt.ok()) << rt.status();
    return rt.ok() ? std::move(*rt) : nullptr;
  }

  // Loads `hlo` and executes it `times` with zero inputs; returns the last status.
  absl::Status Run(Runtime& rt, const std::string& hlo, int times) {
    absl::StatusOr<std::string> neff = testing::BuildTestNeff(hlo);
    if (!neff.ok()) return neff.status();
    absl::StatusOr<std::unique_ptr<Model>> model = rt.LoadBytes(*neff, rt.cores()[0]);
    if (!model.ok()) return model.status();
    std::vector<std::unique_ptr<TensorBuffer>> in, out;
    std::vector<const TensorBuffer*> ip;
    std::vector<TensorBuffer*> op;
    for (const TensorInfo& t : (*model)->inputs()) {
      in.push_back(*rt.AllocateTensor(rt.cores()[0], t.bytes, t.name));
      std::memset(in.back()->data(), 0, t.bytes);
      ip.push_back(in.back().get());
    }
    for (const TensorInfo& t : (*model)->outputs()) {
      out.push_back(*rt.AllocateTensor(rt.cores()[0], t.bytes, t.name));
      op.push_back(out.back().get());
    }
    absl::Status last;
    for (int i = 0; i < times; ++i) {
      absl::StatusOr<ExecuteResult> r = (*model)->Execute(ip, op);
      last = r.ok() ? absl::OkStatus() : r.status();
    }
    return last;  // the model is unloaded here: session traces are written
  }

  std::vector<std::string> Files(const std::string& prefix, const std::string& suffix = ".json") {
    std::vector<std::string> found;
    if (DIR* d = opendir(out_.c_str())) {
      while (dirent* e = readdir(d)) {
        const std::string n = e->d_name;
        if (n.rfind(prefix, 0) == 0 && n.size() > suffix.size() &&
            n.substr(n.size() - suffix.size()) == suffix)
          found.push_back(out_ + "/" + n);
      }
      closedir(d);
    }
    return found;
  }

  static json Load(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    json j = json::parse(ss.str(), nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << path << " is not JSON";
    return j;
  }

  // Every event is well-formed Trace Event JSON; returns the spans by name.
  static std::multimap<std::string, json> CheckEvents(const json& doc) {
    std::multimap<std::string, json> spans;
    EXPECT_TRUE(doc.contains("traceEvents") && doc["traceEvents"].is_array());
    for (const json& e : doc["traceEvents"]) {
      EXPECT_TRUE(e.contains("ph") && e["ph"].is_string()) << e;
      EXPECT_TRUE(e.contains("pid") && e["pid"].is_number_integer()) << e;
      EXPECT_TRUE(e.contains("name") && e["name"].is_string()) << e;
      const std::string ph = e["ph"];
      EXPECT_TRUE(ph == "X" || ph == "M" || ph == "C" || ph == "i") << e;
      if (ph == "X") {
        EXPECT_TRUE(e["ts"].is_number() && e["dur"].is_number()) << e;
        EXPECT_GE(e["dur"].get<double>(), 0) << e;
        EXPECT_TRUE(e["tid"].is_number_integer()) << e;
        spans.emplace(e["name"].get<std::string>(), e);
      }
    }
    return spans;
  }

  std::string root_, out_, logs_;
  std::map<std::string, std::string> env_;
};

TEST_F(ProfileTest, ModelModeTraceHasInstructionSpansWithArgs) {
  env_["NEURON_RT_INSPECT_DEVICE_PROFILE"] = "model";
  auto rt = Init();
  ASSERT_TRUE(Run(*rt, kDotHlo, 1).ok());
  const std::vector<std::string> files = Files("device_profile_model_mm_");
  ASSERT_EQ(files.size(), 1u) << logs_;
  const json doc = Load(files[0]);
  const auto spans = CheckEvents(doc);
  ASSERT_EQ(spans.count("d"), 1u) << doc.dump(1);
  const json& dot = spans.find("d")->second;
  EXPECT_EQ(dot["cat"], "compute");
  EXPECT_EQ(dot["args"]["opcode"], "dot");
  EXPECT_EQ(dot["args"]["flops"].get<int64_t>(), 2 * 8 * 4 * 16);
  EXPECT_EQ(dot["args"]["bytes"].get<int64_t>(), (8 * 16 + 16 * 4 + 8 * 4) * 4);
  // The transpose is data movement, on the core's dma track.
  ASSERT_EQ(spans.count("t"), 1u);
  EXPECT_EQ(spans.find("t")->second["cat"], "dma");
  EXPECT_NE(spans.find("t")->second["tid"], dot["tid"]);
  EXPECT_EQ(spans.count("mm"), 1u);  // nc_exec: the whole execution
  EXPECT_EQ(doc["otherData"]["mode"], "model");
  // Tracks are named per core.
  std::set<std::string> tracks;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") tracks.insert(e["args"]["name"]);
  EXPECT_TRUE(tracks.count("nc0 compute") && tracks.count("nc0 dma")) << doc.dump(1);
  // The system profile is on by default.
  EXPECT_EQ(Files("system_profile_pid").size(), 1u);
}

// NEURON_SIM_PROFILE_FORMAT=pftrace: the same profiles as Perfetto traces.
TEST_F(ProfileTest, PftraceFormatWritesPerfettoTraces) {
  env_["NEURON_RT_INSPECT_DEVICE_PROFILE"] = "model";
  env_["NEURON_SIM_PROFILE_FORMAT"] = "pftrace";
  env_["NEURON_RT_INSPECT_HOST_MEMORY"] = "1";
  auto rt = Init();
  ASSERT_TRUE(Run(*rt, kDotHlo, 1).ok());
  rt.reset();  // flushes the system profile
  EXPECT_TRUE(Files("").empty()) << "a .json profile was written";
  const std::vector<std::string> device = Files("device_profile_model_mm_", ".pftrace");
  ASSERT_EQ(device.size(), 1u) << logs_;
  absl::StatusOr<testing::PfTrace> t = testing::ReadPftraceFile(device[0]);
  ASSERT_TRUE(t.ok()) << t.status();
  std::map<std::string, testing::PfSlice> spans;
  for (const testing::PfSlice& s : t->slices) spans.emplace(s.name, s);
  ASSERT_TRUE(spans.count("d") && spans.count("t") && spans.count("mm"));
  const testing::PfSlice& dot = spans["d"];
  EXPECT_EQ(dot.category, "compute");
  EXPECT_EQ(dot.args["opcode"], "dot");
  EXPECT_EQ(dot.args["flops"].get<int64_t>(), 2 * 8 * 4 * 16);
  EXPECT_GT(dot.duration_ns, 0);
  EXPECT_EQ(spans["t"].category, "dma");
  EXPECT_NE(spans["t"].tid, dot.tid);
  // The execution's span holds its instructions.
  const testing::PfSlice& exec = spans["mm"];
  EXPECT_LE(exec.begin_ns, dot.begin_ns);
  EXPECT_GE(exec.begin_ns + exec.duration_ns, dot.begin_ns + dot.duration_ns);
  std::set<std::string> tracks;
  for (const auto& [uuid, track] : t->tracks) tracks.insert(track.name);
  EXPECT_TRUE(tracks.count("nc0 compute") && tracks.count("nc0 dma")) << *tracks.begin();
  EXPECT_EQ(t->other_data["mode"], "model");
  // The system profile: the API span and the host-memory counters.
  const std::vector<std::string> system = Files("system_profile_pid", ".pftrace");
  ASSERT_EQ(system.size(), 1u);
  absl::StatusOr<testing::PfTrace> s = testing::ReadPftraceFile(system[0]);
  ASSERT_TRUE(s.ok()) << s.status();
  bool api = false;
  for (const testing::PfSlice& e : s->slices) api |= e.name == "nrt_execute";
  EXPECT_TRUE(api);
  std::set<std::string> series;
  for (const testing::PfCounter& c : s->counters) series.insert(c.track);
  EXPECT_TRUE(series.count("host_memory rss_bytes")) << series.size();
}

TEST_F(ProfileTest, WarmupExecutionsAreNotProfiled) {
  env_["NEURON_RT_INSPECT_DEVICE_PROFILE"] = "model";
  env_["NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP"] = "2";
  auto rt = Init();
  ASSERT_TRUE(Run(*rt, kDotHlo, 2).ok());
  EXPECT_TRUE(Files("device_profile_model_").empty()) << "warmup runs were profiled";
  ASSERT_TRUE(Run(*rt, kDotHlo, 3).ok());  // a new NEFF (new uuid): its own warmup
  EXPECT_EQ(Files("device_profile_model_").size(), 1u);
}

TEST_F(ProfileTest, SessionModeHoldsEveryExecution) {
  env_["NEURON_RT_INSPECT_DEVICE_PROFILE"] = "session";
  env_["NEURON_RT_INSPECT_SYSTEM_PROFILE"] = "0";
  auto rt = Init();
  ASSERT_TRUE(Run(*rt, kDotHlo, 3).ok());
  const std::vector<std::string> files = Files("device_profile_session_pid");
  ASSERT_EQ(files.size(), 1u);
  const json doc = Load(files[0]);
  const auto spans = CheckEvents(doc);
  EXPECT_EQ(spans.count("mm"), 3u);
  EXPECT_EQ(spans.count("d"), 3u);
  EXPECT_EQ(doc["otherData"]["executions"], 3);
  EXPECT_TRUE(Files("system_profile_pid").empty());
}

TEST_F(ProfileTest, OnFailWritesOnlyForAFailingExecution) {
  env_["NEURON_RT_INSPECT_ON_FAIL"] = "1";
  env_["NEURON_RT_EXEC_TIMEOUT"] = "1";
  // The endless loop would fill the default 128 MiB instruction buffer.
  env_["NEURON_RT_PROFILE_BUF_INSTRUCTION_MB"] = "1";
  auto rt = Init();
  ASSERT_TRUE(Run(*rt, kDotHlo, 2).ok());
  EXPECT_TRUE(Files("device_profile_model_").empty());
  absl::Status failed = Run(*rt, testing::kEndlessHlo, 1);
  ASSERT_FALSE(failed.ok());
  const std::vector<std::string> files = Files("device_profile_model_endless_");
  ASSERT_EQ(files.size(), 1u) << logs_;
  const json doc = Load(files[0]);
  CheckEvents(doc);
  EXPECT_EQ(doc["otherData"]["mode"], "on_fail");
  EXPECT_NE(doc["otherData"]["status"].get<std::string>().find("NRT_TIMEOUT"), std::string::npos);
  EXPECT_TRUE(Files("system_profile_pid").empty());  // ON_FAIL: device profile only
}

TEST_F(ProfileTest, ZeroInstructionBufferIsReportedAsTruncation) {
  env_["NEURON_RT_INSPECT_DEVICE_PROFILE"] = "model";
  env_["NEURON_RT_PROFILE_BUF_INSTRUCTION_MB"] = "0";
  auto rt = Init();
  ASSERT_TRUE(Run(*rt, kDotHlo, 1).ok());
  const std::vector<std::string> files = Files("device_profile_model_");
  ASSERT_EQ(files.size(), 1u);
  const json doc = Load(files[0]);
  const auto spans = CheckEvents(doc);
  EXPECT_EQ(spans.count("d"), 0u);
  EXPECT_EQ(spans.count("t"), 1u);  // the DMA buffer still has room
  const json& t = doc["otherData"]["truncated"]["NEURON_RT_PROFILE_BUF_INSTRUCTION_MB"];
  ASSERT_TRUE(t.is_object()) << doc["otherData"];
  EXPECT_EQ(t["dropped"], 2);  // the dot and the negate
  EXPECT_NE(logs_.find("NEURON_RT_PROFILE_BUF_INSTRUCTION_MB"), std::string::npos) << logs_;
}

TEST_F(ProfileTest, FullInstructionBufferDropsTheRest) {
  env_["NEURON_RT_INSPECT_DEVICE_PROFILE"] = "model";
  env_["NEURON_RT_PROFILE_BUF_INSTRUCTION_MB"] = "1";
  auto rt = Init();
  // 1 MiB holds 16384 notifications; 9000 trips of compare + add are more.
  ASSERT_TRUE(Run(*rt, LoopHlo(9000), 1).ok());
  const json doc = Load(Files("device_profile_model_loop_").at(0));
  const auto spans = CheckEvents(doc);
  const uint64_t capacity = (1u << 20) / profile::kNotificationBytes;
  size_t compute = 0;
  for (const auto& [name, e] : spans) compute += e["cat"] == "compute";
  EXPECT_EQ(compute, capacity);
  EXPECT_GT(doc["otherData"]["truncated"]["NEURON_RT_PROFILE_BUF_INSTRUCTION_MB"]["dropped"]
                .get<uint64_t>(),
            0u);
}

TEST_F(ProfileTest, EventTypeFilterSelectsTracks) {
  env_["NEURON_RT_INSPECT_DEVICE_PROFILE"] = "model";
  env_["NEURON_RT_INSPECT_EVENT_FILTER_TYPE"] = "hardware,^compute";
  auto rt = Init();
  ASSERT_TRUE(Run(*rt, kDotHlo, 1).ok());
  const auto spans = CheckEvents(Load(Files("device_profile_model_").at(0)));
  EXPECT_EQ(spans.count("d"), 0u);
  EXPECT_EQ(spans.count("t"), 1u);
  EXPECT_EQ(spans.count("mm"), 1u);
  // Software events were filtered out of the system profile.
  const auto sys = CheckEvents(Load(Files("system_profile_pid").at(0)));
  EXPECT_EQ(sys.count("nrt_execute"), 0u);
}

TEST_F(ProfileTest, InvalidEventNameFailsWithTheValidList) {
  env_["NEURON_RT_INSPECT_EVENT_FILTER_TYPE"] = "hardware,bogus";
  InitOptions o;
  std::map<std::string, std::string> env = env_;
  o.env = [env](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(std::string(name));
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Init(o);
  ASSERT_FALSE(rt.ok());
  const std::string msg(rt.status().message());
  EXPECT_NE(msg.find("bogus"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cc_running"), std::string::npos) << msg;
}

TEST_F(ProfileTest, CoreFilterSkipsOtherCores) {
  env_["NEURON_RT_INSPECT_DEVICE_PROFILE"] = "model";
  env_["NEURON_SIM_INSTANCE_TYPE"] = "trn1.32xlarge";
  env_["NEURON_RT_INSPECT_EVENT_FILTER_NC"] = "1";
  auto rt = Init();
  ASSERT_TRUE(Run(*rt, kDotHlo, 1).ok());  // runs on nc0
  EXPECT_TRUE(Files("device_profile_model_").empty());
}

TEST_F(ProfileTest, SystemProfileHasApiSpansAndHostCounters) {
  env_["NEURON_RT_INSPECT_CPU_UTIL"] = "1";
  env_["NEURON_RT_INSPECT_HOST_MEMORY"] = "1";
  env_["NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC"] = "4";
  auto rt = Init();
  ASSERT_TRUE(Run(*rt, kDotHlo, 3).ok());
  const json doc = Load(Files("system_profile_pid").at(0));
  const auto spans = CheckEvents(doc);
  EXPECT_GE(spans.count("nrt_execute"), 1u);
  std::map<std::string, int> counters;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "C") ++counters[e["name"].get<std::string>()];
  EXPECT_EQ(counters["cpu_util"], 3);
  EXPECT_EQ(counters["host_memory"], 6);
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "C" && e["name"] == "host_memory") {
      EXPECT_GT(e["args"]["rss_bytes"].get<uint64_t>(), 0u);
    }
  // 3 executions x (api, run, 2 tensors) = 12 events, 4 kept.
  EXPECT_EQ(doc["otherData"]["truncated"]["NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC"]["dropped"], 8);
}

TEST_F(ProfileTest, NothingIsWrittenWhenDisabled) {
  env_.erase("NEURON_RT_INSPECT_ENABLE");
  env_["NEURON_RT_INSPECT_DEVICE_PROFILE"] = "model";
  auto rt = Init();
  ASSERT_TRUE(Run(*rt, kDotHlo, 1).ok());
  EXPECT_TRUE(Files("").empty());
}

// A trace is written whole through lib/support/atomic_file: a directory in
// its way is named as one, and nothing is left behind.
TEST(TraceFileTest, ADirectoryInTheWayIsNamed) {
  const std::string dir = testing::FastTempDir();
  profile::Trace trace;
  trace.NameProcess(1, "p", 0);
  absl::Status s = trace.WriteFile(dir);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("it is a directory"), std::string::npos) << s;
  ASSERT_TRUE(trace.WriteFile(dir + "/sub/t.json").ok());
  std::ifstream in(dir + "/sub/t.json");
  EXPECT_FALSE(json::parse(in, nullptr, false).is_discarded());
}

}  // namespace
}  // namespace neuron::runtime
