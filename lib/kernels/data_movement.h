// Kernels that move elements without arithmetic: they work on the storage
// bytes of any element type. Dims are row-major; index operands (for
// dynamic slices) are read as integers of their own type and clamped as XLA
// does.
#ifndef NEURON_LIB_KERNELS_DATA_MOVEMENT_H_
#define NEURON_LIB_KERNELS_DATA_MOVEMENT_H_

#include <cstdint>
#include <vector>

#include "lib/hlo/instruction.h"
#include "lib/kernels/buffer.h"

namespace neuron::kernels {

// out[...] = in[mapped]: `dims` gives, per operand dim, the output dim.
void Broadcast(const Buf& in, const std::vector<int64_t>& dims, Buf& out);
// out dim i = in dim perm[i]; blocked so both sides stay in cache.
void Transpose(const Buf& in, const std::vector<int64_t>& perm, Buf& out);
// Whether perm leaves every dim where it is (a Transpose that copies).
inline bool IsIdentityPermutation(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}
void Slice(const Buf& in, const std::vector<hlo::SliceDim>& slice, Buf& out);
// Start indices: one scalar buffer per dim; clamped to stay in bounds.
void DynamicSlice(const Buf& in, const std::vector<const Buf*>& starts, Buf& out);
// out = operand with `update` written at the clamped start.
void DynamicUpdateSlice(const Buf& operand, const Buf& update,
                        const std::vector<const Buf*>& starts, Buf& out);
void Concatenate(const std::vector<const Buf*>& ins, int64_t dim, Buf& out);
// Low/high may be negative (cropping); interior pads between elements.
void Pad(const Buf& in, const Buf& value, const std::vector<hlo::PaddingDim>& pad, Buf& out);
void Reverse(const Buf& in, const std::vector<int64_t>& dims, Buf& out);
void Iota(int64_t dimension, Buf& out);
// Copies the sub-box [start, start + out.dims) of `in` into `out` (no clamping).
void CopyBox(const Buf& in, const std::vector<int64_t>& start, Buf& out);

// Reads element 0 of an integer/any buffer as int64.
int64_t ScalarIndex(const Buf& b, int64_t i = 0);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_DATA_MOVEMENT_H_
