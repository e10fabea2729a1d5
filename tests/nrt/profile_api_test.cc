// Profiling, inspect and system trace through the C API (nrt_profile.h,
// nrt_sys_trace.h, nrt_trace_*): the files written are parsed back as
// Trace Event JSON (or Perfetto traces) and the fetched events as JSON.
#include <dirent.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/log/log.h"
#include "nlohmann/json.hpp"
#include "nrt/nrt.h"
#include "nrt/nrt_experimental.h"
#include "nrt/nrt_profile.h"
#include "nrt/nrt_sys_trace.h"
#include "tests/nrt/nrt_test_env.h"
#include "tests/profile/pftrace_reader.h"
#include "tests/runtime/test_neff.h"

namespace {

using nlohmann::json;

constexpr const char* kMulHlo = R"(HloModule mul
ENTRY main {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  ROOT product = f32[2,3] multiply(x, y)
}
)";

const char* const kInspectVars[] = {
    "NEURON_RT_INSPECT_ENABLE",
    "NEURON_RT_INSPECT_OUTPUT_DIR",
    "NEURON_RT_INSPECT_DEVICE_PROFILE",
    "NEURON_RT_INSPECT_SYSTEM_PROFILE",
    "NEURON_RT_INSPECT_EVENT_FILTER_TYPE",
    "NEURON_SIM_PROFILE_FORMAT",
};

// A loaded model with device tensors bound to its inputs and outputs.
struct Loaded {
  nrt_model_t* model = nullptr;
  std::vector<nrt_tensor_t*> tensors;
  nrt_tensor_set_t* in = nullptr;
  nrt_tensor_set_t* out = nullptr;
};

class ProfileApiTest : public neuron::testing::NrtTestEnv {
 protected:
  void SetUp() override {
    root_ = neuron::testing::FastTempDir();
    StartEnv(root_ + "/sim");
    for (const char* v : kInspectVars) unsetenv(v);
  }
  void TearDown() override {
    for (Loaded& l : loaded_) {
      nrt_destroy_tensor_set(&l.in);
      nrt_destroy_tensor_set(&l.out);
      for (nrt_tensor_t*& t : l.tensors) nrt_tensor_free(&t);
      if (l.model != nullptr) nrt_unload(l.model);
    }
    EndEnv();  // nrt_close also stops the system trace
    for (const char* v : kInspectVars) unsetenv(v);
  }

  void Init() {
    ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS) << nrt_get_last_error();
  }

  // Loads `hlo` on `vnc` with device tensors for every input and output.
  Loaded* Load(const char* hlo, int vnc) {
    absl::StatusOr<std::string> neff = neuron::testing::BuildTestNeff(hlo);
    EXPECT_TRUE(neff.ok()) << neff.status();
    if (!neff.ok()) return nullptr;
    Loaded l;
    if (nrt_load(neff->data(), neff->size(), vnc, -1, &l.model) != NRT_SUCCESS) {
      ADD_FAILURE() << nrt_get_last_error();
      return nullptr;
    }
    nrt_allocate_tensor_set(&l.in);
    nrt_allocate_tensor_set(&l.out);
    nrt_tensor_info_array_t* info = nullptr;
    EXPECT_EQ(nrt_get_model_tensor_info(l.model, &info), NRT_SUCCESS);
    for (uint64_t i = 0; info != nullptr && i < info->tensor_count; ++i) {
      const nrt_tensor_info_t& ti = info->tensor_array[i];
      nrt_tensor_t* t = nullptr;
      EXPECT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, vnc, ti.size, ti.name, &t),
                NRT_SUCCESS);
      l.tensors.push_back(t);
      nrt_add_tensor_to_tensor_set(ti.usage == NRT_TENSOR_USAGE_INPUT ? l.in : l.out, ti.name, t);
    }
    nrt_free_model_tensor_info(info);
    loaded_.push_back(l);
    return &loaded_.back();
  }

  static void Execute(Loaded* l, int times = 1) {
    for (int i = 0; i < times; ++i)
      ASSERT_EQ(nrt_execute(l->model, l->in, l->out), NRT_SUCCESS) << nrt_get_last_error();
  }

  static json LoadJson(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    json j = json::parse(ss.str(), nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << path << " is not JSON";
    return j;
  }

  static std::vector<std::string> Files(const std::string& dir, const std::string& prefix = "") {
    std::vector<std::string> found;
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d)) {
        const std::string n = e->d_name;
        if (n != "." && n != ".." && n.rfind(prefix, 0) == 0) found.push_back(dir + "/" + n);
      }
      closedir(d);
    }
    return found;
  }

  // Complete spans ("X") of a trace with category `cat`.
  static std::vector<json> Spans(const json& doc, const std::string& cat) {
    std::vector<json> out;
    for (const json& e : doc["traceEvents"])
      if (e.value("ph", "") == "X" && e.value("cat", "") == cat) out.push_back(e);
    return out;
  }

  static json Fetch(const nrt_sys_trace_fetch_options_t* options) {
    char* buffer = nullptr;
    size_t size = 0;
    EXPECT_EQ(nrt_sys_trace_fetch_events(&buffer, &size, options), NRT_SUCCESS)
        << nrt_get_last_error();
    if (buffer == nullptr) return json();
    EXPECT_EQ(std::strlen(buffer), size);
    json j = json::parse(std::string(buffer, size), nullptr, false);
    nrt_sys_trace_buffer_free(buffer);
    EXPECT_FALSE(j.is_discarded());
    return j;
  }

  std::string root_;
  std::deque<Loaded> loaded_;  // stable addresses
};

