// NEURON_RT_LOG_LEVEL / NEURON_RT_LOG_LOCATION and their per-submodule
// variants. The reference's pairing rules:
//   - neither global set: WARN (HAL: ERROR) to console and syslog;
//   - only NEURON_RT_LOG_LEVEL: that level, console only (syslog stops);
//   - only NEURON_RT_LOG_LOCATION: that sink only, level lowered to ERROR;
//   - both: that level to that sink.
// A per-submodule variable then overrides just its own aspect (level or
// sink) of that submodule; selecting one sink disables the other.
#include <string>

#include "lib/config/resolver.h"
#include "lib/config/value_parsers.h"

namespace neuron::config {
namespace {

// Reads a level variable; nullopt when unset or invalid (then init fails).
std::optional<LogLevel> ReadLevel(Resolver& r, const std::string& name) {
  std::optional<std::string> text = r.Env(name);
  if (!text) return std::nullopt;
  std::optional<LogLevel> level = ParseLogLevel(*text);
  if (!level) {
    r.FailParse(name, *text, "a log level", kAcceptedLogLevels);
    r.Record(name, *text, Source::kEnv);
  }
  return level;
}

std::optional<LogSink> ReadLocation(Resolver& r, const std::string& name) {
  std::optional<std::string> text = r.Env(name);
  if (!text) return std::nullopt;
  std::optional<LogSink> sink = ParseLogLocation(*text);
  if (!sink) {
    r.FailParse(name, *text, "a log location", kAcceptedLogLocations);
    r.Record(name, *text, Source::kEnv);
  }
  return sink;
}

}  // namespace

void ResolveLogging(Resolver& r) {
  const std::string kLevel = "NEURON_RT_LOG_LEVEL";
  const std::string kLocation = "NEURON_RT_LOG_LOCATION";
  std::optional<LogLevel> global_level = ReadLevel(r, kLevel);
  std::optional<LogSink> global_sink = ReadLocation(r, kLocation);
  // "Set" for pairing means set to a valid value; an invalid one already
  // failed init.
  const bool level_set = global_level.has_value();
  const bool location_set = global_sink.has_value();

  if (level_set) {
    r.Record(kLevel, LogLevelName(*global_level), Source::kEnv);
  } else if (location_set) {
    r.Record(kLevel, LogLevelName(LogLevel::kError), Source::kDerived);
  } else if (!r.IsSet(kLevel)) {
    r.Record(kLevel, LogLevelName(LogLevel::kWarn), Source::kDefault);
  }
  if (location_set) {
    r.Record(kLocation, LogLocationName(*global_sink), Source::kEnv);
  } else if (level_set) {
    r.Record(kLocation, "console", Source::kDerived);
  } else if (!r.IsSet(kLocation)) {
    r.Record(kLocation, "console,syslog", Source::kDefault);
  }

  const Source inherited =
      (level_set || location_set) ? Source::kDerived : Source::kDefault;
  for (int i = 0; i < kNumLogSubmodules; ++i) {
    const std::string submodule = kLogSubmodules[i];
    LogSink sink;
    sink.level = submodule == "HAL" ? LogLevel::kError : LogLevel::kWarn;
    sink.console = true;
    sink.syslog = true;
    if (level_set) {
      sink.level = *global_level;
      if (!location_set) sink.syslog = false;
    }
    if (location_set) {
      sink.console = global_sink->console;
      sink.syslog = global_sink->syslog;
      if (!level_set) sink.level = LogLevel::kError;
    }

    const std::string level_name = kLevel + "_" + submodule;
    const std::string location_name = kLocation + "_" + submodule;
    std::optional<LogLevel> own_level = ReadLevel(r, level_name);
    std::optional<LogSink> own_sink = ReadLocation(r, location_name);
    if (own_level) sink.level = *own_level;
    if (own_sink) {
      sink.console = own_sink->console;
      sink.syslog = own_sink->syslog;
    }
    if (own_level || !r.IsSet(level_name)) {
      r.Record(level_name, LogLevelName(sink.level),
               own_level ? Source::kEnv : inherited);
    }
    if (own_sink || !r.IsSet(location_name)) {
      r.Record(location_name, LogLocationName(sink),
               own_sink ? Source::kEnv : inherited);
    }
    r.config().log[i] = sink;
  }
}

}  // namespace neuron::config
