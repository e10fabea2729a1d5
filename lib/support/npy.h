// Writing NumPy .npy files: headers (version 1.0, 2.0 when needed) and
// whole C-ordered arrays. Reading is lib/tensorfile's, the project's one
// .npy parser (tensorfile::ParseNpyHeader; tensorfile/npy_array.h reads a
// whole small array into an Array).
#ifndef NEURON_LIB_SUPPORT_NPY_H_
#define NEURON_LIB_SUPPORT_NPY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace neuron::npy {

struct Array {
  // NumPy dtype descriptor as written in the header, e.g. "<f4", "|b1", "|V2".
  std::string descr;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // little-endian, C order

  int64_t element_count() const;
  // Bytes per element of descr (0 when unknown).
  int item_size() const;
};

// The magic, version, header length and header dict of a C-order array,
// padded with spaces so that the data starts at a multiple of `alignment`
// (64 as NumPy writes; 4096 puts a fast-loading NEFF member's data on a
// page boundary; a power of two, 16..32768). Version 1.0, or 2.0 when the
// header needs it.
std::string Header(std::string_view descr, const std::vector<int64_t>& shape, size_t alignment = 64);

// Serializes as version 1.0 (2.0 when the header needs it).
std::string Serialize(const Array& array);
// Writes a file ("-" writes stdout).
absl::Status WriteFile(const std::string& path, const Array& array);

// Bytes per element of a supported descriptor; 0 when unsupported.
int DescrItemSize(std::string_view descr);

}  // namespace neuron::npy

#endif  // NEURON_LIB_SUPPORT_NPY_H_
