#include "lib/literal_io/npy_literal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <optional>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/program/dtype.h"
#include "lib/program/npy.h"
#include "lib/support/npy.h"
#include "lib/support/atomic_file.h"
#include "lib/tensorfile/dtype.h"

namespace neuron::literal_io {
namespace {

using hlo::ElementType;

// The project's one table of descriptors (lib/tensorfile). Raw bytes
// ('|V2', '|V1': bf16 and fp8 as NumPy holds them) are taken as the
// unsigned integer of their width, which ConvertTensor and ReadNpyInto
// treat as raw bits of a bf16 or fp8 input.
std::optional<ElementType> TypeOfDescr(std::string_view descr) {
  std::optional<tensorfile::StoredType> stored = tensorfile::FromNpyDescr(descr);
  if (!stored) return std::nullopt;
  if (stored->type != ElementType::kInvalid) return stored->type;
  return stored->item_bytes == 2 ? ElementType::kU16 : ElementType::kU8;
}

}  // namespace

absl::StatusOr<hlo::Literal> ParseNpyTensor(std::string_view bytes, std::string_view display) {
  absl::StatusOr<program::NpyArray> npy = program::ParseNpy(bytes);
  if (!npy.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s", std::string(display), std::string(npy.status().message())));
  }
  std::optional<ElementType> type = TypeOfDescr(npy->descr);
  if (!type.has_value()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: unsupported .npy dtype '%s' (little-endian bool, int, uint, float, complex, or 1- and 2-byte void for raw bits)",
        std::string(display), npy->descr));
  }
  hlo::Literal value = hlo::Literal::Zeros(hlo::Shape::Array(*type, npy->dims));
  if (value.data().size() != npy->data.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: holds %d bytes of data, its header says %d", std::string(display), npy->data.size(),
        value.data().size()));
  }
  if (!npy->data.empty()) std::memcpy(value.mutable_data().data(), npy->data.data(), npy->data.size());
  return value;
}

absl::StatusOr<hlo::Literal> ReadNpyFile(const std::string& path) {
  std::string bytes;
  if (path == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    bytes = ss.str();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return absl::NotFoundError(absl::StrFormat("%s: cannot open: %s", path, std::strerror(errno)));
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    bytes = ss.str();
  }
  return ParseNpyTensor(bytes, path);
}

absl::StatusOr<NpyFileInput> OpenNpyFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrFormat("%s: cannot open: %s", path, std::strerror(errno)));
  struct stat st{};
  std::string head(size_t{1} << 20, '\0');  // headers are a few hundred bytes
  ssize_t got = -1;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) got = ::pread(fd, head.data(), head.size(), 0);
  const int err = errno;
  ::close(fd);
  if (!S_ISREG(st.st_mode)) return absl::FailedPreconditionError(absl::StrCat(path, ": not a regular file"));
  if (got < 0) return absl::InternalError(absl::StrFormat("%s: read failed: %s", path, std::strerror(err)));
  head.resize(static_cast<size_t>(got));
  absl::StatusOr<program::NpyHeader> header = program::ParseNpyHeader(head, static_cast<uint64_t>(st.st_size));
  if (!header.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s", path, std::string(header.status().message())));
  }
  std::optional<ElementType> type = TypeOfDescr(header->descr);
  if (!type.has_value()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: unsupported .npy dtype '%s' (little-endian bool, int, uint, float, complex, or 1- and 2-byte void for raw bits)",
        path, header->descr));
  }
  return NpyFileInput{path, *type, header->dims, header->data_offset};
}

