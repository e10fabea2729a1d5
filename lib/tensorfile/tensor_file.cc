#include "lib/tensorfile/tensor_file.h"

#include <cstring>
#include <iostream>
#include <iterator>

#include "absl/strings/str_format.h"
#include "lib/tensorfile/npy_header.h"
#include "lib/tensorfile/readers.h"

namespace neuron::tensorfile {

std::string_view FormatName(Format format) {
  switch (format) {
    case Format::kNpy: return "npy";
    case Format::kNpz: return "npz";
    case Format::kSafetensors: return "safetensors";
  }
  return "?";
}

std::optional<Format> DetectFormat(std::string_view head) {
  if (head.substr(0, 6) == "\x93NUMPY") return Format::kNpy;
  // A local file header, or the end record of an empty archive.
  if (head.substr(0, 4) == std::string_view("PK\x03\x04", 4) ||
      head.substr(0, 4) == std::string_view("PK\x05\x06", 4)) {
    return Format::kNpz;
  }
  // safetensors: an 8-byte little-endian header length, then a JSON object.
  if (head.size() >= 9 && head[8] == '{') return Format::kSafetensors;
  return std::nullopt;
}

absl::StatusOr<std::unique_ptr<TensorFile>> TensorFile::FromSource(std::shared_ptr<ByteSource> source) {
  absl::StatusOr<std::string> head = source->ReadSome(0, 16);
  if (!head.ok()) return head.status();
  std::optional<Format> format = DetectFormat(*head);
  if (!format) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s", source->display(),
        head->empty() ? "an empty file, not a tensor file"
                      : "not a tensor file (.npy, .npz or safetensors)"));
  }
  switch (*format) {
    case Format::kNpy: return OpenNpy(std::move(source));
    case Format::kNpz: return OpenNpz(std::move(source));
    case Format::kSafetensors: return OpenSafetensors(std::move(source));
  }
  return absl::InternalError("unreachable");
}

absl::StatusOr<std::unique_ptr<TensorFile>> TensorFile::Open(const std::string& path) {
  if (path == "-") {
    std::string bytes(std::istreambuf_iterator<char>(std::cin), {});
    if (std::cin.bad()) return absl::InternalError("<stdin>: read failed");
    return FromBytes(std::move(bytes), "<stdin>");
  }
  absl::StatusOr<std::shared_ptr<ByteSource>> source = ByteSource::OpenFile(path);
  if (!source.ok()) return source.status();
  return FromSource(std::move(*source));
}

absl::StatusOr<std::unique_ptr<TensorFile>> TensorFile::FromBytes(std::string bytes, std::string display) {
  return FromSource(ByteSource::InMemory(std::move(bytes), std::move(display)));
}

const ArrayInfo* TensorFile::Find(std::string_view key) const {
  for (const ArrayInfo& a : arrays_) {
    if (a.key == key) return &a;
  }
  return nullptr;
}

std::string TensorFile::Where(size_t i) const {
  if (format_ == Format::kNpy) return display();
  return absl::StrFormat("%s[%s]", display(), arrays_[i].key);
}

absl::Status FlatTensorFile::ReadInto(size_t i, uint8_t* out) const {
  return source_->ReadAt(offsets_[i], out, arrays_[i].bytes);
}

absl::StatusOr<std::optional<std::string_view>> FlatTensorFile::View(size_t i) const {
  absl::StatusOr<std::string_view> all = source_->Map();
  if (!all.ok()) return all.status();
  return std::optional<std::string_view>(all->substr(offsets_[i], arrays_[i].bytes));
}

absl::StatusOr<std::unique_ptr<TensorFile>> OpenNpy(std::shared_ptr<ByteSource> source) {
  absl::StatusOr<std::string> head = source->ReadSome(0, kNpyHeadBytes);
  if (!head.ok()) return head.status();
  absl::StatusOr<NpyHeader> header = ParseNpyHeader(*head, source->size());
  if (!header.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s", source->display(), std::string(header.status().message())));
  }
  auto file = std::make_unique<FlatTensorFile>(Format::kNpy, source);
  file->Add(ArrayInfo{"", header->dtype, header->dims, header->data_bytes, false}, header->data_offset);
  return file;
}

}  // namespace neuron::tensorfile
