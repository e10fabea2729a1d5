// The .npy members of a program package viewed in place (the program
// stores each large constant as one .npy member so users can inspect it with
// numpy.load; lib/support/npy writes their headers). The header is read by
// lib/tensorfile's parser, the project's one; the data is a view, not a
// copy.
#ifndef NEURON_LIB_PROGRAM_NPY_H_
#define NEURON_LIB_PROGRAM_NPY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace neuron::program {

struct NpyArray {
  std::string descr;          // e.g. "<f4"
  std::vector<int64_t> dims;
  std::string_view data;      // view into the bytes given to ParseNpy
};

// An .npy file's header: where its data starts in the file.
struct NpyHeader {
  std::string descr;
  std::vector<int64_t> dims;
  uint64_t data_offset = 0;
};

// Parses the header at the start of a file of `file_size` bytes (`head`
// holds at least the header), checking the data's size against the file's
// as ParseNpy does, without the data in memory.
absl::StatusOr<NpyHeader> ParseNpyHeader(std::string_view head, uint64_t file_size);

// Parses an .npy file held in memory (versions 1.0, 2.0 and 3.0, C order
// only). The data must have exactly the size the header implies when the
// descriptor's item size is known.
absl::StatusOr<NpyArray> ParseNpy(std::string_view bytes);

}  // namespace neuron::program

#endif  // NEURON_LIB_PROGRAM_NPY_H_
