// A whole .npy array read into memory (npy::Array: descriptor, shape,
// bytes), for small files such as a test's reference outputs. The header
// goes through the project's one .npy parser (ParseNpyHeader): the data
// must have exactly the size the header implies. Large arrays are read
// through TensorFile instead, straight into their destination.
#ifndef NEURON_LIB_TENSORFILE_NPY_ARRAY_H_
#define NEURON_LIB_TENSORFILE_NPY_ARRAY_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "lib/support/npy.h"

namespace neuron::tensorfile {

// Parses .npy bytes; errors start with `display` (a file name).
absl::StatusOr<npy::Array> ParseNpyArray(std::string_view bytes, std::string_view display);
// Reads a file ("-" reads standard input).
absl::StatusOr<npy::Array> ReadNpyArray(const std::string& path);

}  // namespace neuron::tensorfile

#endif  // NEURON_LIB_TENSORFILE_NPY_ARRAY_H_
