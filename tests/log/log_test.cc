// The logger: level filtering and sink selection from the resolved
// configuration (the reference's pairing rules), line format, cheap
// disabled calls, whole lines under concurrency.
#include <fcntl.h>
#include <sys/syslog.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "lib/config/config.h"
#include "lib/log/log.h"
#include "tests/log/parsed_log_line.h"
#include "tests/support/tool_runner.h"

namespace neuron::log {
namespace {

config::RuntimeConfig Resolved(std::map<std::string, std::string> vars) {
  config::PlatformFacts platform;  // trn1, 1 device x 2 cores
  config::Resolution r = config::Resolve(
      [vars](std::string_view name) -> std::optional<std::string> {
        auto it = vars.find(std::string(name));
        if (it == vars.end()) return std::nullopt;
        return it->second;
      },
      platform);
  EXPECT_TRUE(r.ok()) << r.init_error;
  return r.config;
}

// Captures both sinks; restores the defaults afterwards.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SetConsoleSink([this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mutex_);
      console_.emplace_back(line);
    });
    SetSyslogSink([this](int priority, std::string_view message) {
      std::lock_guard<std::mutex> lock(mutex_);
      syslog_.emplace_back(priority, std::string(message));
    });
  }
  void TearDown() override {
    ConfigureDefaults();
    SetConsoleSink(nullptr);
    SetSyslogSink(nullptr);
  }
  std::vector<std::string> console_;
  std::vector<std::pair<int, std::string>> syslog_;
  std::mutex mutex_;
};

TEST_F(LogTest, DefaultsAreWarnToBothSinksAndHalAtError) {
  Configure(Resolved({}));
  NEURON_LOG(NRT, kInfo, "not shown %d", 1);
  NEURON_LOG(NRT, kWarn, "shown %d", 2);
  NEURON_LOG(HAL, kWarn, "hal warning hidden");
  NEURON_LOG(HAL, kError, "hal error shown");
  ASSERT_EQ(console_.size(), 2u);
  EXPECT_NE(console_[0].find("  WARN  NRT:"), std::string::npos) << console_[0];
  EXPECT_NE(console_[0].find("shown 2"), std::string::npos);
  EXPECT_NE(console_[1].find("  ERROR  HAL:"), std::string::npos) << console_[1];
  ASSERT_EQ(syslog_.size(), 2u);
  EXPECT_EQ(syslog_[0].first, LOG_WARNING);
  EXPECT_EQ(syslog_[1].first, LOG_ERR);
}

TEST_F(LogTest, LevelAloneGoesToConsoleOnly) {
  Configure(Resolved({{"NEURON_RT_LOG_LEVEL", "INFO"}}));
  NEURON_LOG(TDRV, kInfo, "info");
  NEURON_LOG(TDRV, kDebug, "debug hidden");
  EXPECT_EQ(console_.size(), 1u);
  EXPECT_TRUE(syslog_.empty());
}

TEST_F(LogTest, LocationAloneKeepsOnlyErrors) {
  Configure(Resolved({{"NEURON_RT_LOG_LOCATION", "syslog"}}));
  NEURON_LOG(NRT, kWarn, "warning hidden");
  NEURON_LOG(NRT, kError, "error to syslog");
  EXPECT_TRUE(console_.empty());
  ASSERT_EQ(syslog_.size(), 1u);
  EXPECT_EQ(syslog_[0].first, LOG_ERR);
  EXPECT_EQ(syslog_[0].second.find("ERROR  NRT:"), 0u) << syslog_[0].second;
  EXPECT_NE(syslog_[0].second.find("error to syslog"), std::string::npos);
}

TEST_F(LogTest, PerSubmoduleLevelAndLocation) {
  Configure(Resolved({{"NEURON_RT_LOG_LEVEL_TDRV", "DEBUG"},
                      {"NEURON_RT_LOG_LOCATION_NMGR", "console"}}));
  EXPECT_TRUE(Enabled(Submodule::TDRV, config::LogLevel::kDebug));
  EXPECT_FALSE(Enabled(Submodule::TDRV, config::LogLevel::kTrace));
  EXPECT_FALSE(Enabled(Submodule::NRT, config::LogLevel::kDebug));
  NEURON_LOG(NMGR, kWarn, "nmgr");
  EXPECT_EQ(console_.size(), 1u);
  EXPECT_TRUE(syslog_.empty()) << "NMGR selected the console, which disables syslog";
}

