// The text of one log line, modelled on the Neuron Runtime's:
//   2026-Dec-02 13:57:20.782962  4444:4444  WARN  NRT:function  message
// (local time with microseconds, pid:tid, level, SUBMODULE:function).
#ifndef NEURON_LIB_LOG_LOG_LINE_H_
#define NEURON_LIB_LOG_LOG_LINE_H_

#include <chrono>
#include <string>
#include <string_view>

#include "lib/config/config.h"

namespace neuron::log {

struct LineParts {
  std::chrono::system_clock::time_point time;
  long pid = 0;
  long tid = 0;
  config::LogLevel level = config::LogLevel::kWarn;
  std::string_view submodule;  // "NRT"
  std::string_view function;   // the caller's __func__
  std::string_view message;
};

// "2026-Dec-02 13:57:20.782962" in local time; English month names
// whatever the locale.
std::string FormatTimestamp(std::chrono::system_clock::time_point time);

// The console line, ending in '\n'. Newlines inside the message become
// spaces so that one call is one line.
std::string FormatLine(const LineParts& parts);

// The syslog(3) message: syslog adds time and pid itself.
std::string FormatSyslogMessage(const LineParts& parts);

}  // namespace neuron::log

#endif  // NEURON_LIB_LOG_LOG_LINE_H_