TEST_F(ProfileApiTest, ProfileStartStopWritesThatModelsExecutions) {
  Init();
  Loaded* add = Load(neuron::testing::kAddHlo, 0);
  Loaded* mul = Load(kMulHlo, 1);
  ASSERT_TRUE(add && mul);
  const std::string path = root_ + "/prof/add.json";
  ASSERT_EQ(nrt_profile_start(add->model, path.c_str()), NRT_SUCCESS) << nrt_get_last_error();
  EXPECT_EQ(nrt_profile_start(mul->model, path.c_str()), NRT_INVALID);  // one at a time
  Execute(add, 2);
  Execute(mul, 1);
  ASSERT_EQ(nrt_profile_stop(path.c_str()), NRT_SUCCESS) << nrt_get_last_error();
  Execute(add, 1);  // after stop: not in the file

  const json doc = LoadJson(path);
  EXPECT_EQ(doc["otherData"]["executions"], 2);
  const std::vector<json> execs = Spans(doc, "nc_exec");
  ASSERT_EQ(execs.size(), 2u);
  for (const json& e : execs) EXPECT_EQ(e["args"]["core"], 0) << e;
  // The add instruction of each execution, named after its HLO instruction.
  int sums = 0, products = 0;
  for (const json& e : doc["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    if (e["name"] == "sum") ++sums;
    if (e["name"] == "product") ++products;
  }
  EXPECT_EQ(sums, 2);
  EXPECT_EQ(products, 0);  // the other model was not profiled
  // Whole or nothing: no temporary file left beside it.
  EXPECT_EQ(Files(root_ + "/prof").size(), 1u);
  EXPECT_EQ(nrt_profile_stop(path.c_str()), NRT_INVALID);
  EXPECT_NE(std::string(nrt_get_last_error()).find("nrt_profile_stop"), std::string::npos);
}

TEST_F(ProfileApiTest, ContinuousSaveWritesEachCoresLatestExecution) {
  Init();
  Loaded* add = Load(neuron::testing::kAddHlo, 0);
  Loaded* mul = Load(kMulHlo, 1);
  ASSERT_TRUE(add && mul);
  nrt_profile_continuous_options_t* options = nullptr;
  ASSERT_EQ(nrt_profile_continuous_options_allocate(&options), NRT_SUCCESS);
  EXPECT_EQ(nrt_profile_continuous_options_set_output_dir(options, ""), NRT_INVALID);
  const std::string dir = root_ + "/continuous";
  ASSERT_EQ(nrt_profile_continuous_options_set_output_dir(options, dir.c_str()), NRT_SUCCESS);
  ASSERT_EQ(nrt_profile_continuous_start(options), NRT_SUCCESS) << nrt_get_last_error();
  EXPECT_EQ(nrt_profile_continuous_save(0, options), NRT_INVALID);  // nothing ran yet
  Execute(add, 3);
  Execute(mul, 1);
  ASSERT_EQ(nrt_profile_continuous_save(0, options), NRT_SUCCESS) << nrt_get_last_error();
  ASSERT_EQ(nrt_profile_continuous_save(1, options), NRT_SUCCESS) << nrt_get_last_error();
  ASSERT_EQ(nrt_profile_continuous_save(0, options), NRT_SUCCESS) << nrt_get_last_error();
  ASSERT_EQ(nrt_profile_continuous_stop(), NRT_SUCCESS);
  EXPECT_EQ(nrt_profile_continuous_save(0, options), NRT_INVALID);
  nrt_profile_continuous_options_free(options);

  const std::vector<std::string> files = Files(dir);
  ASSERT_EQ(files.size(), 3u);  // unique names: the second save of nc0 is a new file
  std::map<int, int> per_core;
  for (const std::string& f : files) {
    const json doc = LoadJson(f);
    const int core = doc["otherData"]["core"];
    ++per_core[core];
    EXPECT_EQ(doc["otherData"]["mode"], "continuous");
    const std::vector<json> execs = Spans(doc, "nc_exec");
    ASSERT_EQ(execs.size(), 1u) << f;  // the latest execution only
    EXPECT_EQ(execs[0]["args"]["core"], core);
    bool has_instruction = false;
    for (const json& e : doc["traceEvents"]) {
      if (e.value("ph", "") == "X" && e["name"] == (core == 0 ? "sum" : "product")) {
        has_instruction = true;
      }
    }
    EXPECT_TRUE(has_instruction) << f;
  }
  EXPECT_EQ(per_core[0], 2);
  EXPECT_EQ(per_core[1], 1);
}

// NEURON_SIM_PROFILE_FORMAT=pftrace at init: saves are Perfetto traces.
TEST_F(ProfileApiTest, ContinuousSaveWritesPftraceInThatFormat) {
  setenv("NEURON_SIM_PROFILE_FORMAT", "pftrace", 1);
  Init();
  Loaded* add = Load(neuron::testing::kAddHlo, 0);
  ASSERT_TRUE(add);
  nrt_profile_continuous_options_t* options = nullptr;
  ASSERT_EQ(nrt_profile_continuous_options_allocate(&options), NRT_SUCCESS);
  const std::string dir = root_ + "/continuous";
  ASSERT_EQ(nrt_profile_continuous_options_set_output_dir(options, dir.c_str()), NRT_SUCCESS);
  ASSERT_EQ(nrt_profile_continuous_start(options), NRT_SUCCESS) << nrt_get_last_error();
  Execute(add, 2);
  ASSERT_EQ(nrt_profile_continuous_save(0, options), NRT_SUCCESS) << nrt_get_last_error();
  ASSERT_EQ(nrt_profile_continuous_stop(), NRT_SUCCESS);
  nrt_profile_continuous_options_free(options);
  const std::vector<std::string> files = Files(dir);
  ASSERT_EQ(files.size(), 1u);
  ASSERT_GT(files[0].size(), 8u);
  EXPECT_EQ(files[0].substr(files[0].size() - 8), ".pftrace") << files[0];
  absl::StatusOr<neuron::testing::PfTrace> t = neuron::testing::ReadPftraceFile(files[0]);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->other_data["mode"], "continuous");
  int sums = 0;
  for (const neuron::testing::PfSlice& s : t->slices) sums += s.name == "sum";
  EXPECT_EQ(sums, 1);  // the latest execution only
}

