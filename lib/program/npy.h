// NumPy .npy (format version 1.0) headers: the program package stores each
// large constant as one .npy member so users can inspect it with numpy.load.
#ifndef NEURON_LIB_PROGRAM_NPY_H_
#define NEURON_LIB_PROGRAM_NPY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace neuron::program {

// The magic, version, header length and header dict for a C-order array,
// padded with spaces so that header size is a multiple of `alignment`
// (64 as NumPy writes; 4096 puts the data of a fast-loading NEFF member on
// a page boundary). alignment must be a power of two, 16..32768.
std::string NpyHeader(std::string_view descr, const std::vector<int64_t>& dims,
                      size_t alignment = 64);

struct NpyArray {
  std::string descr;          // e.g. "<f4"
  std::vector<int64_t> dims;
  std::string_view data;      // view into the bytes given to ParseNpy
};

// Parses an .npy file held in memory (versions 1.0, 2.0 and 3.0, C order
// only). The data must have exactly the size the header implies when the
// descriptor's item size is known.
absl::StatusOr<NpyArray> ParseNpy(std::string_view bytes);

}  // namespace neuron::program

#endif  // NEURON_LIB_PROGRAM_NPY_H_
