#include "lib/log/log_line.h"

#include <ctime>

#include "absl/strings/str_format.h"
#include "lib/config/value_parsers.h"

namespace neuron::log {
namespace {

std::string OneLine(std::string_view message) {
  std::string text(message);
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace

std::string FormatTimestamp(std::chrono::system_clock::time_point time) {
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr",
                                            "May", "Jun", "Jul", "Aug",
                                            "Sep", "Oct", "Nov", "Dec"};
  using std::chrono::duration_cast;
  using std::chrono::microseconds;
  using std::chrono::seconds;
  const auto since_epoch = time.time_since_epoch();
  auto whole = duration_cast<seconds>(since_epoch);
  auto micros = duration_cast<microseconds>(since_epoch - whole).count();
  if (micros < 0) {  // before 1970: keep the fraction positive
    whole -= seconds(1);
    micros += 1000000;
  }
  std::time_t t = static_cast<std::time_t>(whole.count());
  std::tm tm{};
  localtime_r(&t, &tm);
  return absl::StrFormat("%04d-%s-%02d %02d:%02d:%02d.%06d", tm.tm_year + 1900,
                         kMonths[tm.tm_mon % 12], tm.tm_mday, tm.tm_hour,
                         tm.tm_min, tm.tm_sec, static_cast<int>(micros));
}

std::string FormatLine(const LineParts& parts) {
  return absl::StrFormat("%s  %d:%d  %s  %s:%s  %s\n", FormatTimestamp(parts.time),
                         parts.pid, parts.tid, config::LogLevelName(parts.level),
                         parts.submodule, parts.function, OneLine(parts.message));
}

std::string FormatSyslogMessage(const LineParts& parts) {
  return absl::StrFormat("%s  %s:%s  %s", config::LogLevelName(parts.level),
                         parts.submodule, parts.function, OneLine(parts.message));
}

}  // namespace neuron::log
