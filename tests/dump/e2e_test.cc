// The issue's "done when": a failing execution with the variables set
// yields an input dump that replays the failure, a core dump neuron-dump
// show reads, a Perfetto-loadable trace, and (with the S3 server) an
// object with the core dump's exact bytes. Also: a timeout's core dump
// names the instruction the program was in.
#include <dirent.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/dump/s3_server.h"
#include "tests/runtime/test_neff.h"
#include "tests/support/tool_runner.h"
#include "tools/neuron-dump/s3_client.h"

namespace neuron::dump {
namespace {

using nlohmann::json;
using testing::RunTool;
using testing::ToolOptions;
using testing::ToolResult;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Files under `dir` (recursively) whose name ends with `suffix`.
void Find(const std::string& dir, const std::string& suffix, std::vector<std::string>* out) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    const std::string p = dir + "/" + n;
    struct stat st{};
    stat(p.c_str(), &st);
    if (S_ISDIR(st.st_mode)) {
      Find(p, suffix, out);
    } else if (n.size() >= suffix.size() && n.substr(n.size() - suffix.size()) == suffix) {
      out->push_back(p);
    }
  }
  closedir(d);
}

std::vector<std::string> Find(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  Find(dir, suffix, &out);
  return out;
}

TEST(FailingExecution, LeavesEverythingOpsPeopleNeed) {
  std::string why;
  std::unique_ptr<testing::S3Server> server = testing::S3Server::Start(&why);
  const std::string dir = testing::MakeTempDir();
  const std::string neff = dir + "/logs.neff";
  std::ofstream(neff, std::ios::binary) << *testing::BuildTestNeff(testing::kLogHlo);
  ToolOptions o;
  o.env = {{"NEURON_SIM_ROOT", dir + "/sim"},
           {"NEURON_FAIL_ON_NAN", "1"},
           {"NEURON_RT_DBG_DUMP_INPUTS_ON_ERR", "-1"},
           {"NEURON_RT_DBG_INPUT_DUMP_DIRECTORY", dir + "/inputs"},
           {"NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY", dir + "/core/dt-%d-cid-%c"},
           {"NEURON_RT_INSPECT_ENABLE", "1"},
           {"NEURON_RT_INSPECT_DEVICE_PROFILE", "model"},
           {"NEURON_RT_INSPECT_OUTPUT_DIR", dir + "/profiles"}};
  if (server != nullptr) {
    o.env["NEURON_RT_S3_CORE_DUMP_PREFIX"] = "s3://dumps/%d-%c";
    o.env["AWS_ACCESS_KEY_ID"] = testing::S3Server::kKey;
    o.env["AWS_SECRET_ACCESS_KEY"] = testing::S3Server::kKey;
    o.env["AWS_ENDPOINT_URL_S3"] = server->endpoint();
  }
  ToolResult r = RunTool("neuron-exec", {neff, "--input", "x=4xf32=-1,0,1,2"}, o);
  ASSERT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("NEURON_FAIL_ON_NAN"), std::string::npos) << r.err;

  // 1. The input dump replays the failure with neuron-exec.
  const std::vector<std::string> manifests = Find(dir + "/inputs", "manifest.json");
  ASSERT_EQ(manifests.size(), 1u) << r.err;
  const json m = json::parse(Read(manifests[0]));
  EXPECT_EQ(m["status"]["name"], "NRT_EXEC_COMPLETED_WITH_NUM_ERR");
  EXPECT_EQ(m["neff"]["path"], neff);
  ASSERT_EQ(m["inputs"].size(), 1u);
  std::vector<std::string> replay = {neff};
  const std::string dump_dir = manifests[0].substr(0, manifests[0].rfind('/'));
  for (const json& in : m["inputs"]) {
    replay.push_back("--input");
    replay.push_back("#" + std::to_string(in["position"].get<int>()) + "=" + dump_dir + "/" +
                     in["file"].get<std::string>());
  }
  ToolOptions ro;
  ro.env["NEURON_SIM_ROOT"] = dir + "/sim";
  ro.env["NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY"] = dir + "/replay-core";
  for (const json& kv : m["replay_env"]) {
    const std::string s = kv;
    ro.env[s.substr(0, s.find('='))] = s.substr(s.find('=') + 1);
  }
  ToolResult again = RunTool("neuron-exec", replay, ro);
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("Numerical error"), std::string::npos) << again.err;
  replay.push_back("--print");
  ro.env.erase("NEURON_FAIL_ON_NAN");
  again = RunTool("neuron-exec", replay, ro);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("nan"), std::string::npos) << again.out;

  // 2. The core dump reads back with the failure, the program and the buffers.
  const std::vector<std::string> cores = Find(dir + "/core", ".zst");
  ASSERT_EQ(cores.size(), 1u);
  ToolResult show = RunTool("neuron-dump", {"show", "--json", cores[0]});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const json c = json::parse(show.out);
  EXPECT_EQ(c["info"]["error"]["code"], 1003);
  EXPECT_EQ(c["info"]["model"], "logs");
  EXPECT_TRUE(c["info"]["program"]["completed"].get<bool>());
  ASSERT_EQ(c["buffers"].size(), 2u);
  EXPECT_EQ(c["buffers"][0]["name"], "x");
  EXPECT_NE(c["memlog"].get<std::string>().find("NRT_EXEC_COMPLETED_WITH_NUM_ERR"),
            std::string::npos);
  EXPECT_EQ(RunTool("neuron-dump", {"show", dump_dir}).exit_code, 0);

  // 3. The trace is Trace Event JSON with the instructions as spans.
  const std::vector<std::string> traces = Find(dir + "/profiles", ".json");
  bool device = false;
  for (const std::string& t : traces) {
    const json doc = json::parse(Read(t), nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << t;
    ASSERT_TRUE(doc["traceEvents"].is_array());
    if (t.find("device_profile_model_logs_") == std::string::npos) continue;
    device = true;
    int spans = 0;
    for (const json& e : doc["traceEvents"])
      if (e["ph"] == "X" && e["cat"] == "compute") ++spans;
    EXPECT_GE(spans, 1) << doc.dump(1);
  }
  EXPECT_TRUE(device);

  // 4. The S3 object holds the core dump's bytes.
  if (server == nullptr) GTEST_SKIP() << "NOTICE: " << why << " (S3 part not checked)";
  const std::string local_dir = cores[0].substr(0, cores[0].rfind('/'));
  std::string stamp = local_dir.substr(local_dir.rfind('/') + 1);  // dt-<d>-cid-<c>
  stamp = stamp.substr(3);
  stamp.replace(stamp.find("-cid-"), 5, "-");
  S3Options so;
  so.endpoint_url = server->endpoint();
  S3Client client({testing::S3Server::kKey, testing::S3Server::kKey, "", "t"}, so);
  const std::string key = stamp + "/" + cores[0].substr(cores[0].rfind('/') + 1);
  absl::StatusOr<std::string> object = client.Get({testing::S3Server::kBucket, key});
  ASSERT_TRUE(object.ok()) << key << ": " << object.status() << "\n" << r.err;
  EXPECT_TRUE(*object == Read(cores[0]));
}

