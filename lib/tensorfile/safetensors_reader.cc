// safetensors: an 8-byte little-endian header length N, N bytes of JSON
// {"NAME": {"dtype": "F32", "shape": [2, 3], "data_offsets": [BEGIN, END]},
//  "__metadata__": {...}}, then the data, offsets relative to its start.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"
#include "lib/tensorfile/npy_header.h"
#include "lib/tensorfile/readers.h"
#include "nlohmann/json.hpp"

namespace neuron::tensorfile {
namespace {

using nlohmann::json;

// As the safetensors library limits it: no model needs more, and a hostile
// length must not make us read gigabytes.
constexpr uint64_t kMaxHeaderBytes = 100 << 20;
// Deeper JSON than this is no safetensors header; refusing it keeps the
// recursive parser off the stack's end.
constexpr int kMaxJsonDepth = 16;

int JsonDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

absl::StatusOr<uint64_t> NonNegative(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
  return absl::InvalidArgumentError("not a non-negative integer");
}

struct Entry {
  ArrayInfo info;
  uint64_t begin = 0, end = 0;
};

absl::StatusOr<Entry> ParseEntry(const std::string& name, const json& v, uint64_t data_bytes) {
  auto bad = [&](std::string_view what) {
    return absl::InvalidArgumentError(absl::StrFormat("tensor '%s': %s", name, what));
  };
  if (!v.is_object()) return bad("is not an object");
  auto dtype = v.find("dtype");
  auto shape = v.find("shape");
  auto offsets = v.find("data_offsets");
  if (dtype == v.end() || !dtype->is_string()) return bad("has no 'dtype' string");
  if (shape == v.end() || !shape->is_array()) return bad("has no 'shape' array");
  if (offsets == v.end() || !offsets->is_array() || offsets->size() != 2) {
    return bad("has no 'data_offsets' pair");
  }
  Entry e;
  e.info.key = name;
  std::optional<StoredType> type = FromSafetensorsName(dtype->get<std::string>());
  if (!type) {
    return bad(absl::StrFormat("unsupported dtype '%s' (BOOL, U8-U64, I8-I64, F16, BF16, F32, F64, "
                               "F8_E4M3, F8_E5M2)",
                               dtype->get<std::string>()));
  }
  e.info.dtype = *type;
  if (shape->size() > 64) return bad("has more than 64 dimensions");
  for (const json& d : *shape) {
    absl::StatusOr<uint64_t> n = NonNegative(d);
    if (!n.ok() || *n > static_cast<uint64_t>(INT64_MAX)) return bad("has a bad dimension in 'shape'");
    e.info.dims.push_back(static_cast<int64_t>(*n));
  }
  absl::StatusOr<uint64_t> bytes = DataBytes(e.info.dims, type->item_bytes);
  if (!bytes.ok()) return bad(std::string(bytes.status().message()));
  e.info.bytes = *bytes;
  absl::StatusOr<uint64_t> begin = NonNegative((*offsets)[0]), end = NonNegative((*offsets)[1]);
  if (!begin.ok() || !end.ok()) return bad("has bad 'data_offsets'");
  e.begin = *begin;
  e.end = *end;
  if (e.begin > e.end || e.end > data_bytes) {
    return bad(absl::StrFormat("data_offsets [%d, %d] lie outside the %d bytes of data", e.begin, e.end,
                               data_bytes));
  }
  if (e.end - e.begin != e.info.bytes) {
    return bad(absl::StrFormat("data_offsets [%d, %d] hold %d bytes, its shape (%s) implies %d", e.begin,
                               e.end, e.end - e.begin, DescribeArray(type->spelled, e.info.dims),
                               e.info.bytes));
  }
  return e;
}

absl::Status ParseHeader(const ByteSource& source, FlatTensorFile* file) {
  if (source.size() < 8) return absl::InvalidArgumentError("truncated safetensors header length");
  uint8_t len_bytes[8];
  if (absl::Status s = source.ReadAt(0, len_bytes, 8); !s.ok()) return s;
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = header_len << 8 | len_bytes[i];
  if (header_len > kMaxHeaderBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("safetensors header of %d bytes (at most %d are accepted)", header_len, kMaxHeaderBytes));
  }
  if (header_len > source.size() - 8) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "safetensors header of %d bytes, but the file has %d after the length", header_len, source.size() - 8));
  }
  absl::StatusOr<std::string> text = source.ReadSome(8, header_len);
  if (!text.ok()) return text.status();
  if (JsonDepth(*text) > kMaxJsonDepth) {
    return absl::InvalidArgumentError("safetensors header nests too deep to be a header");
  }
  const json header = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded()) return absl::InvalidArgumentError("safetensors header is not valid JSON");
  if (!header.is_object()) return absl::InvalidArgumentError("safetensors header is not a JSON object");
  const uint64_t data_start = 8 + header_len;
  const uint64_t data_bytes = source.size() - data_start;
  std::vector<Entry> entries;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") continue;
    absl::StatusOr<Entry> e = ParseEntry(name, value, data_bytes);
    if (!e.ok()) return e.status();
    entries.push_back(std::move(*e));
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  for (size_t i = 1; i < entries.size(); ++i) {
    if (entries[i].begin < entries[i - 1].end) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "tensors '%s' [%d, %d] and '%s' [%d, %d] overlap", entries[i - 1].info.key, entries[i - 1].begin,
          entries[i - 1].end, entries[i].info.key, entries[i].begin, entries[i].end));
    }
  }
  for (Entry& e : entries) file->Add(std::move(e.info), data_start + e.begin);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<TensorFile>> OpenSafetensors(std::shared_ptr<ByteSource> source) {
  auto file = std::make_unique<FlatTensorFile>(Format::kSafetensors, source);
  if (absl::Status s = ParseHeader(*source, file.get()); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s", source->display(), std::string(s.message())));
  }
  return file;
}

}  // namespace neuron::tensorfile
