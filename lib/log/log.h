// The runtime's logger: per-submodule levels and sinks (console = stderr,
// syslog(3) with ident "neuron-tools") configured from RuntimeConfig, i.e.
// from NEURON_RT_LOG_LEVEL / NEURON_RT_LOG_LOCATION and their
// per-submodule variants. Thread-safe; a disabled level costs one atomic
// load and no formatting.
//
//   NEURON_LOG(NRT, kWarn, "core %d is busy", core);
#ifndef NEURON_LIB_LOG_LOG_H_
#define NEURON_LIB_LOG_LOG_H_

#include <functional>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "lib/config/config.h"

namespace neuron::log {

// In the order of config::kLogSubmodules.
enum class Submodule { ENC, ENCD, HAL, NDBG, NEFF, NLOG, NMGR, NRT, RUST, TDRV, TEST, UTIL };
const char* SubmoduleName(Submodule submodule);  // "NRT"

// Applies the resolved levels and sinks (config.log[]).
void Configure(const config::RuntimeConfig& config);
// The compiled-in defaults, in effect until Configure: WARN everywhere
// except HAL at ERROR, to console and syslog.
void ConfigureDefaults();

// True when a message of this level from this submodule reaches a sink.
bool Enabled(Submodule submodule, config::LogLevel level);

// Writes one line (if enabled). Prefer NEURON_LOG, which skips formatting
// when disabled.
void Write(Submodule submodule, config::LogLevel level, std::string_view function,
           std::string_view message);

// Prints what configuration resolution found, as lines of submodule NRT:
// warnings at WARN, errors at ERROR, notes at INFO.
void ReportDiagnostics(const std::vector<config::Diagnostic>& diagnostics);

// Sinks, replaceable for tests; an empty function restores the default
// (stderr, syslog(3)). A console sink receives whole lines ending in '\n'.
using ConsoleSink = std::function<void(std::string_view line)>;
using SyslogSink = std::function<void(int priority, std::string_view message)>;
void SetConsoleSink(ConsoleSink sink);
void SetSyslogSink(SyslogSink sink);

}  // namespace neuron::log

#define NEURON_LOG(submodule, level, ...)                                   \
  do {                                                                      \
    if (::neuron::log::Enabled(::neuron::log::Submodule::submodule,         \
                               ::neuron::config::LogLevel::level)) {        \
      ::neuron::log::Write(::neuron::log::Submodule::submodule,             \
                           ::neuron::config::LogLevel::level, __func__,     \
                           ::absl::StrFormat(__VA_ARGS__));                 \
    }                                                                       \
  } while (0)

#endif  // NEURON_LIB_LOG_LOG_H_