TEST(FailingExecution, TimeoutCoreDumpNamesTheInstruction) {
  const std::string dir = testing::MakeTempDir();
  const std::string neff = dir + "/endless.neff";
  std::ofstream(neff, std::ios::binary) << *testing::BuildTestNeff(testing::kEndlessHlo);
  ToolOptions o;
  o.env = {{"NEURON_SIM_ROOT", dir + "/sim"},
           {"NEURON_RT_EXEC_TIMEOUT", "1"},
           {"NEURON_RT_DBG_DUMP_INPUTS_ON_ERR", "5"},  // NRT_TIMEOUT only
           {"NEURON_RT_DBG_INPUT_DUMP_DIRECTORY", dir + "/inputs"},
           {"NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY", dir + "/core/%p"},
           {"NEURON_RT_DEBUG_MEMLOG_MAX_SIZE", "4096"}};
  ToolResult r = RunTool("neuron-exec", {neff, "--input", "x=s32=0"}, o);
  ASSERT_EQ(r.exit_code, 1);
  const std::vector<std::string> cores = Find(dir + "/core", ".zst");
  ASSERT_EQ(cores.size(), 1u) << r.err;
  ToolResult show = RunTool("neuron-dump", {"show", cores[0]});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("NRT_TIMEOUT (5)"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("stopped at w > "), std::string::npos) << show.out;
  const std::vector<std::string> manifests = Find(dir + "/inputs", "manifest.json");
  ASSERT_EQ(manifests.size(), 1u);
  EXPECT_NE(Read(manifests[0]).find("NEURON_RT_EXEC_TIMEOUT=1"), std::string::npos);
}

TEST(FailingExecution, BothLocationsEmptyDisablesCoreDumps) {
  const std::string dir = testing::MakeTempDir();
  const std::string neff = dir + "/logs.neff";
  std::ofstream(neff, std::ios::binary) << *testing::BuildTestNeff(testing::kLogHlo);
  ToolOptions o;
  o.env = {{"NEURON_SIM_ROOT", dir + "/sim"}, {"NEURON_FAIL_ON_NAN", "1"},
           {"NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY", ""}, {"NEURON_RT_S3_CORE_DUMP_PREFIX", ""},
           {"TMPDIR", dir}};
  ToolResult r = RunTool("neuron-exec", {neff, "--input", "x=4xf32=-1,0,1,2"}, o);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.find("core dump"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace neuron::dump