TEST_F(ProfileApiTest, ContinuousProfilingIsRefusedDuringAnInspectSession) {
  Init();
  nrt_inspect_config_t* config = nullptr;
  ASSERT_EQ(nrt_inspect_config_allocate(&config), NRT_SUCCESS);
  ASSERT_EQ(nrt_inspect_config_set_output_dir(config, (root_ + "/inspect").c_str()), NRT_SUCCESS);
  ASSERT_EQ(nrt_inspect_config_set_enable_inspect(config, true), NRT_SUCCESS);
  ASSERT_EQ(nrt_inspect_begin_with_options(config), NRT_SUCCESS) << nrt_get_last_error();
  EXPECT_EQ(nrt_inspect_begin_with_options(config), NRT_INVALID);  // already active
  EXPECT_EQ(nrt_profile_continuous_start(nullptr), NRT_INVALID);
  EXPECT_NE(std::string(nrt_get_last_error()).find("inspect"), std::string::npos);
  ASSERT_EQ(nrt_inspect_stop(), NRT_SUCCESS);
  EXPECT_EQ(nrt_inspect_stop(), NRT_INVALID);
  EXPECT_EQ(nrt_profile_continuous_start(nullptr), NRT_SUCCESS) << nrt_get_last_error();
  EXPECT_EQ(nrt_profile_continuous_stop(), NRT_SUCCESS);
  nrt_inspect_config_free(config);
}

