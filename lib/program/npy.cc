#include "lib/program/npy.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/support/parse.h"

namespace neuron::program {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

absl::Status NpyError(std::string_view what) {
  return absl::InvalidArgumentError(absl::StrFormat("bad .npy data: %s", what));
}

// Value text of `key` in the header dict ("'descr': '<f4', ...").
std::string_view DictValue(std::string_view dict, std::string_view key) {
  std::string quoted = absl::StrCat("'", std::string(key), "'");
  size_t at = dict.find(quoted);
  if (at == std::string_view::npos) return {};
  size_t colon = dict.find(':', at + quoted.size());
  if (colon == std::string_view::npos) return {};
  std::string_view rest = Trim(dict.substr(colon + 1));
  if (rest.empty()) return {};
  if (rest[0] == '\'') {
    size_t end = rest.find('\'', 1);
    return end == std::string_view::npos ? std::string_view{} : rest.substr(0, end + 1);
  }
  if (rest[0] == '(') {
    size_t end = rest.find(')');
    return end == std::string_view::npos ? std::string_view{} : rest.substr(0, end + 1);
  }
  size_t end = rest.find_first_of(",}");
  return Trim(rest.substr(0, end));
}

}  // namespace

absl::StatusOr<NpyHeader> ParseNpyHeader(std::string_view bytes, uint64_t file_size) {
  if (bytes.size() > file_size) bytes = bytes.substr(0, file_size);
  if (bytes.size() < kMagicSize + 4 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    return NpyError("missing \\x93NUMPY magic");
  }
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0, prefix = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return NpyError("truncated header");
    for (int i = 3; i >= 0; --i) header_len = header_len << 8 | static_cast<uint8_t>(bytes[8 + i]);
    prefix = 12;
  } else {
    return NpyError(absl::StrCat("unsupported format version ", major));
  }
  if (header_len > bytes.size() - prefix) return NpyError("truncated header");
  std::string_view dict = bytes.substr(prefix, header_len);
  NpyHeader array;
  std::string_view descr = DictValue(dict, "descr");
  if (descr.size() < 3 || descr.front() != '\'') return NpyError("no 'descr' string");
  array.descr = std::string(descr.substr(1, descr.size() - 2));
  if (DictValue(dict, "fortran_order") != "False") {
    return NpyError("only C-order (fortran_order: False) arrays are supported");
  }
  std::string_view shape = DictValue(dict, "shape");
  if (shape.size() < 2 || shape.front() != '(') return NpyError("no 'shape' tuple");
  std::string_view inner = shape.substr(1, shape.size() - 2);
  while (!inner.empty()) {
    size_t comma = inner.find(',');
    std::string_view part = Trim(inner.substr(0, comma));
    inner = comma == std::string_view::npos ? std::string_view{} : inner.substr(comma + 1);
    if (part.empty()) continue;
    absl::StatusOr<int64_t> d = ParseSigned(part);
    if (!d.ok() || *d < 0) return NpyError("bad dimension in 'shape'");
    array.dims.push_back(*d);
  }
  array.data_offset = prefix + header_len;
  const uint64_t data_size = file_size - array.data_offset;
  // Check the size when the item size is in the descriptor ("<f4" -> 4).
  absl::StatusOr<int64_t> item_or =
      array.descr.size() >= 3 ? ParseSigned(std::string_view(array.descr).substr(2))
                              : absl::StatusOr<int64_t>(0);
  int64_t item = item_or.ok() ? *item_or : 0;
  if (item > 0) {
    int64_t count = 1;
    for (int64_t d : array.dims) {
      if (d && count > INT64_MAX / d) return NpyError("shape overflows");
      count *= d;
    }
    if (count > INT64_MAX / item) return NpyError("shape overflows");
    if (static_cast<uint64_t>(count * item) != data_size) {
      return NpyError(absl::StrFormat("data is %d bytes, the header implies %d", data_size,
                                      count * item));
    }
  }
  return array;
}

absl::StatusOr<NpyArray> ParseNpy(std::string_view bytes) {
  absl::StatusOr<NpyHeader> header = ParseNpyHeader(bytes, bytes.size());
  if (!header.ok()) return header.status();
  NpyArray array;
  array.descr = std::move(header->descr);
  array.dims = std::move(header->dims);
  array.data = bytes.substr(header->data_offset);
  return array;
}

}  // namespace neuron::program
