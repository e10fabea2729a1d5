// The executor's view of one array value while it runs: element type,
// dims and a data pointer that steps read at run time (parameters and
// aliases such as reshape or get-tuple-element rebind it per execution).
#ifndef NEURON_LIB_KERNELS_BUFFER_H_
#define NEURON_LIB_KERNELS_BUFFER_H_

#include <cstdint>
#include <vector>

#include "lib/hlo/shape.h"

namespace neuron::kernels {

struct Buf {
  hlo::ElementType type = hlo::ElementType::kInvalid;
  std::vector<int64_t> dims;
  int64_t count = 0;   // elements
  int64_t bytes = 0;   // count * StorageBytes(type)
  int elem_size = 0;   // StorageBytes(type)
  uint8_t* data = nullptr;
  // What the pointer refers to: memory bound per run (parameters,
  // aliases), storage this buffer's producer writes, or a constant.
  enum class Role : uint8_t { kBound, kOwned, kConstant };
  Role role = Role::kBound;
  // For a parameter: its contents' version from the runtime, the same
  // number only while the bytes are unchanged (0: unknown). Kernels may
  // keep work derived from contents they saw at a version (oneDNN's
  // reordered convolution weights).
  uint64_t version = 0;
  // Whether the contents hold NaN/Inf, when the producer tracked it while
  // the data was in cache (-1: unknown, scan to find out).
  int8_t nonfinite = -1;

  static Buf Of(hlo::ElementType type, std::vector<int64_t> dims) {
    Buf b;
    b.type = type;
    b.dims = std::move(dims);
    b.count = 1;
    for (int64_t d : b.dims) b.count *= d;
    b.elem_size = hlo::StorageBytes(type);
    b.bytes = b.count * b.elem_size;
    return b;
  }
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
};

// Row-major strides (in elements) of dims.
inline std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * dims[i + 1];
  return s;
}

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_BUFFER_H_