absl::Status ReadNpyInto(const NpyFileInput& input, hlo::ElementType type, uint8_t* out, uint64_t bytes) {
  const bool raw_bits = hlo::StorageBytes(input.type) == hlo::StorageBytes(type) &&
                        hlo::IsUnsignedInt(input.type) && hlo::IsFloatingPoint(type) &&
                        type != ElementType::kF32 && type != ElementType::kF64;
  if (input.type != type && !raw_bits) {
    // A conversion: through a host copy of the file's values.
    absl::StatusOr<hlo::Literal> value = ReadNpyFile(input.path);
    if (!value.ok()) return value.status();
    const hlo::Literal converted = ConvertTensor(*value, type);
    if (converted.data().size() != bytes) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: changed while being read", input.path));
    }
    if (bytes) std::memcpy(out, converted.data().data(), bytes);
    return absl::OkStatus();
  }
  // The file's bytes straight into the tensor: no copy on the host.
  const int fd = ::open(input.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrFormat("%s: cannot open: %s", input.path, std::strerror(errno)));
  uint64_t done = 0;
  while (done < bytes) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(bytes - done, uint64_t{1} << 30));
    const ssize_t got = ::pread(fd, out + done, want, static_cast<off_t>(input.data_offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      const int err = errno;
      ::close(fd);
      return absl::InternalError(absl::StrFormat("%s: %s", input.path,
                                                 got == 0 ? "ends before its data (truncated while being read)"
                                                          : std::strerror(err)));
    }
    done += static_cast<uint64_t>(got);
  }
  ::close(fd);
  return absl::OkStatus();
}

hlo::ElementType NpyStorageType(hlo::ElementType type) {
  switch (type) {
    case ElementType::kF32: case ElementType::kF64: case ElementType::kF16:
    case ElementType::kPred: case ElementType::kS8: case ElementType::kU8:
    case ElementType::kS16: case ElementType::kU16: case ElementType::kS32:
    case ElementType::kU32: case ElementType::kS64: case ElementType::kU64:
      return type;
    default:
      return hlo::IsFloatingPoint(type) ? ElementType::kF32 : type;
  }
}

std::string NpyBytes(const hlo::Literal& value) {
  const ElementType storage = NpyStorageType(value.shape().type);
  const hlo::Literal converted =
      storage == value.shape().type ? hlo::Literal() : ConvertTensor(value, storage);
  const hlo::Literal& v = storage == value.shape().type ? value : converted;
  std::string out = npy::Header(program::NpyDescr(storage), v.shape().dims);
  out.append(reinterpret_cast<const char*>(v.data().data()), v.data().size());
  return out;
}

absl::Status WriteNpyFile(const std::string& path, const hlo::Literal& value) {
  const std::string bytes = NpyBytes(value);
  if (path == "-") {
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size()) {
      return absl::InternalError("cannot write to stdout");
    }
    std::fflush(stdout);
    return absl::OkStatus();
  }
  return WriteFileAtomically(path, bytes);
}

hlo::Literal ConvertTensor(const hlo::Literal& value, hlo::ElementType type) {
  const ElementType from = value.shape().type;
  hlo::Literal out = hlo::Literal::Zeros(hlo::Shape::Array(type, value.shape().dims));
  const bool raw_bits = hlo::StorageBytes(from) == hlo::StorageBytes(type) &&
                        hlo::IsUnsignedInt(from) && hlo::IsFloatingPoint(type) &&
                        type != ElementType::kF32 && type != ElementType::kF64;
  if (from == type || raw_bits) {
    out.mutable_data() = value.data();
    return out;
  }
  const int64_t n = value.element_count();
  const bool ints = (hlo::IsInteger(from) || from == ElementType::kPred) &&
                    (hlo::IsInteger(type) || type == ElementType::kPred);
  // Complex to real keeps the real part (as numpy's astype does).
  const bool complex = hlo::IsComplex(type);
  for (int64_t i = 0; i < n; ++i) {
    if (complex) {
      out.SetComplex(i, value.GetDouble(i), hlo::IsComplex(from) ? value.GetImag(i) : 0.0);
    } else if (ints) {
      out.SetInt(i, value.GetInt(i));
    } else {
      out.SetDouble(i, value.GetDouble(i));
    }
  }
  return out;
}

}  // namespace neuron::literal_io
