#include "lib/program/npy.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/tensorfile/npy_header.h"

namespace neuron::program {

// The header through the project's one .npy parser; the descriptor kept as
// spelled, for the package to check against the constant's type.
absl::StatusOr<NpyHeader> ParseNpyHeader(std::string_view bytes, uint64_t file_size) {
  absl::StatusOr<tensorfile::NpyHeader> header = tensorfile::ParseNpyHeader(bytes, file_size);
  if (!header.ok()) return absl::InvalidArgumentError(absl::StrCat("bad .npy data: ", header.status().message()));
  NpyHeader out;
  out.descr = header->dtype.spelled;
  out.dims = std::move(header->dims);
  out.data_offset = header->data_offset;
  return out;
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
