// neuron-ls end to end: every run gets NEURON_SIM_ROOT pointing at a temp
// dir, so nothing depends on the machine's own devices or shell.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lib/config/config.h"
#include "lib/device/core_lock.h"
#include "lib/device/device_tree.h"
#include "lib/device/tree_files.h"
#include "tests/device/core_holder.h"
#include "tests/device/fast_temp_dir.h"
#include "tests/support/tool_runner.h"

namespace neuron {
namespace {

using testing::RunTool;
using testing::ToolOptions;
using testing::ToolResult;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// One root per instance type for the whole binary: building a 16-device tree
// once is enough.
const std::string& RootFor(const std::string& instance) {
  static std::map<std::string, std::string>* roots = new std::map<std::string, std::string>();
  auto it = roots->find(instance);
  if (it == roots->end()) it = roots->emplace(instance, testing::FastTempDir()).first;
  return it->second;
}

ToolResult Ls(const std::vector<std::string>& args, const std::string& instance = "",
              std::map<std::string, std::string> env = {}) {
  ToolOptions o;
  o.env = std::move(env);
  if (!o.env.count("NEURON_SIM_ROOT")) {
    o.env["NEURON_SIM_ROOT"] = RootFor(instance.empty() ? "default" : instance);
  }
  if (!instance.empty()) o.env["NEURON_SIM_INSTANCE_TYPE"] = instance;
  // A relative NEURON_SIM_ROOT (the garbage test sets one) lands in a temp
  // dir, never in the source tree.
  static const std::string* cwd = new std::string(testing::FastTempDir());
  o.cwd = *cwd;
  return RunTool("neuron-ls", args, o);
}

// Fails unless the run was a clean failure: status 1, one line on stderr.
void ExpectOneLineError(const ToolResult& r, const std::string& must_mention) {
  EXPECT_FALSE(r.signaled) << "crashed: " << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::vector<std::string> lines = Lines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_EQ(lines[0].rfind("neuron-ls: error: ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find(must_mention), std::string::npos) << lines[0];
}

TEST(NeuronLsTest, DefaultInstanceTable) {
  ToolResult r = Ls({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u + 6u);  // header lines, table of one device
  EXPECT_EQ(lines[0], "instance-type: trn1.2xlarge");
  EXPECT_EQ(lines[1].rfind("instance-id: i-", 0), 0u);
  EXPECT_EQ(lines[2], "logical-neuroncore-config: 1");
  EXPECT_EQ(lines[3].front(), '+');
  EXPECT_NE(lines[4].find("CONNECTED"), std::string::npos);
  EXPECT_EQ(lines[7].rfind("| 0      | 2      | 0-1      | 32 GB  |", 0), 0u) << lines[7];
  EXPECT_NE(lines[7].find("0000:00:1e.0"), std::string::npos);
  // Same id on the next run: the tree persists.
  EXPECT_EQ(Lines(Ls({}).out)[1], lines[1]);
}

TEST(NeuronLsTest, Trn2_48xlargeAtLnc2Has64Cores) {
  ToolResult r = Ls({}, "trn2.48xlarge");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u + 4u + 16u + 1u) << r.out;
  EXPECT_EQ(lines[0], "instance-type: trn2.48xlarge");
  EXPECT_EQ(lines[2], "logical-neuroncore-config: 2");
  EXPECT_EQ(lines[7].rfind("| 0      | 4      | 0-3      | 96 GB  | 12, 3, 4, 1   | 0000:cc:00.0 |", 0),
            0u)
      << lines[7];
  EXPECT_EQ(lines[22].rfind("| 15     | 4      | 60-63    | 96 GB  | 11, 14, 3, 12 |", 0), 0u)
      << lines[22];
  EXPECT_EQ(Count(r.out, "| 96 GB  |"), 16u);
}

TEST(NeuronLsTest, LncOneShowsEveryPhysicalCore) {
  ToolResult r = Ls({"-j"}, "trn2.48xlarge", {{"NEURON_LOGICAL_NC_CONFIG", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j[15]["nc_count"], 8);
  EXPECT_EQ(j[15]["logical_neuroncore_config"], 1);
  EXPECT_EQ(j[15]["neuroncore_ids"].back(), 127);
}

TEST(NeuronLsTest, JsonOutput) {
  ToolResult r = Ls({"-j"}, "trn2.48xlarge");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);  // throws (fails) when not JSON
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 16u);
  std::set<int> ids;
  for (const nlohmann::json& d : j) {
    for (const char* key : {"neuron_device", "bdf", "cpu_affinity", "numa_node", "connected_to",
                            "nc_count", "logical_neuroncore_config", "memory_size",
                            "neuroncore_ids", "neuron_processes"}) {
      EXPECT_TRUE(d.contains(key)) << key;
    }
    EXPECT_TRUE(d["numa_node"].is_string());
    EXPECT_EQ(d["memory_size"], 103079215104ull);
    EXPECT_EQ(d["connected_to"].size(), 4u);
    for (int id : d["neuroncore_ids"]) ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 64u);
  EXPECT_EQ(*ids.rbegin(), 63);
  // The three spellings agree.
  EXPECT_EQ(Ls({"--output-format", "json"}, "trn2.48xlarge").out, r.out);
  EXPECT_EQ(Ls({"--json-output"}, "trn2.48xlarge").out, r.out);
  EXPECT_EQ(Ls({"--output-format=table"}, "trn2.48xlarge").out, Ls({}, "trn2.48xlarge").out);
}

TEST(NeuronLsTest, TopologyDrawings) {
  ToolResult one = Ls({"-t"});
  ASSERT_EQ(one.exit_code, 0);
  EXPECT_NE(one.out.find("Neuron Device Topology"), std::string::npos);
  EXPECT_NE(one.out.find("single device"), std::string::npos) << one.out;

  ToolResult torus = Ls({"--topology"}, "trn2.48xlarge");
  ASSERT_EQ(torus.exit_code, 0);
  EXPECT_NE(torus.out.find("*––►[ 0 ]◄––►[ 1 ]◄––►[ 2 ]◄––►[ 3 ]◄––*"), std::string::npos)
      << torus.out;
  EXPECT_NE(torus.out.find("*––►[12 ]◄––►[13 ]◄––►[14 ]◄––►[15 ]◄––*"), std::string::npos);
  // The table comes first.
  EXPECT_LT(torus.out.find("| 15 "), torus.out.find("Neuron Device Topology"));

  ToolResult ring = Ls({"-t"}, "inf2.48xlarge");
  ASSERT_EQ(ring.exit_code, 0);
  EXPECT_NE(ring.out.find("[ 0 ]◄––►[ 1 ]"), std::string::npos) << ring.out;
  EXPECT_NE(ring.out.find("[11 ]◄––*"), std::string::npos) << ring.out;
  EXPECT_NE(ring.out.find("| 0      | 2      | 0-1      | 32 GB  | 11, 1 "), std::string::npos)
      << ring.out;
}

pid_t HoldCores(const std::string& instance, std::vector<int> cores, const std::string& command,
                int lnc) {
  return testing::HoldCores(RootFor(instance), instance, std::move(cores), command, lnc);
}
using testing::Reap;

TEST(NeuronLsTest, ShowsTheProcessHoldingACore) {
  const std::string cmd =
      "python train.py --model llama3 --tensor-parallel-size 2 --steps 100000";
  pid_t pid = HoldCores("inf2.24xlarge", {3}, cmd, 1);  // device 1
  ToolResult r = Ls({"-a"}, "inf2.24xlarge");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("PID"), std::string::npos);
  EXPECT_NE(r.out.find("RUNTIME"), std::string::npos);
  std::string row;
  for (const std::string& l : Lines(r.out)) {
    if (l.find("| " + std::to_string(pid) + " ") != std::string::npos) row = l;
  }
  ASSERT_FALSE(row.empty()) << r.out;
  EXPECT_EQ(row.rfind("| 1 ", 0), 0u) << row;                  // on device 1
  EXPECT_NE(row.find(cmd.substr(0, 37) + "..."), std::string::npos) << row;  // ~40 chars
  EXPECT_NE(row.find("| 2.0.0 "), std::string::npos) << row;

  ToolResult wide = Ls({"-w"}, "inf2.24xlarge");
  EXPECT_NE(wide.out.find(cmd), std::string::npos) << "whole command in wide mode";

  nlohmann::json j = nlohmann::json::parse(Ls({"-j"}, "inf2.24xlarge").out);
  ASSERT_EQ(j[1]["neuron_processes"].size(), 1u);
  EXPECT_EQ(j[1]["neuron_processes"][0]["pid"], pid);
  EXPECT_EQ(j[1]["neuron_processes"][0]["command"], cmd);
  EXPECT_EQ(j[1]["neuron_processes"][0]["neuron_runtime_version"], "2.0.0");
  EXPECT_TRUE(j[0]["neuron_processes"].empty());

  Reap(pid);
  ToolResult after = Ls({"-j"}, "inf2.24xlarge");
  EXPECT_TRUE(nlohmann::json::parse(after.out)[1]["neuron_processes"].empty())
      << "a dead holder is not listed";
}

TEST(NeuronLsTest, BadEnvironmentIsOneLineAndExit1) {
  ExpectOneLineError(Ls({}, "", {{"NEURON_RT_VISIBLE_CORES", "0-99"}}), "NEURON_RT_VISIBLE_CORES");
  ToolResult bogus = Ls({}, "bogus");
  ExpectOneLineError(bogus, "NEURON_SIM_INSTANCE_TYPE");
  for (const char* known : {"trn1.2xlarge", "trn2.48xlarge", "inf2.48xlarge"}) {
    EXPECT_NE(bogus.err.find(known), std::string::npos) << bogus.err;
  }
  ExpectOneLineError(Ls({}, "", {{"NEURON_LOGICAL_NC_CONFIG", "3"}}), "NEURON_LOGICAL_NC_CONFIG");
  ExpectOneLineError(Ls({"-j"}, "trn2.48xlarge", {{"NEURON_LOGICAL_NC_CONFIG", "16"}}),
                     "NEURON_LOGICAL_NC_CONFIG");
  EXPECT_EQ(Ls({}, "", {{"NEURON_RT_VISIBLE_CORES", "0-99"}}).out, "");
}

// Every variable of the reference set to garbage: neuron-ls either runs or
// fails with one line, and never crashes.
TEST(NeuronLsTest, GarbageInAnyVariableNeverCrashes) {
  const char* garbage[] = {"\x01zz-\xff", "99999999999999999999999999", "-1,"};
  int i = 0;
  for (const config::VariableSpec& v : config::AllVariables()) {
    const char* value = garbage[i++ % 3];
    ToolResult r = Ls({}, "", {{v.name, value}});
    SCOPED_TRACE(v.name);
    ASSERT_FALSE(r.signaled) << r.err;
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.exit_code << " " << r.err;
    if (r.exit_code == 1) {
      ASSERT_EQ(Lines(r.err).size(), 1u) << r.err;
    }
  }
}

TEST(NeuronLsTest, EnvJsonListsEveryVariable) {
  ToolResult r = Ls({"--env", "--json"}, "", {{"NEURON_RT_EXEC_TIMEOUT", "60"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["variables"].is_array());
  ASSERT_TRUE(j["diagnostics"].is_array());
  // Every runtime variable, and the fabric provider libfabric would give.
  EXPECT_EQ(j["variables"].size(), config::AllVariables().size() + 1);
  bool timeout_seen = false, provider_seen = false;
  for (const nlohmann::json& v : j["variables"]) {
    ASSERT_TRUE(v["name"].is_string());
    ASSERT_TRUE(v["value"].is_string()) << v.dump();
    const std::string source = v["source"];
    EXPECT_TRUE(source == "default" || source == "env" || source == "derived") << source;
    if (v["name"] == "NEURON_RT_EXEC_TIMEOUT") {
      timeout_seen = true;
      EXPECT_EQ(v["value"], "60");
      EXPECT_EQ(source, "env");
    }
    if (v["name"] == "FI_PROVIDER") {
      provider_seen = true;
      EXPECT_EQ(source, "derived");
      EXPECT_FALSE(v["value"].get<std::string>().empty());
    }
  }
  EXPECT_TRUE(timeout_seen);
  EXPECT_TRUE(provider_seen);
  // -j and --output-format json select JSON for --env as well.
  EXPECT_EQ(Ls({"--env", "-j"}, "", {{"NEURON_RT_EXEC_TIMEOUT", "60"}}).out, r.out);
  EXPECT_EQ(Ls({"--env", "--output-format", "json"}, "", {{"NEURON_RT_EXEC_TIMEOUT", "60"}}).out,
            r.out);
}

// FI_PROVIDER is libfabric's own choice: one it has not got leaves the
// collectives on their TCP mesh, and --env says so.
TEST(NeuronLsTest, EnvShowsTheFabricProvider) {
  ToolResult named = Ls({"--env"}, "", {{"FI_PROVIDER", "no-such-provider"}});
  ASSERT_EQ(named.exit_code, 0) << named.err;
  bool seen = false;
  for (const std::string& line : Lines(named.out)) {
    if (line.rfind("FI_PROVIDER", 0) != 0) continue;
    seen = true;
    EXPECT_NE(line.find("none (collectives across hosts use TCP)"), std::string::npos) << line;
    EXPECT_NE(line.find("env"), std::string::npos) << line;
  }
  EXPECT_TRUE(seen) << named.out;
}

TEST(NeuronLsTest, EnvTableAndFailingConfiguration) {
  ToolResult ok = Ls({"--env"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("NEURON_RT_VISIBLE_CORES"), std::string::npos);
  EXPECT_NE(ok.out.find("default"), std::string::npos);

  ToolResult bad = Ls({"--env"}, "", {{"NEURON_RT_VISIBLE_CORES", "0-99"}});
  ExpectOneLineError(bad, "NEURON_RT_VISIBLE_CORES");
  EXPECT_NE(bad.out.find("NEURON_RT_EXEC_TIMEOUT"), std::string::npos)
      << "the report is still printed";
  ToolResult bad_json = Ls({"--env", "--json"}, "", {{"NEURON_LOGICAL_NC_CONFIG", "3"}});
  ExpectOneLineError(bad_json, "NEURON_LOGICAL_NC_CONFIG");
  nlohmann::json j = nlohmann::json::parse(bad_json.out);
  EXPECT_EQ(j["variables"].size(), config::AllVariables().size() + 1);
  ExpectOneLineError(Ls({"--env"}, "bogus"), "bogus");
}

TEST(NeuronLsTest, UsageErrorsExit2) {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"--bogus"}, {"-x"}, {"--output-format", "xml"},
        {"--output-format"}, {"extra"}, {"-w", "--", "extra"}, {"-t", "-j"},
        {"--topology", "--output-format", "json"}}) {
    ToolResult r = Ls(args);
    EXPECT_FALSE(r.signaled);
    EXPECT_EQ(r.exit_code, 2) << args[0];
    // One error line naming what is wrong, then the hint.
    ASSERT_EQ(Lines(r.err).size(), 2u) << r.err;
    EXPECT_EQ(Lines(r.err)[0].rfind("neuron-ls: error: ", 0), 0u) << r.err;
    EXPECT_EQ(Lines(r.err)[1], "Try 'neuron-ls --help'.") << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST(NeuronLsTest, HelpAndVersion) {
  ToolResult help = Ls({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* flag : {"--wide", "--show-all-procs", "--topology", "--json-output",
                           "--output-format", "--env", "--version"}) {
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
  }
  EXPECT_EQ(Ls({"-h"}).out, help.out);
  ToolResult version = Ls({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out.rfind("neuron-ls", 0), 0u) << version.out;
}

TEST(NeuronLsTest, UnusableRootOrDamagedTreeIsOneLine) {
  const std::string dir = testing::FastTempDir();
  ASSERT_TRUE(device::WriteFilePlain(dir + "/file", "x").ok());
  ExpectOneLineError(Ls({}, "", {{"NEURON_SIM_ROOT", dir + "/file/root"}}), "NEURON_SIM_ROOT");

  const std::string root = dir + "/damaged";
  ASSERT_EQ(Ls({}, "", {{"NEURON_SIM_ROOT", root}}).exit_code, 0);
  ASSERT_TRUE(device::WriteFilePlain(root + "/neuron0/core_count", "lots").ok());
  ExpectOneLineError(Ls({}, "", {{"NEURON_SIM_ROOT", root}}), "core_count");
}

TEST(NeuronLsTest, SwitchingInstanceRebuildsTheTree) {
  const std::string root = testing::FastTempDir();
  ToolResult big = Ls({"-j"}, "inf2.48xlarge", {{"NEURON_SIM_ROOT", root}});
  ASSERT_EQ(big.exit_code, 0) << big.err;
  EXPECT_EQ(nlohmann::json::parse(big.out).size(), 12u);
  ToolResult small = Ls({"-j"}, "inf2.xlarge", {{"NEURON_SIM_ROOT", root}});
  ASSERT_EQ(small.exit_code, 0) << small.err;
  nlohmann::json j = nlohmann::json::parse(small.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["numa_node"], "-1");  // small instances report no NUMA node
}

}  // namespace
}  // namespace neuron
