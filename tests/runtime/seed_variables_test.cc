// Variables whose effect is seen at runtime init, each unset, set, and at a
// boundary: the per-submodule log level and location families (every
// submodule), and the deprecated names the reference folds into others
// (NEURON_RT_NUM_CORES, NEURON_RT_VIRTUAL_CORE_SIZE) or ignores with a
// warning (NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/config/config.h"
#include "lib/log/log.h"
#include "lib/runtime/runtime.h"
#include "tests/device/fast_temp_dir.h"
#include "tests/support/runtime_env.h"

namespace neuron::runtime {
namespace {

using Env = std::map<std::string, std::string>;

class SeedVariablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::FastTempDir();
  }

  // Starts a runtime on a fresh trn1.2xlarge tree (2 physical cores) with
  // `extra`; returns the cores it took, or the init error.
  absl::StatusOr<std::vector<int>> Init(const Env& extra) {
    console_.clear();
    syslog_.clear();
    Env env = {{"NEURON_SIM_ROOT", root_ + "/sim"}};
    for (const auto& [k, v] : extra) env[k] = v;
    InitOptions o;
    o.env = testing::MapEnv(env);
    absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Init(o);
    if (!rt.ok()) return rt.status();
    return (*rt)->cores();
  }

  std::string root_;
  testing::LogCapture log_;
  std::string& console_ = log_.console;
  std::string& syslog_ = log_.syslog;
};

TEST_F(SeedVariablesTest, EverySubmoduleHasItsOwnLevelAndLocation) {
  for (int i = 0; i < config::kNumLogSubmodules; ++i) {
    const auto sub = static_cast<log::Submodule>(i);
    const std::string name = log::SubmoduleName(sub);
    const auto other = static_cast<log::Submodule>((i + 1) % config::kNumLogSubmodules);
    SCOPED_TRACE(name);
    // Unset: the global level (ERROR here) hides INFO for every submodule.
    ASSERT_TRUE(Init({{"NEURON_RT_LOG_LEVEL", "ERROR"}}).ok());
    EXPECT_FALSE(log::Enabled(sub, config::LogLevel::kInfo));
    // Set: INFO for this submodule only.
    ASSERT_TRUE(Init({{"NEURON_RT_LOG_LEVEL", "ERROR"}, {"NEURON_RT_LOG_LEVEL_" + name, "INFO"}}).ok());
    EXPECT_TRUE(log::Enabled(sub, config::LogLevel::kInfo));
    EXPECT_FALSE(log::Enabled(other, config::LogLevel::kInfo));
    log::Write(sub, config::LogLevel::kInfo, "test", "line from " + name);
    EXPECT_NE(console_.find("INFO  " + name + ":test  line from " + name), std::string::npos)
        << console_;
    // Boundary: the quietest level silences even errors of this submodule.
    ASSERT_TRUE(Init({{"NEURON_RT_LOG_LEVEL_" + name, "QUIET"}}).ok());
    EXPECT_FALSE(log::Enabled(sub, config::LogLevel::kError));
    EXPECT_TRUE(log::Enabled(other, config::LogLevel::kError));
    // Location: syslog only for this submodule; the others stay on the console.
    ASSERT_TRUE(Init({{"NEURON_RT_LOG_LOCATION_" + name, "syslog"}}).ok());
    console_.clear();
    syslog_.clear();
    log::Write(sub, config::LogLevel::kError, "test", "to syslog");
    log::Write(other, config::LogLevel::kError, "test", "to console");
    EXPECT_EQ(console_.find("to syslog"), std::string::npos) << console_;
    EXPECT_NE(syslog_.find("to syslog"), std::string::npos) << syslog_;
    EXPECT_NE(console_.find("to console"), std::string::npos) << console_;
  }
}

TEST_F(SeedVariablesTest, DeprecatedCoreCountTakesTheFirstCores) {
  struct Case {
    const char* value;  // nullptr: unset
    size_t cores;
    bool warned;
  };
  for (const Case& c : {Case{nullptr, 2, false}, Case{"1", 1, true}, Case{"2", 2, true}}) {
    SCOPED_TRACE(c.value ? c.value : "unset");
    Env env;
    if (c.value) env["NEURON_RT_NUM_CORES"] = c.value;
    absl::StatusOr<std::vector<int>> cores = Init(env);
    ASSERT_TRUE(cores.ok()) << cores.status();
    EXPECT_EQ(cores->size(), c.cores);
    EXPECT_EQ(console_.find("NEURON_RT_NUM_CORES") != std::string::npos, c.warned) << console_;
  }
  // More cores than the instance has: init fails, naming the variable.
  absl::StatusOr<std::vector<int>> too_many = Init({{"NEURON_RT_NUM_CORES", "3"}});
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(std::string(too_many.status().message()).find("NEURON_RT_NUM_CORES"), std::string::npos)
      << too_many.status();
}

TEST_F(SeedVariablesTest, DeprecatedVirtualCoreSizeSetsTheLogicalCoreSize) {
  struct Case {
    const char* value;
    size_t cores;  // logical cores of the 2 physical ones
  };
  for (const Case& c : {Case{nullptr, 2}, Case{"1", 2}, Case{"2", 1}}) {
    SCOPED_TRACE(c.value ? c.value : "unset");
    Env env;
    if (c.value) env["NEURON_RT_VIRTUAL_CORE_SIZE"] = c.value;
    absl::StatusOr<std::vector<int>> cores = Init(env);
    ASSERT_TRUE(cores.ok()) << cores.status();
    EXPECT_EQ(cores->size(), c.cores);
    EXPECT_EQ(console_.find("NEURON_RT_VIRTUAL_CORE_SIZE") != std::string::npos, c.value != nullptr)
        << console_;
  }
  EXPECT_FALSE(Init({{"NEURON_RT_VIRTUAL_CORE_SIZE", "3"}}).ok()) << "not a divisor of 2";
}

TEST_F(SeedVariablesTest, DeprecatedInflightRequestsAreWarnedAboutAndIgnored) {
  for (const char* value : {"0", "4", "18446744073709551615"}) {
    SCOPED_TRACE(value);
    absl::StatusOr<std::vector<int>> cores =
        Init({{"NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", value}});
    ASSERT_TRUE(cores.ok()) << cores.status();
    EXPECT_EQ(cores->size(), 2u);
    EXPECT_NE(console_.find("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS"), std::string::npos)
        << console_;
  }
  ASSERT_TRUE(Init({}).ok());
  EXPECT_EQ(console_.find("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS"), std::string::npos);
}

}  // namespace
}  // namespace neuron::runtime
