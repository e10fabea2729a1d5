// For tests that start the runtime with variables of their own: an
// environment made of a map (nothing from the process), and the runtime's
// log lines captured instead of printed.
#ifndef NEURON_TESTS_SUPPORT_RUNTIME_ENV_H_
#define NEURON_TESTS_SUPPORT_RUNTIME_ENV_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "lib/config/config.h"
#include "lib/log/log.h"

namespace neuron::testing {

// An environment holding exactly these variables.
inline config::EnvLookup MapEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// While it lives, console and syslog lines go to its strings; afterwards
// the logger is back to its defaults.
class LogCapture {
 public:
  LogCapture() {
    log::SetConsoleSink([this](std::string_view line) { console += line; });
    log::SetSyslogSink([this](int, std::string_view line) { syslog += line; });
  }
  ~LogCapture() {
    log::SetConsoleSink(nullptr);
    log::SetSyslogSink(nullptr);
    log::ConfigureDefaults();
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  void Clear() {
    console.clear();
    syslog.clear();
  }

  std::string console, syslog;
};

}  // namespace neuron::testing

#endif  // NEURON_TESTS_SUPPORT_RUNTIME_ENV_H_