TEST_F(ProfileApiTest, SysTraceEventsAreRecordedPerCoreAndFetchedOnce) {
  Init();
  ASSERT_EQ(nrt_sys_trace_start(nullptr), NRT_SUCCESS) << nrt_get_last_error();
  EXPECT_EQ(nrt_sys_trace_start(nullptr), NRT_INVALID);
  Loaded* add = Load(neuron::testing::kAddHlo, 0);
  Loaded* mul = Load(kMulHlo, 1);
  ASSERT_TRUE(add && mul);
  const float ones[6] = {1, 1, 1, 1, 1, 1};
  ASSERT_EQ(nrt_tensor_write(add->tensors[0], ones, 0, sizeof ones), NRT_SUCCESS);
  Execute(add, 2);
  Execute(mul, 1);
  float back[6];
  ASSERT_EQ(nrt_tensor_read(mul->tensors[2], back, 0, sizeof back), NRT_SUCCESS);

  // Core 1 alone first.
  nrt_sys_trace_fetch_options_t* fetch = nullptr;
  ASSERT_EQ(nrt_sys_trace_fetch_options_allocate(&fetch), NRT_SUCCESS);
  nrt_sys_trace_fetch_options_set_nc_idx(fetch, 1);
  json doc = Fetch(fetch);
  std::multiset<std::string> names;
  std::set<uint64_t> seqs;
  for (const json& e : doc["events"]) {
    EXPECT_EQ(e["nc_idx"], 1) << e;
    EXPECT_GE(e["end_ns"].get<int64_t>(), e["begin_ns"].get<int64_t>()) << e;
    names.insert(e["name"].get<std::string>());
    seqs.insert(e["seq"].get<uint64_t>());
  }
  EXPECT_EQ(names.count("model_load"), 1u);
  EXPECT_EQ(names.count("execute"), 1u);
  EXPECT_EQ(names.count("tensor_read"), 1u);
  EXPECT_EQ(names.count("device_alloc"), 3u);  // x, y, product

  // Then the rest: only core 0's, none of core 1's again.
  doc = Fetch(nullptr);
  std::map<std::string, int> types;
  for (const json& e : doc["events"]) {
    EXPECT_EQ(e["nc_idx"], 0) << e;
    EXPECT_TRUE(seqs.insert(e["seq"].get<uint64_t>()).second) << "fetched twice: " << e;
    // NEURON_RT_ENABLE_MEMORY_METRICS' events (tests/runtime/seed_effects_memory_test.cc).
    if (e["name"] == "memory_metric") continue;
    ++types[e["type"].get<std::string>()];
    if (e["name"] == "execute") {
      EXPECT_EQ(e["args"]["status"], "NRT_SUCCESS");
      EXPECT_EQ(e["type"], "exec");
    }
    if (e["name"] == "tensor_write") {
      EXPECT_EQ(e["args"]["bytes"], 24);
    }
  }
  EXPECT_EQ(types["load"], 1);
  EXPECT_EQ(types["exec"], 2);
  EXPECT_EQ(types["tensor"], 1);
  EXPECT_EQ(types["memory"], 3);
  EXPECT_TRUE(Fetch(nullptr)["events"].empty());

  // At most one per core per fetch.
  Execute(add, 3);
  Execute(mul, 2);
  nrt_sys_trace_fetch_options_set_defaults(fetch);
  nrt_sys_trace_fetch_options_set_max_events_per_nc(fetch, 1);
  doc = Fetch(fetch);
  ASSERT_EQ(doc["events"].size(), 2u);
  EXPECT_NE(doc["events"][0]["nc_idx"], doc["events"][1]["nc_idx"]);
  EXPECT_EQ(Fetch(nullptr)["events"].size(), 3u);  // the rest: 2 + 1
  nrt_sys_trace_fetch_options_free(fetch);

  ASSERT_EQ(nrt_sys_trace_stop(), NRT_SUCCESS);
  char* buffer = nullptr;
  size_t size = 0;
  EXPECT_EQ(nrt_sys_trace_fetch_events(&buffer, &size, nullptr), NRT_INVALID);
}

