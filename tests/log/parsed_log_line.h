// Splits a console log line back into its fields, checking its shape:
//   YYYY-Mon-DD HH:MM:SS.uuuuuu  PID:TID  LEVEL  SUB:function  message\n
// (Hand-written rather than std::regex, which GCC 12 warns about under the
// sanitizers.)
#ifndef NEURON_TESTS_LOG_PARSED_LOG_LINE_H_
#define NEURON_TESTS_LOG_PARSED_LOG_LINE_H_

#include <cctype>
#include <optional>
#include <string>
#include <string_view>

namespace neuron::log::testing {

struct ParsedLogLine {
  std::string timestamp;
  long pid = 0;
  long tid = 0;
  std::string level;
  std::string submodule;
  std::string function;
  std::string message;
};

// "dddd-Aaa-dd dd:dd:dd.dddddd": d = digit, A = upper, a = lower.
inline bool MatchesTimestamp(std::string_view text) {
  constexpr std::string_view kShape = "dddd-Aaa-dd dd:dd:dd.dddddd";
  if (text.size() != kShape.size()) return false;
  for (size_t i = 0; i < kShape.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    switch (kShape[i]) {
      case 'd': if (!std::isdigit(c)) return false; break;
      case 'A': if (!std::isupper(c)) return false; break;
      case 'a': if (!std::islower(c)) return false; break;
      default: if (text[i] != kShape[i]) return false;
    }
  }
  return true;
}

// Takes the text up to the next "  " separator.
inline std::optional<std::string_view> NextField(std::string_view& rest) {
  size_t sep = rest.find("  ");
  if (sep == std::string_view::npos) return std::nullopt;
  std::string_view field = rest.substr(0, sep);
  rest.remove_prefix(sep + 2);
  return field;
}

inline std::optional<long> ParseNumber(std::string_view text) {
  if (text.empty()) return std::nullopt;
  long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// nullopt unless the line has exactly the runtime's shape (the trailing
// newline is optional so lines read with getline parse too).
inline std::optional<ParsedLogLine> ParseLogLine(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (line.find('\n') != std::string_view::npos) return std::nullopt;
  ParsedLogLine out;
  std::string_view rest = line;
  auto timestamp = NextField(rest);
  auto ids = NextField(rest);
  auto level = NextField(rest);
  auto where = NextField(rest);
  if (!timestamp || !ids || !level || !where) return std::nullopt;
  if (!MatchesTimestamp(*timestamp)) return std::nullopt;
  size_t colon = ids->find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto pid = ParseNumber(ids->substr(0, colon));
  auto tid = ParseNumber(ids->substr(colon + 1));
  if (!pid || !tid) return std::nullopt;
  size_t where_colon = where->find(':');
  if (where_colon == std::string_view::npos) return std::nullopt;
  out.timestamp = std::string(*timestamp);
  out.pid = *pid;
  out.tid = *tid;
  out.level = std::string(*level);
  out.submodule = std::string(where->substr(0, where_colon));
  out.function = std::string(where->substr(where_colon + 1));
  out.message = std::string(rest);
  return out;
}

}  // namespace neuron::log::testing

#endif  // NEURON_TESTS_LOG_PARSED_LOG_LINE_H_
