#include "lib/config/value_parsers.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "absl/strings/ascii.h"
#include "lib/support/parse.h"
#include "neuron/nrt_status.h"

namespace neuron::config {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) {
    return static_cast<char>(std::tolower(c));
  });
  return out;
}

}  // namespace

std::optional<LogLevel> ParseLogLevel(std::string_view text) {
  std::string word = Lower(text);
  if (word == "error") return LogLevel::kError;
  if (word == "warn" || word == "warning") return LogLevel::kWarn;
  if (word == "info") return LogLevel::kInfo;
  if (word == "debug") return LogLevel::kDebug;
  if (word == "trace") return LogLevel::kTrace;
  if (word == "quiet") return LogLevel::kQuiet;
  return std::nullopt;
}

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return "ERROR";
    case LogLevel::kWarn: return "WARN";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kDebug: return "DEBUG";
    case LogLevel::kTrace: return "TRACE";
    case LogLevel::kQuiet: return "QUIET";
  }
  return "WARN";
}

std::optional<LogSink> ParseLogLocation(std::string_view text) {
  std::string word = Lower(text);
  LogSink sink;
  if (word == "console") {
    sink.console = true;
    sink.syslog = false;
    return sink;
  }
  if (word == "syslog") {
    sink.console = false;
    sink.syslog = true;
    return sink;
  }
  return std::nullopt;
}

std::string LogLocationName(const LogSink& sink) {
  if (sink.console && sink.syslog) return "console,syslog";
  if (sink.console) return "console";
  if (sink.syslog) return "syslog";
  return "none";
}

std::optional<NumericalVerbosity> ParseNumericalVerbosity(std::string_view text) {
  std::string word = Lower(text);
  if (word == "none") return NumericalVerbosity::kNone;
  if (word == "critical") return NumericalVerbosity::kCritical;
  if (word == "debug") return NumericalVerbosity::kDebug;
  if (word == "verbose") return NumericalVerbosity::kVerbose;
  return std::nullopt;
}

const char* NumericalVerbosityName(NumericalVerbosity verbosity) {
  switch (verbosity) {
    case NumericalVerbosity::kNone: return "none";
    case NumericalVerbosity::kCritical: return "critical";
    case NumericalVerbosity::kDebug: return "debug";
    case NumericalVerbosity::kVerbose: return "verbose";
  }
  return "none";
}

std::optional<DeviceProfileMode> ParseDeviceProfileMode(std::string_view text) {
  std::string word = Lower(text);
  if (word == "model" || word == "1") return DeviceProfileMode::kModel;
  if (word == "session") return DeviceProfileMode::kSession;
  if (word == "0") return DeviceProfileMode::kDisabled;
  return std::nullopt;
}

const char* DeviceProfileModeName(DeviceProfileMode mode) {
  switch (mode) {
    case DeviceProfileMode::kDisabled: return "disabled";
    case DeviceProfileMode::kModel: return "model";
    case DeviceProfileMode::kSession: return "session";
  }
  return "disabled";
}

std::optional<ProfileFormat> ParseProfileFormat(std::string_view text) {
  std::string word = Lower(text);
  if (word == "json") return ProfileFormat::kJson;
  if (word == "pftrace") return ProfileFormat::kPftrace;
  return std::nullopt;
}

const char* ProfileFormatName(ProfileFormat format) {
  return format == ProfileFormat::kPftrace ? "pftrace" : "json";
}

std::optional<HbmInitValue> ParseHbmInit(std::string_view text) {
  std::string word = Lower(text);
  if (word == "off") return HbmInitValue{HbmInit::kOff, 0};
  if (word == "fp32_nan") return HbmInitValue{HbmInit::kFp32Nan, 0};
  if (word == "bf16_nan") return HbmInitValue{HbmInit::kBf16Nan, 0};
  auto pattern = ParseUnsigned(text, UINT32_MAX);
  if (!pattern.ok()) return std::nullopt;
  return HbmInitValue{HbmInit::kPattern, static_cast<uint32_t>(*pattern)};
}

std::string FormatHbmInit(const HbmInitValue& value) {
  switch (value.mode) {
    case HbmInit::kOff: return "off";
    case HbmInit::kFp32Nan: return "fp32_nan";
    case HbmInit::kBf16Nan: return "bf16_nan";
    case HbmInit::kPattern: return std::to_string(value.pattern);
  }
  return "0";
}

std::optional<StreamSplit> ParseStreamSplit(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto w0 = ParseUnsigned(text.substr(0, colon), UINT32_MAX);
  auto w1 = ParseUnsigned(text.substr(colon + 1), UINT32_MAX);
  if (!w0.ok() || !w1.ok() || *w0 == 0 || *w1 == 0) return std::nullopt;
  return StreamSplit{static_cast<uint32_t>(*w0), static_cast<uint32_t>(*w1)};
}

std::optional<std::vector<uint64_t>> ParseUnsignedList(std::string_view text) {
  std::vector<uint64_t> values;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos
                                               : comma - start);
    auto value = ParseUnsigned(item);
    if (!value.ok()) return std::nullopt;
    values.push_back(*value);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return values;
}

std::optional<int64_t> ParseDumpInputsOnErr(std::string_view text) {
  if (text == "0") return 0;
  if (text == "-1") return -1;
  // nrt_parse_status accepts numbers and names, but only listed statuses.
  std::string copy(text);
  NRT_STATUS status;
  if (copy.empty() || nrt_parse_status(copy.c_str(), &status) != 0) {
    return std::nullopt;
  }
  return static_cast<int64_t>(status);
}

bool IsHostPort(std::string_view text) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  std::string_view host = text.substr(0, colon);
  // A bare IPv6 address needs brackets, else its colons are ambiguous.
  if (host.find(':') != std::string_view::npos &&
      !(host.front() == '[' && host.back() == ']')) {
    return false;
  }
  if (host.find_first_of(" \t") != std::string_view::npos) return false;
  auto port = ParseUnsigned(text.substr(colon + 1), 65535);
  return port.ok() && *port > 0;
}

bool IsS3Prefix(std::string_view text) {
  constexpr std::string_view kScheme = "s3://";
  return text.empty() ||
         (text.size() > kScheme.size() && text.substr(0, kScheme.size()) == kScheme);
}

}  // namespace neuron::config
