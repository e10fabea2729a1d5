// The header of a NumPy .npy array (format versions 1.0, 2.0 and 3.0), the
// one parser of the project: .npy files, .npz members and the NEFF's
// constant members all go through it. C order only; the data must have
// exactly the size the header implies.
#ifndef NEURON_LIB_TENSORFILE_NPY_HEADER_H_
#define NEURON_LIB_TENSORFILE_NPY_HEADER_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/tensorfile/dtype.h"

namespace neuron::tensorfile {

// Longest header accepted: NumPy's own reader refuses more than 10,000
// bytes; a hostile length must not make anyone read gigabytes.
inline constexpr uint64_t kMaxNpyHeaderBytes = 1 << 20;
// Bytes to read from the start of an .npy to be sure of holding its header.
inline constexpr uint64_t kNpyHeadBytes = kMaxNpyHeaderBytes + 12;

struct NpyHeader {
  StoredType dtype;
  std::vector<int64_t> dims;
  uint64_t data_offset = 0;  // where the data starts
  uint64_t data_bytes = 0;   // element count x item size
};

// Parses the header at the start of an array of `total_bytes` (`head` holds
// at least its first bytes, up to kNpyHeadBytes). The error says what is
// wrong, without naming the file (the caller does).
absl::StatusOr<NpyHeader> ParseNpyHeader(std::string_view head, uint64_t total_bytes);

// Element count x item size, or an error when it overflows 2^62.
absl::StatusOr<uint64_t> DataBytes(const std::vector<int64_t>& dims, int item_bytes);

}  // namespace neuron::tensorfile

#endif  // NEURON_LIB_TENSORFILE_NPY_HEADER_H_
