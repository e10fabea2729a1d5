// .npy files as host tensors, for neuron-exec and libnrt (input dumps):
// reading inputs and expected values into host
// tensors (hlo::Literal), converting them to a model's element type, and
// writing results. Types NumPy lacks (bf16, fp8) are written as float32,
// which holds their values exactly, so numpy.load gives numbers.
#ifndef NEURON_LIB_LITERAL_IO_NPY_LITERAL_H_
#define NEURON_LIB_LITERAL_IO_NPY_LITERAL_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/hlo/literal.h"

namespace neuron::literal_io {

// Parses .npy bytes (little-endian or byte-order-free types, C order).
// `display` names the file in errors.
absl::StatusOr<hlo::Literal> ParseNpyTensor(std::string_view bytes, std::string_view display);
absl::StatusOr<hlo::Literal> ReadNpyFile(const std::string& path);

// An .npy file given as an input, its header read: the data is read later,
// straight into the tensor that takes it (ReadNpyInto).
struct NpyFileInput {
  std::string path;
  hlo::ElementType type = hlo::ElementType::kInvalid;
  std::vector<int64_t> dims;
  uint64_t data_offset = 0;
};
// Regular files only (FailedPrecondition for a pipe or stdin, which are
// read whole with ReadNpyFile).
absl::StatusOr<NpyFileInput> OpenNpyFile(const std::string& path);
// The file's values as `type` into `out` (`bytes` of them): read in place
// when the file holds that type (or its raw bits), else converted through
// one host copy.
absl::Status ReadNpyInto(const NpyFileInput& input, hlo::ElementType type, uint8_t* out, uint64_t bytes);

// The element type a tensor of `type` is written as (f32 for bf16/fp8...).
hlo::ElementType NpyStorageType(hlo::ElementType type);
// The .npy bytes of a tensor (converted per NpyStorageType).
std::string NpyBytes(const hlo::Literal& value);
// Writes the .npy to `path` ("-" = stdout); errors name the path.
absl::Status WriteNpyFile(const std::string& path, const hlo::Literal& value);

// The value converted to `type` (floats round to nearest even, integers
// wrap). A uint16 array given for a bf16/f16 tensor is taken as raw bits,
// and a uint8 array for an fp8 tensor likewise, as the compiler stores them.
hlo::Literal ConvertTensor(const hlo::Literal& value, hlo::ElementType type);

}  // namespace neuron::literal_io

#endif  // NEURON_LIB_LITERAL_IO_NPY_LITERAL_H_
