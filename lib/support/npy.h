// NumPy .npy files (format versions 1, 2 and 3): reading and writing
// C-ordered arrays of the dtypes the toolchain exchanges: <f2 <f4 <f8, <c8 <c16,
// <i1..<i8, <u1..<u8, |b1, and bf16 as 2-byte void ('|V2') or as '<u2' bit
// patterns. Fortran-ordered files are refused with a clear error.
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

// Parses .npy bytes; `name` prefixes error messages (a file name).
absl::StatusOr<Array> Parse(std::string_view bytes, std::string_view name);
// Reads a file ("-" reads stdin).
absl::StatusOr<Array> ReadFile(const std::string& path);

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
