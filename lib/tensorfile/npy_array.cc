#include "lib/tensorfile/npy_array.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "lib/tensorfile/npy_header.h"

namespace neuron::tensorfile {

absl::StatusOr<npy::Array> ParseNpyArray(std::string_view bytes, std::string_view display) {
  absl::StatusOr<NpyHeader> header = ParseNpyHeader(bytes, bytes.size());
  if (!header.ok()) return absl::InvalidArgumentError(absl::StrCat(std::string(display), ": ", header.status().message()));
  npy::Array array;
  array.descr = header->dtype.spelled;
  array.shape = header->dims;
  array.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header->data_offset), bytes.end());
  return array;
}

absl::StatusOr<npy::Array> ReadNpyArray(const std::string& path) {
  std::string bytes;
  if (path == "-") {
    bytes.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream f(path, std::ios::binary);
    if (!f) return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
    bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  return ParseNpyArray(bytes, path == "-" ? "<stdin>" : path);
}

}  // namespace neuron::tensorfile
