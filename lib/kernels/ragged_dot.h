// ragged-dot (XLA's grouped matmul), computed in double: lhs's ragged
// dimension is cut into consecutive groups by group_sizes, and each group
// is multiplied with its own rhs matrix (ragged non-contracting: rows past
// the last group are zero), or contributes to its own result slice (ragged
// contracting), or the op is the plain dot (ragged batch). Each group's
// rows or contracting positions are packed densely for one f64 GEMM.
#ifndef NEURON_LIB_KERNELS_RAGGED_DOT_H_
#define NEURON_LIB_KERNELS_RAGGED_DOT_H_

#include "lib/hlo/instruction.h"
#include "lib/kernels/buffer.h"

namespace neuron::kernels {

// dims holds the dot and ragged dimension numbers; the shapes are the
// verified ones (hlo::InferShape's rule for ragged-dot).
void RaggedDot(const Buf& lhs, const Buf& rhs, const Buf& group_sizes, const hlo::DotDims& dims, Buf& out);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_RAGGED_DOT_H_
