// dot of a few rows (one token, a short prompt: at most kSkinnyRows) and a
// matrix of narrow floats (bf16, f16, fp8), on either side of the dot: an
// LLM's projections, its logits, and einsums that name the weights first
// (gemma's kv_einsum, "BSD,CKDH->CBSKH"). The matrix is read where it lies,
// in its stored type, by SkinnyProduct, whenever its contracting dims are
// adjacent (free dims before them become blocks of [k, n] or rows of
// [n, k]); only the few rows are permuted and widened per call.
#ifndef NEURON_LIB_KERNELS_SKINNY_DOT_H_
#define NEURON_LIB_KERNELS_SKINNY_DOT_H_

#include <memory>

#include "lib/hlo/instruction.h"
#include "lib/kernels/dot_conv.h"

namespace neuron::kernels {

// The plan for such a dot, or null when it is not one (then the general
// dot runs it). Never null where the CPU has no low-precision matmul for
// the operands and one operand is a narrow-float matrix against a few rows.
std::unique_ptr<DotKernel> PlanSkinnyDot(const hlo::Shape& lhs, const hlo::Shape& rhs, const hlo::DotDims& dims,
                                         const hlo::Shape& out);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_SKINNY_DOT_H_
