// neuron-exec --profile-format and NEURON_SIM_PROFILE_FORMAT: with
// NEURON_RT_INSPECT_ENABLE the profiles are Perfetto traces (.pftrace)
// that parse; a bad format is one clear error.
#include <dirent.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/device/fast_temp_dir.h"
#include "tests/profile/pftrace_reader.h"
#include "tests/runtime/test_neff.h"
#include "tests/support/tool_runner.h"

namespace neuron::testing {
namespace {

class ProfileFormatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FastTempDir();
    options_.env["NEURON_SIM_ROOT"] = dir_ + "/sim";
    options_.env["NEURON_RT_LOG_LEVEL"] = "WARN";
    options_.env["NEURON_RT_INSPECT_ENABLE"] = "1";
    options_.env["NEURON_RT_INSPECT_DEVICE_PROFILE"] = "model";
    options_.env["NEURON_RT_INSPECT_OUTPUT_DIR"] = dir_ + "/profiles";
    absl::StatusOr<std::string> neff = BuildTestNeff(kAddHlo);
    ASSERT_TRUE(neff.ok()) << neff.status();
    neff_ = WriteTestFile(dir_, "add.neff", *neff);
  }

  // The profile files written, by name.
  std::vector<std::string> Profiles() {
    std::vector<std::string> names;
    if (DIR* d = opendir((dir_ + "/profiles").c_str())) {
      while (dirent* e = readdir(d))
        if (e->d_name[0] != '.') names.push_back(e->d_name);
      closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  // Each file is a .pftrace that parses; the device profile holds the add.
  void ExpectPftraceProfiles() {
    const std::vector<std::string> names = Profiles();
    ASSERT_EQ(names.size(), 2u) << (names.empty() ? "none" : names[0]);
    bool device = false, system = false;
    for (const std::string& n : names) {
      SCOPED_TRACE(n);
      ASSERT_GT(n.size(), 8u);
      EXPECT_EQ(n.substr(n.size() - 8), ".pftrace");
      absl::StatusOr<PfTrace> t = ReadPftraceFile(dir_ + "/profiles/" + n);
      ASSERT_TRUE(t.ok()) << t.status();
      EXPECT_FALSE(t->slices.empty());
      if (n.rfind("device_profile_model_add_", 0) == 0) {
        device = true;
        EXPECT_TRUE(std::any_of(t->slices.begin(), t->slices.end(), [](const PfSlice& s) {
          return s.name == "sum" && s.args.value("opcode", "") == "add";
        }));
      }
      if (n.rfind("system_profile_pid", 0) == 0) system = true;
    }
    EXPECT_TRUE(device && system);
  }

  std::string dir_, neff_;
  ToolOptions options_;
};

TEST_F(ProfileFormatTest, OptionWritesParsablePftraceProfiles) {
  ToolResult r = RunTool("neuron-exec", {neff_, "--random-inputs", "--profile-format", "pftrace"},
                         options_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectPftraceProfiles();
}

TEST_F(ProfileFormatTest, VariableWritesParsablePftraceProfiles) {
  options_.env["NEURON_SIM_PROFILE_FORMAT"] = "pftrace";
  ToolResult r = RunTool("neuron-exec", {neff_, "--random-inputs"}, options_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectPftraceProfiles();
}

TEST_F(ProfileFormatTest, OptionOverridesTheVariable) {
  options_.env["NEURON_SIM_PROFILE_FORMAT"] = "pftrace";
  ToolResult r =
      RunTool("neuron-exec", {neff_, "--random-inputs", "--profile-format", "json"}, options_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& n : Profiles()) EXPECT_EQ(n.substr(n.size() - 5), ".json") << n;
  EXPECT_EQ(Profiles().size(), 2u);
}

TEST_F(ProfileFormatTest, BadFormatIsOneClearError) {
  ToolResult usage =
      RunTool("neuron-exec", {neff_, "--random-inputs", "--profile-format", "xml"}, options_);
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.err.find("--profile-format 'xml'"), std::string::npos) << usage.err;
  EXPECT_NE(usage.err.find("pftrace"), std::string::npos) << usage.err;
  options_.env["NEURON_SIM_PROFILE_FORMAT"] = "xml";
  ToolResult env = RunTool("neuron-exec", {neff_, "--random-inputs"}, options_);
  EXPECT_EQ(env.exit_code, 1);
  EXPECT_EQ(std::count(env.err.begin(), env.err.end(), '\n'), 1) << env.err;
  EXPECT_NE(env.err.find("NEURON_SIM_PROFILE_FORMAT='xml'"), std::string::npos) << env.err;
  EXPECT_NE(env.err.find("json, pftrace"), std::string::npos) << env.err;
  EXPECT_TRUE(Profiles().empty());
}

}  // namespace
}  // namespace neuron::testing
