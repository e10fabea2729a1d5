// The text of a log line: timestamp, pid:tid, level, SUBMODULE:function.
#include <algorithm>
#include <cstdlib>
#include <ctime>

#include <gtest/gtest.h>

#include "lib/log/log_line.h"
#include "tests/log/parsed_log_line.h"

namespace neuron::log {
namespace {

// Runs with TZ=UTC so local time is predictable, then restores TZ.
class UtcTime : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tz = std::getenv("TZ");
    had_tz_ = tz != nullptr;
    if (had_tz_) old_tz_ = tz;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  void TearDown() override {
    if (had_tz_) {
      setenv("TZ", old_tz_.c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }
  static std::chrono::system_clock::time_point At(int year, int month, int day, int hour,
                                                  int minute, int second, int micros) {
    std::tm tm{};
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    return std::chrono::system_clock::from_time_t(timegm(&tm)) +
           std::chrono::microseconds(micros);
  }

 private:
  bool had_tz_ = false;
  std::string old_tz_;
};

TEST_F(UtcTime, TimestampHasMonthNameAndMicroseconds) {
  EXPECT_EQ(FormatTimestamp(At(2026, 12, 2, 13, 57, 20, 782962)),
            "2026-Dec-02 13:57:20.782962");
  EXPECT_EQ(FormatTimestamp(At(2025, 1, 9, 3, 4, 5, 7)), "2025-Jan-09 03:04:05.000007");
}

TEST_F(UtcTime, LineLooksLikeTheRuntimes) {
  LineParts parts;
  parts.time = At(2026, 12, 2, 13, 57, 20, 782962);
  parts.pid = 4444;
  parts.tid = 4445;
  parts.level = config::LogLevel::kWarn;
  parts.submodule = "NRT";
  parts.function = "nrt_init";
  parts.message = "something happened";
  EXPECT_EQ(FormatLine(parts),
            "2026-Dec-02 13:57:20.782962  4444:4445  WARN  NRT:nrt_init  something "
            "happened\n");
  EXPECT_EQ(FormatSyslogMessage(parts), "WARN  NRT:nrt_init  something happened");
}

TEST(LogLine, MessageNewlinesStayOnOneLine) {
  LineParts parts;
  parts.level = config::LogLevel::kError;
  parts.submodule = "TDRV";
  parts.function = "f";
  parts.message = "a\nb\r\nc";
  std::string line = FormatLine(parts);
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1);
  const std::string tail = "  ERROR  TDRV:f  a b  c\n";
  ASSERT_GE(line.size(), tail.size());
  EXPECT_EQ(line.substr(line.size() - tail.size()), tail) << line;
}

}  // namespace
}  // namespace neuron::log

namespace neuron::log {
namespace {

TEST(LogLine, FormattedLinesParseBackAndJunkDoesNot) {
  LineParts parts;
  parts.time = std::chrono::system_clock::now();
  parts.pid = 12;
  parts.tid = 34;
  parts.level = config::LogLevel::kDebug;
  parts.submodule = "UTIL";
  parts.function = "Run";
  parts.message = "two  spaces inside";
  auto parsed = testing::ParseLogLine(FormatLine(parts));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->pid, 12);
  EXPECT_EQ(parsed->tid, 34);
  EXPECT_EQ(parsed->level, "DEBUG");
  EXPECT_EQ(parsed->function, "Run");
  EXPECT_EQ(parsed->message, "two  spaces inside");
  EXPECT_EQ(parsed->timestamp, FormatTimestamp(parts.time));
  EXPECT_FALSE(testing::ParseLogLine("hello world").has_value());
  EXPECT_FALSE(testing::ParseLogLine(
                   "2026-Dec-02 13:57:20.78296  1:2  WARN  NRT:f  short micros")
                   .has_value());
  EXPECT_FALSE(testing::ParseLogLine("2026-Dec-02 13:57:20.782962  1  WARN  NRT:f  no tid")
                   .has_value());
}

}  // namespace
}  // namespace neuron::log
