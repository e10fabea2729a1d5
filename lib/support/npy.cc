#include "lib/support/npy.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/support/atomic_file.h"
#include "lib/support/checked_size.h"
#include "absl/strings/str_join.h"

namespace neuron::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

absl::Status Bad(std::string_view name, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", name, what));
}

void SkipSpace(std::string_view s, size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
}

// Reads a Python string literal ('...' or "...") at i.
bool ReadString(std::string_view s, size_t& i, std::string& out) {
  if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) return false;
  char q = s[i++];
  size_t end = s.find(q, i);
  if (end == std::string_view::npos) return false;
  out = std::string(s.substr(i, end - i));
  i = end + 1;
  return true;
}

}  // namespace

int DescrItemSize(std::string_view d) {
  static const struct { const char* descr; int size; } kTypes[] = {
      {"<f2", 2}, {"<f4", 4}, {"<f8", 8}, {"|i1", 1}, {"<i1", 1}, {"<i2", 2},
      {"<i4", 4}, {"<i8", 8}, {"|u1", 1}, {"<u1", 1}, {"<u2", 2}, {"<u4", 4},
      {"<u8", 8}, {"|b1", 1}, {"<c8", 8}, {"<c16", 16}, {"|V2", 2}, {"<V2", 2}, {"bfloat16", 2}, {"<bf16", 2}};
  for (const auto& t : kTypes) if (d == t.descr) return t.size;
  return 0;
}

int64_t Array::element_count() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int Array::item_size() const { return DescrItemSize(descr); }

absl::StatusOr<Array> Parse(std::string_view bytes, std::string_view name) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != std::string_view(kMagic, 6))
    return Bad(name, "not a .npy file (missing \\x93NUMPY magic)");
  int major = static_cast<uint8_t>(bytes[6]);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return Bad(name, "truncated .npy header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    offset = 12;
  } else {
    return Bad(name, absl::StrCat("unsupported .npy format version ", major));
  }
  if (bytes.size() < offset + header_len) return Bad(name, "truncated .npy header");
  std::string_view h = bytes.substr(offset, header_len);
  Array a;
  bool have_descr = false, have_order = false, have_shape = false;
  size_t i = 0;
  SkipSpace(h, i);
  if (i >= h.size() || h[i] != '{') return Bad(name, "malformed .npy header (expected a dict)");
  ++i;
  while (true) {
    SkipSpace(h, i);
    if (i < h.size() && h[i] == '}') break;
    std::string key;
    if (!ReadString(h, i, key)) return Bad(name, "malformed .npy header (expected a key)");
    SkipSpace(h, i);
    if (i >= h.size() || h[i] != ':') return Bad(name, "malformed .npy header (expected ':')");
    ++i;
    SkipSpace(h, i);
    if (key == "descr") {
      if (!ReadString(h, i, a.descr)) return Bad(name, "malformed .npy header: descr is not a string");
      have_descr = true;
    } else if (key == "fortran_order") {
      if (h.substr(i, 4) == "True") return Bad(name, "fortran_order arrays are not supported (save with C order)");
      if (h.substr(i, 5) != "False") return Bad(name, "malformed .npy header: fortran_order");
      i += 5;
      have_order = true;
    } else if (key == "shape") {
      if (i >= h.size() || h[i] != '(') return Bad(name, "malformed .npy header: shape is not a tuple");
      ++i;
      while (true) {
        SkipSpace(h, i);
        if (i < h.size() && h[i] == ')') { ++i; break; }
        size_t start = i;
        while (i < h.size() && h[i] >= '0' && h[i] <= '9') ++i;
        if (i == start || i - start > 18) return Bad(name, "malformed .npy header: bad dimension in shape");
        a.shape.push_back(std::stoll(std::string(h.substr(start, i - start))));
        SkipSpace(h, i);
        if (i < h.size() && h[i] == ',') ++i;
        else if (i < h.size() && h[i] == ')') { ++i; break; }
        else return Bad(name, "malformed .npy header: shape");
      }
      have_shape = true;
    } else {
      return Bad(name, absl::StrCat("malformed .npy header: unknown key '", key, "'"));
    }
    SkipSpace(h, i);
    if (i < h.size() && h[i] == ',') { ++i; continue; }
    if (i < h.size() && h[i] == '}') break;
    return Bad(name, "malformed .npy header (expected ',' or '}')");
  }
  if (!have_descr || !have_order || !have_shape)
    return Bad(name, "malformed .npy header: needs descr, fortran_order and shape");
  if (a.descr == "<V2" ) a.descr = "|V2";
  int item = DescrItemSize(a.descr);
  if (item == 0) return Bad(name, absl::StrCat("unsupported dtype '", a.descr, "'"));
  std::optional<uint64_t> total = static_cast<uint64_t>(item);
  for (int64_t d : a.shape) {
    total = CheckedMul(*total, static_cast<uint64_t>(d));
    if (!total || *total > (uint64_t{1} << 62)) return Bad(name, "array too large");
  }
  size_t data_off = offset + header_len;
  if (bytes.size() - data_off < static_cast<size_t>(*total))
    return Bad(name, absl::StrCat("truncated data: expected ", *total,
                                  " bytes, found ", bytes.size() - data_off));
  a.data.assign(bytes.begin() + data_off, bytes.begin() + data_off + static_cast<size_t>(*total));
  return a;
}

absl::StatusOr<Array> ReadFile(const std::string& path) {
  std::string bytes;
  if (path == "-") {
    bytes.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream f(path, std::ios::binary);
    if (!f) return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
    bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  return Parse(bytes, path == "-" ? "<stdin>" : path);
}

std::string Header(std::string_view descr, const std::vector<int64_t>& dims, size_t alignment) {
  std::string shape;
  if (dims.size() == 1) shape = absl::StrCat("(", dims[0], ",)");
  else shape = absl::StrCat("(", absl::StrJoin(dims, ", "), ")");
  std::string header = absl::StrCat("{'descr': '", std::string(descr), "', 'fortran_order': False, 'shape': ", shape, ", }");
  // Pad so the data starts on an `alignment` boundary; header ends with '\n'.
  auto round_up = [alignment](size_t n) { return (n + alignment - 1) / alignment * alignment; };
  size_t pre = 10;
  size_t total = pre + header.size() + 1;
  bool v2 = false;
  if (round_up(total) - pre > 65535) { v2 = true; pre = 12; total = pre + header.size() + 1; }
  size_t padded = round_up(total);
  header.append(padded - total, ' ');
  header.push_back('\n');
  std::string out(kMagic, 6);
  out.push_back(static_cast<char>(v2 ? 2 : 1));
  out.push_back(0);
  uint32_t len = static_cast<uint32_t>(header.size());
  out.push_back(static_cast<char>(len & 0xff));
  out.push_back(static_cast<char>((len >> 8) & 0xff));
  if (v2) {
    out.push_back(static_cast<char>((len >> 16) & 0xff));
    out.push_back(static_cast<char>((len >> 24) & 0xff));
  }
  out += header;
  return out;
}

std::string Serialize(const Array& a) {
  std::string out = Header(a.descr, a.shape);
  out.append(reinterpret_cast<const char*>(a.data.data()), a.data.size());
  return out;
}

absl::Status WriteFile(const std::string& path, const Array& a) {
  std::string bytes = Serialize(a);
  if (path == "-") {
    std::cout.write(bytes.data(), bytes.size());
    std::cout.flush();
    return std::cout ? absl::OkStatus() : absl::InternalError("<stdout>: write failed");
  }
  return WriteFileAtomically(path, bytes);
}

}  // namespace neuron::npy
