#include "lib/support/parse.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace neuron {
namespace {

absl::Status Invalid(std::string_view text, const char* accepted) {
  return absl::InvalidArgumentError(
      absl::StrFormat("'%s' is not %s", text, accepted));
}

}  // namespace

absl::StatusOr<bool> ParseBool(std::string_view text) {
  std::string lower = absl::AsciiStrToLower(absl::string_view(text.data(), text.size()));
  if (lower == "1" || lower == "true") return true;
  if (lower == "0" || lower == "false") return false;
  return Invalid(text, "a boolean (accepted: 0, 1, false, true)");
}

absl::StatusOr<uint64_t> ParseUnsigned(std::string_view text, uint64_t max) {
  if (text.empty()) return Invalid(text, "an unsigned integer");
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return Invalid(text, "an unsigned integer");
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) {
      return Invalid(text, "an unsigned integer in range");
    }
    value = value * 10 + digit;
  }
  if (value > max) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s' is out of range (at most %u)", text, max));
  }
  return value;
}

absl::StatusOr<int64_t> ParseSigned(std::string_view text) {
  bool negative = !text.empty() && text[0] == '-';
  std::string_view digits = negative ? text.substr(1) : text;
  if (!digits.empty() && digits[0] == '+') return Invalid(text, "an integer");
  auto magnitude = ParseUnsigned(digits, negative ? uint64_t{INT64_MAX} + 1
                                                  : uint64_t{INT64_MAX});
  if (!magnitude.ok()) return Invalid(text, "an integer");
  if (negative) return static_cast<int64_t>(0 - *magnitude);
  return static_cast<int64_t>(*magnitude);
}

absl::StatusOr<uint64_t> ParseByteCount(std::string_view text) {
  constexpr const char* kAccepted =
      "a byte count (a number with an optional unit: B, k/KB/KiB, m/MB/MiB, "
      "g/GB/GiB)";
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0) return Invalid(text, kAccepted);
  auto number = ParseUnsigned(text.substr(0, i));
  if (!number.ok()) return Invalid(text, kAccepted);
  std::string_view unit = text.substr(i);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  std::string u = absl::AsciiStrToLower(absl::string_view(unit.data(), unit.size()));
  uint64_t multiplier = 1;
  if (u.empty() || u == "b") {
    multiplier = 1;
  } else if (u == "k" || u == "kb" || u == "kib") {
    multiplier = uint64_t{1} << 10;
  } else if (u == "m" || u == "mb" || u == "mib") {
    multiplier = uint64_t{1} << 20;
  } else if (u == "g" || u == "gb" || u == "gib") {
    multiplier = uint64_t{1} << 30;
  } else {
    return Invalid(text, kAccepted);
  }
  if (*number > UINT64_MAX / multiplier) return Invalid(text, kAccepted);
  return *number * multiplier;
}

absl::StatusOr<std::vector<int>> ParseRangeList(std::string_view text) {
  constexpr const char* kAccepted =
      "a range list (e.g. 0-3 or 0,2,4 or 0,2-3)";
  if (text.empty()) return Invalid(text, kAccepted);
  // Ranges are merged before they are expanded, so repeated ranges
  // ("0-1048576,0-1048576,...") cost no more than one: at most 2^20 + 1
  // values however long the text.
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (absl::string_view part :
       absl::StrSplit(absl::string_view(text.data(), text.size()), ',')) {
    std::string_view p(part.data(), part.size());
    size_t dash = p.find('-');
    std::string_view lo_text = dash == std::string_view::npos ? p : p.substr(0, dash);
    std::string_view hi_text = dash == std::string_view::npos ? p : p.substr(dash + 1);
    auto lo = ParseUnsigned(lo_text, 1 << 20);
    auto hi = ParseUnsigned(hi_text, 1 << 20);
    if (!lo.ok() || !hi.ok() || *hi < *lo) return Invalid(text, kAccepted);
    ranges.emplace_back(*lo, *hi);
  }
  std::sort(ranges.begin(), ranges.end());
  std::vector<int> values;
  uint64_t next = 0;  // smallest value not yet emitted
  for (const auto& [lo, hi] : ranges) {
    for (uint64_t v = std::max(lo, next); v <= hi; ++v) values.push_back(static_cast<int>(v));
    next = std::max(next, hi + 1);
  }
  return values;
}

std::string FormatRangeList(const std::vector<int>& values) {
  std::string out;
  size_t i = 0;
  while (i < values.size()) {
    size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(values[i]);
    if (j > i) out += "-" + std::to_string(values[j]);
    i = j + 1;
  }
  return out;
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0) return absl::StrFormat("%u B", bytes);
  if (value == static_cast<double>(static_cast<uint64_t>(value))) {
    return absl::StrFormat("%u %s", static_cast<uint64_t>(value), kUnits[unit]);
  }
  return absl::StrFormat("%.1f %s", value, kUnits[unit]);
}

}  // namespace neuron
