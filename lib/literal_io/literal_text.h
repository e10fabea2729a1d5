// Tensors written on a command line, as neuron-exec takes and prints them
// (the syntax of IREE's iree-run-module, which users know):
//   2x3xf32=1,2,3,4,5,6      dims x-separated, then the dtype, then values
//   2x3xf32=[1 2 3][4 5 6]   brackets and spaces work too
//   f32=3.5                  a scalar
//   4xf32=0                  one value fills the whole tensor
// Host tensors are hlo::Literal (row-major, narrow types as raw bits).
#ifndef NEURON_LIB_LITERAL_IO_LITERAL_TEXT_H_
#define NEURON_LIB_LITERAL_IO_LITERAL_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "lib/hlo/literal.h"
#include "lib/hlo/shape.h"

namespace neuron::literal_io {

// True when `text` starts like an inline tensor ("2x3xf32=", "f32=").
bool LooksLikeInlineTensor(std::string_view text);

// Parses an inline tensor; errors say what is wrong (unknown dtype, wrong
// number of values, a value that is not a number).
absl::StatusOr<hlo::Literal> ParseInlineTensor(std::string_view text);

// "2x3xf32", "f32" for a scalar.
std::string FormatTensorType(const hlo::Shape& shape);

struct PrintLimits {
  int64_t max_elements = 1024;  // more are cut with "..."
};

// "2x4xf32=[0 1 2 3][4 5 6 7]"; scalars "f32=3.5".
std::string FormatTensor(const hlo::Literal& value, const PrintLimits& limits = {});

}  // namespace neuron::literal_io

#endif  // NEURON_LIB_LITERAL_IO_LITERAL_TEXT_H_
