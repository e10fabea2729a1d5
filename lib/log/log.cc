#include "lib/log/log.h"

#include <sys/syscall.h>
#include <syslog.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <string>

#include "lib/log/log_line.h"

namespace neuron::log {
namespace {

using config::LogLevel;

// One word per submodule so Enabled() is a single relaxed load:
// bits 0-3 level, bit 4 console, bit 5 syslog.
constexpr uint32_t kConsoleBit = 1u << 4;
constexpr uint32_t kSyslogBit = 1u << 5;

uint32_t Pack(const config::LogSink& sink) {
  return static_cast<uint32_t>(sink.level) | (sink.console ? kConsoleBit : 0) |
         (sink.syslog ? kSyslogBit : 0);
}

config::LogSink DefaultSink(int index) {
  config::LogSink sink;
  sink.level = std::string_view(config::kLogSubmodules[index]) == "HAL"
                   ? LogLevel::kError
                   : LogLevel::kWarn;
  return sink;
}

struct State {
  std::atomic<uint32_t> sinks[config::kNumLogSubmodules];
  std::mutex write_mutex;  // one line at a time, sinks swapped safely
  ConsoleSink console;
  SyslogSink syslog;
  bool syslog_opened = false;
  State() {
    for (int i = 0; i < config::kNumLogSubmodules; ++i) sinks[i] = Pack(DefaultSink(i));
  }
};

State& GetState() {
  static State* state = new State();  // never destroyed: usable at exit
  return *state;
}

void WriteStderr(std::string_view line) {
  const char* data = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nowhere to report a failing stderr
    data += n;
    left -= static_cast<size_t>(n);
  }
}

int SyslogPriority(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return LOG_ERR;
    case LogLevel::kWarn: return LOG_WARNING;
    case LogLevel::kInfo: return LOG_INFO;
    default: return LOG_DEBUG;
  }
}

}  // namespace

const char* SubmoduleName(Submodule submodule) {
  int index = static_cast<int>(submodule);
  if (index < 0 || index >= config::kNumLogSubmodules) return "NRT";
  return config::kLogSubmodules[index];
}

void Configure(const config::RuntimeConfig& config) {
  State& state = GetState();
  for (int i = 0; i < config::kNumLogSubmodules; ++i) {
    state.sinks[i].store(Pack(config.log[i]), std::memory_order_relaxed);
  }
}

void ConfigureDefaults() {
  State& state = GetState();
  for (int i = 0; i < config::kNumLogSubmodules; ++i) {
    state.sinks[i].store(Pack(DefaultSink(i)), std::memory_order_relaxed);
  }
}

bool Enabled(Submodule submodule, LogLevel level) {
  int index = static_cast<int>(submodule);
  if (index < 0 || index >= config::kNumLogSubmodules || level == LogLevel::kQuiet) {
    return false;
  }
  uint32_t packed = GetState().sinks[index].load(std::memory_order_relaxed);
  LogLevel threshold = static_cast<LogLevel>(packed & 0xf);
  if (threshold == LogLevel::kQuiet) return false;
  if ((packed & (kConsoleBit | kSyslogBit)) == 0) return false;
  return static_cast<int>(level) <= static_cast<int>(threshold);
}

void Write(Submodule submodule, LogLevel level, std::string_view function,
           std::string_view message) {
  if (!Enabled(submodule, level)) return;
  State& state = GetState();
  const uint32_t packed =
      state.sinks[static_cast<int>(submodule)].load(std::memory_order_relaxed);
  LineParts parts;
  parts.time = std::chrono::system_clock::now();
  parts.pid = static_cast<long>(::getpid());
  parts.tid = static_cast<long>(::syscall(SYS_gettid));
  parts.level = level;
  parts.submodule = SubmoduleName(submodule);
  parts.function = function;
  parts.message = message;

  std::lock_guard<std::mutex> lock(state.write_mutex);
  if (packed & kConsoleBit) {
    std::string line = FormatLine(parts);
    if (state.console) {
      state.console(line);
    } else {
      WriteStderr(line);
    }
  }
  if (packed & kSyslogBit) {
    std::string text = FormatSyslogMessage(parts);
    if (state.syslog) {
      state.syslog(SyslogPriority(level), text);
    } else {
      if (!state.syslog_opened) {
        ::openlog("neuron-tools", LOG_PID, LOG_USER);
        state.syslog_opened = true;
      }
      ::syslog(SyslogPriority(level), "%s", text.c_str());
    }
  }
}

void ReportDiagnostics(const std::vector<config::Diagnostic>& diagnostics) {
  for (const config::Diagnostic& d : diagnostics) {
    LogLevel level = d.severity == config::Severity::kError     ? LogLevel::kError
                     : d.severity == config::Severity::kWarning ? LogLevel::kWarn
                                                                : LogLevel::kInfo;
    Write(Submodule::NRT, level, "nrt_init", d.message);
  }
}

void SetConsoleSink(ConsoleSink sink) {
  State& state = GetState();
  std::lock_guard<std::mutex> lock(state.write_mutex);
  state.console = std::move(sink);
}

void SetSyslogSink(SyslogSink sink) {
  State& state = GetState();
  std::lock_guard<std::mutex> lock(state.write_mutex);
  state.syslog = std::move(sink);
}

}  // namespace neuron::log
