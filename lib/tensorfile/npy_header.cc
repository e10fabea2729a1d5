#include "lib/tensorfile/npy_header.h"

#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/support/checked_size.h"

namespace neuron::tensorfile {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;

absl::Status Bad(std::string_view what) { return absl::InvalidArgumentError(std::string(what)); }

// A tiny reader of the Python dict literal NumPy writes:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class DictReader {
 public:
  explicit DictReader(std::string_view text) : s_(text) {}

  void SkipSpace() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool ConsumeWord(std::string_view word) {
    SkipSpace();
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  bool String(std::string* out) {
    SkipSpace();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) return false;
    const char quote = s_[i_];
    const size_t end = s_.find(quote, i_ + 1);
    if (end == std::string_view::npos) return false;
    *out = std::string(s_.substr(i_ + 1, end - i_ - 1));
    i_ = end + 1;
    return true;
  }
  bool Dimension(int64_t* out) {
    SkipSpace();
    const size_t start = i_;
    int64_t v = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
      if (v > (INT64_MAX - 9) / 10) return false;
      v = v * 10 + (s_[i_] - '0');
      ++i_;
    }
    // Python 2 writers added an 'L' to long integers.
    if (i_ > start && i_ < s_.size() && s_[i_] == 'L') ++i_;
    *out = v;
    return i_ > start;
  }
  bool AtEnd() {
    SkipSpace();
    return i_ == s_.size();
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

absl::StatusOr<uint64_t> DataBytes(const std::vector<int64_t>& dims, int item_bytes) {
  std::optional<uint64_t> total = static_cast<unsigned>(item_bytes);
  for (int64_t d : dims) {
    if (d < 0) return Bad("a negative dimension");
    total = CheckedMul(*total, static_cast<uint64_t>(d));
    if (!total || *total > (uint64_t{1} << 62)) return Bad("the shape is too large (over 2^62 bytes)");
  }
  return *total;
}

absl::StatusOr<NpyHeader> ParseNpyHeader(std::string_view head, uint64_t total_bytes) {
  if (head.size() > total_bytes) head = head.substr(0, total_bytes);
  if (head.size() < kMagicBytes + 4 || std::memcmp(head.data(), kMagic, kMagicBytes) != 0) {
    return Bad("not a .npy array (no \\x93NUMPY magic)");
  }
  const uint8_t major = static_cast<uint8_t>(head[6]);
  uint64_t header_len = 0, prefix = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(head[8]) | (static_cast<uint64_t>(static_cast<uint8_t>(head[9])) << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (head.size() < 12) return Bad("truncated .npy header");
    for (int i = 3; i >= 0; --i) header_len = header_len << 8 | static_cast<uint8_t>(head[8 + i]);
    prefix = 12;
  } else {
    return Bad(absl::StrCat("unsupported .npy format version ", major));
  }
  if (header_len > kMaxNpyHeaderBytes) {
    return Bad(absl::StrFormat(".npy header of %d bytes (at most %d are accepted)", header_len,
                               kMaxNpyHeaderBytes));
  }
  if (header_len > head.size() - prefix) return Bad("truncated .npy header");
  DictReader dict(head.substr(prefix, header_len));
  NpyHeader out;
  bool have_descr = false, have_order = false, have_shape = false;
  if (!dict.Consume('{')) return Bad("malformed .npy header (not a dict)");
  while (!dict.Consume('}')) {
    std::string key;
    if (!dict.String(&key) || !dict.Consume(':')) return Bad("malformed .npy header (expected 'key':)");
    if (key == "descr") {
      std::string descr;
      if (!dict.String(&descr)) return Bad("malformed .npy header: 'descr' is not a string");
      std::optional<StoredType> type = FromNpyDescr(descr);
      if (!type) {
        return Bad(absl::StrFormat("unsupported .npy dtype '%s' (little-endian bool, int, uint, "
                                   "float, complex, or 1- and 2-byte void for raw bits)",
                                   descr));
      }
      out.dtype = *type;
      have_descr = true;
    } else if (key == "fortran_order") {
      if (dict.ConsumeWord("True")) return Bad("Fortran-order arrays are not supported (save in C order)");
      if (!dict.ConsumeWord("False")) return Bad("malformed .npy header: 'fortran_order'");
      have_order = true;
    } else if (key == "shape") {
      if (!dict.Consume('(')) return Bad("malformed .npy header: 'shape' is not a tuple");
      // "()", "(3,)", "(2, 3)" and "(2, 3,)".
      while (!dict.Consume(')')) {
        int64_t d = 0;
        if (!dict.Dimension(&d)) return Bad("malformed .npy header: a bad dimension in 'shape'");
        if (out.dims.size() >= 64) return Bad("malformed .npy header: more than 64 dimensions");
        out.dims.push_back(d);
        if (dict.Consume(',')) continue;
        if (!dict.Consume(')')) return Bad("malformed .npy header: 'shape'");
        break;
      }
      have_shape = true;
    } else {
      return Bad(absl::StrFormat("malformed .npy header: unknown key '%s'", key));
    }
    if (!dict.Consume(',')) {
      if (!dict.Consume('}')) return Bad("malformed .npy header (expected ',' or '}')");
      break;
    }
  }
  if (!have_descr || !have_order || !have_shape) {
    return Bad("malformed .npy header: it needs 'descr', 'fortran_order' and 'shape'");
  }
  absl::StatusOr<uint64_t> bytes = DataBytes(out.dims, out.dtype.item_bytes);
  if (!bytes.ok()) return bytes.status();
  out.data_offset = prefix + header_len;
  out.data_bytes = *bytes;
  if (total_bytes - out.data_offset != out.data_bytes) {
    return Bad(absl::StrFormat("holds %d bytes of data, its header (%s) implies %d",
                               total_bytes - out.data_offset,
                               DescribeArray(out.dtype.spelled, out.dims), out.data_bytes));
  }
  return out;
}

}  // namespace neuron::tensorfile