TEST_F(ProfileApiTest, SysTraceConfigFiltersAndBoundsTheRings) {
  const char** types = nullptr;
  size_t count = 0;
  ASSERT_EQ(nrt_sys_trace_get_event_types(&types, &count), NRT_SUCCESS);
  std::set<std::string> all(types, types + count);
  for (size_t i = 0; i < count; ++i) std::free(const_cast<char*>(types[i]));
  std::free(types);  // malloc'd, as documented
  for (const char* t : {"load", "unload", "exec", "tensor", "memory", "cc_running"})
    EXPECT_TRUE(all.count(t)) << t;

  nrt_sys_trace_config_t* config = nullptr;
  ASSERT_EQ(nrt_sys_trace_config_allocate(&config), NRT_SUCCESS);
  EXPECT_EQ(nrt_sys_trace_config_set_capture_enabled_for_event_type(config, "bogus", false),
            NRT_INVALID);
  EXPECT_NE(std::string(nrt_get_last_error()).find("bogus"), std::string::npos);
  ASSERT_EQ(nrt_sys_trace_config_set_capture_enabled_for_event_type(config, "memory", false),
            NRT_SUCCESS);
  ASSERT_EQ(nrt_sys_trace_config_set_capture_enabled_for_event_type(config, "load", false),
            NRT_SUCCESS);
  ASSERT_EQ(nrt_sys_trace_config_get_enabled_event_types(config, &types, &count), NRT_SUCCESS);
  EXPECT_EQ(count, all.size() - 2);
  nrt_sys_trace_free_event_types(types, count);
  nrt_sys_trace_config_set_capture_enabled_for_nc(config, 1, false);
  nrt_sys_trace_config_set_max_events_per_nc(config, 2);

  Init();
  ASSERT_EQ(nrt_sys_trace_start(config), NRT_SUCCESS) << nrt_get_last_error();
  nrt_sys_trace_config_free(config);
  Loaded* add = Load(neuron::testing::kAddHlo, 0);
  Loaded* mul = Load(kMulHlo, 1);
  ASSERT_TRUE(add && mul);
  Execute(add, 5);
  Execute(mul, 2);
  const json doc = Fetch(nullptr);
  ASSERT_EQ(doc["events"].size(), 2u);  // the ring keeps the latest 2 of nc0
  for (const json& e : doc["events"]) {
    EXPECT_EQ(e["nc_idx"], 0);
    EXPECT_EQ(e["type"], "exec");
  }
  EXPECT_EQ(doc["dropped_per_nc"]["0"], 3);
}

