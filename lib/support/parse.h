// Parsers for the value syntaxes shared by environment variables and flags:
// booleans, integers, byte counts and range lists. Each returns a message
// saying what is accepted when the text does not parse.
#ifndef NEURON_LIB_SUPPORT_PARSE_H_
#define NEURON_LIB_SUPPORT_PARSE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace neuron {

// 0, 1, false, true in any case.
absl::StatusOr<bool> ParseBool(std::string_view text);

// Decimal unsigned integer (no sign, no spaces), up to max.
absl::StatusOr<uint64_t> ParseUnsigned(std::string_view text,
                                       uint64_t max = UINT64_MAX);

// Decimal signed integer.
absl::StatusOr<int64_t> ParseSigned(std::string_view text);

// Byte count: a number with an optional unit, e.g. 4096, 64k, 2MiB, 2 MB,
// 1g. Units are binary (k/K/KiB/KB = 1024).
absl::StatusOr<uint64_t> ParseByteCount(std::string_view text);

// Byte count in nccom-test's style, where kb/MB/gb are binary multiples too.
// (Same as ParseByteCount; kept as a name for the flag's meaning.)
inline absl::StatusOr<uint64_t> ParseSizeWithSuffix(std::string_view text) {
  return ParseByteCount(text);
}

// Range list: "0-3", "0,2,4", "0,2-3". Returns the sorted, de-duplicated
// values; empty text, reversed ranges and non-numbers are errors.
absl::StatusOr<std::vector<int>> ParseRangeList(std::string_view text);

// Formats sorted values back into compact range-list syntax ("0-3,6").
std::string FormatRangeList(const std::vector<int>& values);

// Formats a byte count for humans: "96 GB" style is not used; we print
// binary units with one decimal where needed, e.g. "16.0 GiB", "512 MiB".
std::string FormatBytes(uint64_t bytes);

}  // namespace neuron

#endif  // NEURON_LIB_SUPPORT_PARSE_H_
