// Parsers for the value syntaxes specific to runtime variables (log levels
// and locations, the profiling and numerics enums, HBM fill values, the
// collectives stream split, ...), with the names they print back. Generic
// syntaxes (booleans, integers, byte counts, range lists) live in
// lib/support/parse.h. Every parser returns nullopt for text it does not
// accept; the matching kAccepted* string says what is accepted.
#ifndef NEURON_LIB_CONFIG_VALUE_PARSERS_H_
#define NEURON_LIB_CONFIG_VALUE_PARSERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/config/config.h"

namespace neuron::config {

// ERROR, WARN, WARNING, INFO, DEBUG, TRACE, QUIET in any case.
inline constexpr const char* kAcceptedLogLevels =
    "ERROR, WARN, WARNING, INFO, DEBUG, TRACE, QUIET (any case)";
std::optional<LogLevel> ParseLogLevel(std::string_view text);
const char* LogLevelName(LogLevel level);  // "ERROR", "WARN", ...

// console or syslog in any case: selecting one disables the other.
inline constexpr const char* kAcceptedLogLocations = "console, syslog (any case)";
std::optional<LogSink> ParseLogLocation(std::string_view text);  // level unused
std::string LogLocationName(const LogSink& sink);  // "console,syslog", ...

inline constexpr const char* kAcceptedNumericalVerbosity =
    "none, critical, debug, verbose (any case)";
std::optional<NumericalVerbosity> ParseNumericalVerbosity(std::string_view text);
const char* NumericalVerbosityName(NumericalVerbosity verbosity);

// model (or 1), session, 0.
inline constexpr const char* kAcceptedDeviceProfile = "model, 1, session, 0";
std::optional<DeviceProfileMode> ParseDeviceProfileMode(std::string_view text);
const char* DeviceProfileModeName(DeviceProfileMode mode);  // "model", ...

// json (Trace Event JSON) or pftrace (Perfetto's protobuf trace).
inline constexpr const char* kAcceptedProfileFormat = "json, pftrace (any case)";
std::optional<ProfileFormat> ParseProfileFormat(std::string_view text);
const char* ProfileFormatName(ProfileFormat format);  // "json", "pftrace"

// off, fp32_nan, bf16_nan, or a 32-bit unsigned integer pattern.
inline constexpr const char* kAcceptedHbmInit =
    "off, fp32_nan, bf16_nan or an unsigned integer up to 4294967295";
struct HbmInitValue {
  HbmInit mode = HbmInit::kPattern;
  uint32_t pattern = 0;
};
std::optional<HbmInitValue> ParseHbmInit(std::string_view text);
std::string FormatHbmInit(const HbmInitValue& value);

// W0:W1, two positive integers.
inline constexpr const char* kAcceptedStreamSplit =
    "W0:W1 with two positive integers, e.g. 3:1";
struct StreamSplit {
  uint32_t w0 = 3, w1 = 1;
};
std::optional<StreamSplit> ParseStreamSplit(std::string_view text);

// Comma-separated unsigned integers, e.g. 4096,65536.
inline constexpr const char* kAcceptedUnsignedList =
    "comma-separated unsigned integers, e.g. 4096,65536";
std::optional<std::vector<uint64_t>> ParseUnsignedList(std::string_view text);

// 0, -1, or an NRT status given as a number or a name (NRT_TIMEOUT, TIMEOUT).
inline constexpr const char* kAcceptedDumpInputsOnErr =
    "0 (off), -1 (always) or an NRT status number or name such as NRT_TIMEOUT";
std::optional<int64_t> ParseDumpInputsOnErr(std::string_view text);

// host:port with a non-empty host and a port 1-65535 ([v6]:port allowed).
inline constexpr const char* kAcceptedHostPort =
    "host:port with a port from 1 to 65535, e.g. 10.0.0.1:45654";
bool IsHostPort(std::string_view text);

// An S3 URI: s3://bucket[/prefix] (empty disables S3 dumps).
inline constexpr const char* kAcceptedS3Prefix =
    "an s3://bucket/prefix URI, or empty";
bool IsS3Prefix(std::string_view text);

}  // namespace neuron::config

#endif  // NEURON_LIB_CONFIG_VALUE_PARSERS_H_