TEST_F(ProfileApiTest, TraceStartStopRecordsExecutionsAndAllocations) {
  Init();
  Loaded* add = Load(neuron::testing::kAddHlo, 0);
  ASSERT_TRUE(add);
  EXPECT_EQ(nrt_trace_stop((root_ + "/t.json").c_str()), NRT_INVALID);
  ASSERT_EQ(nrt_trace_start(true), NRT_SUCCESS) << nrt_get_last_error();
  nrt_tensor_t* extra = nullptr;
  ASSERT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 1, 4096, "extra", &extra),
            NRT_SUCCESS);
  Execute(add, 2);
  nrt_tensor_free(&extra);
  const std::string path = root_ + "/trace/t.json";
  ASSERT_EQ(nrt_trace_stop(path.c_str()), NRT_SUCCESS) << nrt_get_last_error();

  const json doc = LoadJson(path);
  EXPECT_EQ(Spans(doc, "nc_exec").size(), 2u);
  std::vector<std::string> memory;
  for (const json& e : doc["traceEvents"]) {
    if (e.value("cat", "") == "memory") {
      memory.push_back(e["name"]);
      EXPECT_EQ(e["args"]["core"], 1);
      EXPECT_EQ(e["args"]["bytes"].get<uint64_t>() % 4096, 0u);
    }
  }
  EXPECT_EQ(memory, (std::vector<std::string>{"alloc extra", "free extra"}));
}

TEST_F(ProfileApiTest, InspectConfigDefaultsAndValidation) {
  const char** types = nullptr;
  size_t count = 0;
  ASSERT_EQ(nrt_inspect_config_get_all_activity_types(&types, &count), NRT_SUCCESS);
  ASSERT_EQ(count, 4u);
  EXPECT_STREQ(types[0], "system_profile");
  nrt_inspect_config_free_activity_types(types, count);

  nrt_inspect_config_t* config = nullptr;
  ASSERT_EQ(nrt_inspect_config_allocate(&config), NRT_SUCCESS);
  ASSERT_EQ(nrt_inspect_config_get_enabled_activity_types(config, &types, &count), NRT_SUCCESS);
  EXPECT_EQ(count, 4u);  // every activity by default
  for (size_t i = 0; i < count; ++i) std::free(const_cast<char*>(types[i]));
  std::free(types);
  EXPECT_EQ(nrt_inspect_config_set_activity(config, "bogus", true), NRT_INVALID);
  EXPECT_NE(std::string(nrt_get_last_error()).find("bogus"), std::string::npos);
  ASSERT_EQ(nrt_inspect_config_set_activity(config, "all", false), NRT_SUCCESS);
  ASSERT_EQ(nrt_inspect_config_set_activity(config, "cpu_util", true), NRT_SUCCESS);
  ASSERT_EQ(nrt_inspect_config_get_enabled_activity_types(config, &types, &count), NRT_SUCCESS);
  ASSERT_EQ(count, 1u);
  EXPECT_STREQ(types[0], "cpu_util");
  nrt_inspect_config_free_activity_types(types, count);
  EXPECT_EQ(nrt_inspect_config_set_output_dir(config, ""), NRT_INVALID);
  EXPECT_EQ(nrt_inspect_config_set_output_dir(config, nullptr), NRT_INVALID);
  EXPECT_EQ(nrt_inspect_config_set_capture_enabled_for_event_type_string(config, "nope", false),
            NRT_INVALID);
  EXPECT_EQ(nrt_inspect_config_set_capture_enabled_for_event_type_string(config, "tensor", false),
            NRT_SUCCESS);
  EXPECT_EQ(nrt_inspect_config_set_session_id(config, 7), NRT_SUCCESS);
  EXPECT_EQ(nrt_inspect_config_set_defaults(config), NRT_SUCCESS);
  ASSERT_EQ(nrt_inspect_config_get_enabled_activity_types(config, &types, &count), NRT_SUCCESS);
  EXPECT_EQ(count, 4u);
  nrt_inspect_config_free_activity_types(types, count);
  nrt_inspect_config_free(config);
  nrt_inspect_config_free_activity_types(nullptr, 0);
  const NRT_STATUS no_runtime = nrt_inspect_begin();  // needs nrt_init
  EXPECT_TRUE(no_runtime == NRT_UNINITIALIZED || no_runtime == NRT_CLOSED) << no_runtime;
}