TEST_F(LogTest, QuietSilencesEverything) {
  Configure(Resolved({{"NEURON_RT_LOG_LEVEL", "QUIET"}}));
  NEURON_LOG(NRT, kError, "nothing");
  EXPECT_FALSE(Enabled(Submodule::NRT, config::LogLevel::kError));
  EXPECT_TRUE(console_.empty());
}

TEST_F(LogTest, LineCarriesTimePidTidLevelSubmoduleAndFunction) {
  Configure(Resolved({}));
  NEURON_LOG(NEFF, kError, "bad header in %s", "model.neff");
  ASSERT_EQ(console_.size(), 1u);
  auto parsed = testing::ParseLogLine(console_[0]);
  ASSERT_TRUE(parsed.has_value()) << console_[0];
  EXPECT_EQ(parsed->pid, static_cast<long>(getpid()));
  EXPECT_GT(parsed->tid, 0);
  EXPECT_EQ(parsed->level, "ERROR");
  EXPECT_EQ(parsed->submodule, "NEFF");
  EXPECT_EQ(parsed->function, "TestBody");
  EXPECT_EQ(parsed->message, "bad header in model.neff");
  EXPECT_EQ(console_[0].back(), '\n');
}

TEST_F(LogTest, DisabledCallsDoNotEvaluateArguments) {
  Configure(Resolved({}));
  int evaluated = 0;
  auto count = [&evaluated] { return ++evaluated; };
  NEURON_LOG(NRT, kDebug, "%d", count());
  EXPECT_EQ(evaluated, 0);
  NEURON_LOG(NRT, kError, "%d", count());
  EXPECT_EQ(evaluated, 1);
}

TEST_F(LogTest, DiagnosticsBecomeNrtLines) {
  Configure(Resolved({}));
  ReportDiagnostics({{config::Severity::kWarning, "NEURON_RT_X", "a warning"},
                     {config::Severity::kError, "NEURON_RT_Y", "an error"},
                     {config::Severity::kInfo, "NEURON_RT_Z", "a note"}});
  ASSERT_EQ(console_.size(), 2u) << "INFO is below the default WARN";
  EXPECT_NE(console_[0].find("  WARN  NRT:nrt_init  a warning"), std::string::npos);
  EXPECT_NE(console_[1].find("  ERROR  NRT:nrt_init  an error"), std::string::npos);
}

TEST_F(LogTest, ConcurrentWritersProduceWholeLines) {
  Configure(Resolved({{"NEURON_RT_LOG_LEVEL", "INFO"}}));
  constexpr int kThreads = 4;
  constexpr int kLines = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kLines; ++i) NEURON_LOG(UTIL, kInfo, "thread %d line %d", t, i);
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_EQ(console_.size(), static_cast<size_t>(kThreads * kLines));
  for (const std::string& line : console_) {
    auto parsed = testing::ParseLogLine(line);
    ASSERT_TRUE(parsed.has_value()) << line;
    EXPECT_EQ(parsed->level, "INFO");
    EXPECT_EQ(parsed->submodule, "UTIL");
    EXPECT_EQ(parsed->message.rfind("thread ", 0), 0u) << line;
  }
}

// The default console sink is stderr, one write per line: redirect fd 2 to
// a file while several threads log, then check every line is whole.
TEST(LogStderr, DefaultConsoleWritesWholeLinesToStderr) {
  std::string path = neuron::testing::MakeTempDir() + "/stderr.txt";
  int file = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  ASSERT_GE(file, 0);
  int saved = ::dup(STDERR_FILENO);
  ::dup2(file, STDERR_FILENO);
  ::close(file);
  SetSyslogSink([](int, std::string_view) {});
  Configure(Resolved({{"NEURON_RT_LOG_LEVEL", "WARN"}}));
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 100; ++i) NEURON_LOG(ENC, kWarn, "writer %d line %d", t, i);
    });
  }
  for (std::thread& thread : threads) thread.join();
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ConfigureDefaults();
  SetSyslogSink(nullptr);

  std::ifstream in(path);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    auto parsed = testing::ParseLogLine(line);
    ASSERT_TRUE(parsed.has_value()) << line;
    EXPECT_EQ(parsed->submodule, "ENC");
    EXPECT_EQ(parsed->message.rfind("writer ", 0), 0u) << line;
  }
  EXPECT_EQ(lines, 300);
}

}  // namespace
}  // namespace neuron::log