TEST_F(ProfileApiTest, InspectBeginReadsTheVariablesAtThatTime) {
  Init();  // the variables are not set at init: nothing is captured by it
  const std::string dir = root_ + "/from_env";
  setenv("NEURON_RT_INSPECT_OUTPUT_DIR", dir.c_str(), 1);
  setenv("NEURON_RT_INSPECT_DEVICE_PROFILE", "model", 1);
  ASSERT_EQ(nrt_inspect_begin(), NRT_SUCCESS) << nrt_get_last_error();
  Loaded* add = Load(neuron::testing::kAddHlo, 0);
  ASSERT_TRUE(add);
  const float ones[6] = {1, 1, 1, 1, 1, 1};
  ASSERT_EQ(nrt_tensor_write(add->tensors[1], ones, 0, sizeof ones), NRT_SUCCESS);
  Execute(add, 2);
  ASSERT_EQ(nrt_inspect_stop(), NRT_SUCCESS) << nrt_get_last_error();

  const std::vector<std::string> system = Files(dir, "system_profile_pid");
  ASSERT_EQ(system.size(), 1u);
  const json sys = LoadJson(system[0]);
  EXPECT_EQ(Spans(sys, "api").size(), 2u);   // nrt_execute of each execution
  EXPECT_EQ(Spans(sys, "load").size(), 1u);  // the load, from the system trace
  const std::vector<json> writes = Spans(sys, "tensor");
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0]["name"], "tensor_write");
  EXPECT_EQ(writes[0]["args"]["core"], 0);
  // Model mode: one device profile for the NEFF, with its instruction.
  const std::vector<std::string> device = Files(dir, "device_profile_model_");
  ASSERT_EQ(device.size(), 1u);
  const json dev = LoadJson(device[0]);
  EXPECT_EQ(Spans(dev, "nc_exec").size(), 1u);
  EXPECT_EQ(dev["otherData"]["core"], 0);

  // A filter that names no known event fails as it fails nrt_init.
  setenv("NEURON_RT_INSPECT_EVENT_FILTER_TYPE", "bogus", 1);
  EXPECT_EQ(nrt_inspect_begin(), NRT_INVALID);
  EXPECT_NE(std::string(nrt_get_last_error()).find("nrt_inspect_begin"), std::string::npos);
}

TEST_F(ProfileApiTest, InspectWithOptionsIgnoresTheVariablesAndNrtCloseFlushes) {
  Init();
  const std::string env_dir = root_ + "/env", dir = root_ + "/options";
  setenv("NEURON_RT_INSPECT_OUTPUT_DIR", env_dir.c_str(), 1);
  setenv("NEURON_RT_INSPECT_DEVICE_PROFILE", "session", 1);
  nrt_inspect_config_t* config = nullptr;
  ASSERT_EQ(nrt_inspect_config_allocate(&config), NRT_SUCCESS);
  ASSERT_EQ(nrt_inspect_config_set_output_dir(config, dir.c_str()), NRT_SUCCESS);
  ASSERT_EQ(nrt_inspect_config_set_enable_inspect(config, true), NRT_SUCCESS);
  ASSERT_EQ(nrt_inspect_config_set_activity(config, "device_profile", false), NRT_SUCCESS);
  ASSERT_EQ(nrt_inspect_config_set_capture_enabled_for_nc(config, 1, false), NRT_SUCCESS);
  ASSERT_EQ(nrt_inspect_begin_with_options(config), NRT_SUCCESS) << nrt_get_last_error();
  nrt_inspect_config_free(config);
  Loaded* add = Load(neuron::testing::kAddHlo, 0);
  Loaded* mul = Load(kMulHlo, 1);
  ASSERT_TRUE(add && mul);
  Execute(add, 1);
  Execute(mul, 3);
  nrt_close();  // ends the session: what it captured is written
  EXPECT_EQ(nrt_inspect_stop(), NRT_INVALID);

  EXPECT_TRUE(Files(env_dir).empty());
  EXPECT_TRUE(Files(dir, "device_profile").empty());  // the activity was off
  const std::vector<std::string> system = Files(dir, "system_profile_pid");
  ASSERT_EQ(system.size(), 1u);
  const json sys = LoadJson(system[0]);
  const std::vector<json> api = Spans(sys, "api");
  ASSERT_EQ(api.size(), 1u);  // nc1 was not captured
  EXPECT_EQ(api[0]["args"]["core"], 0);
}

}  // namespace
