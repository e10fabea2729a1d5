// bf16 and fp16 matrix products on oneDNN's low-precision matmul, which
// reads the 16-bit operands as they are and accumulates in f32 (the
// compiler's mixed-precision accumulation). Used only where the CPU has
// native instructions for the type (AVX512_BF16 / AMX-BF16, AVX512_FP16):
// elsewhere oneDNN would emulate them, and widening to f32 for sgemm (the
// caller's fallback) is at least as fast.
#ifndef NEURON_LIB_KERNELS_LOW_PRECISION_GEMM_H_
#define NEURON_LIB_KERNELS_LOW_PRECISION_GEMM_H_

#include <cstdint>

#include "lib/hlo/shape.h"

namespace neuron::kernels {

// True when products with `type` operands (bf16 or f16) may go to
// LowPrecisionGemm: oneDNN is installed and the CPU computes the type
// natively. A product can still be refused (returns false) for its shape.
bool LowPrecisionGemmAvailable(hlo::ElementType type);

// For i < batch: C[i] (m x n, row-major) = op(A[i]) * op(B[i]), where A[i]
// is m x k (k x m when ta) and B[i] is k x n (n x k when tb), each batch
// entry contiguous; A and B hold `type`, C holds out_type (f32 or `type`,
// rounded once from the f32 sum). Returns false, leaving C untouched, when
// oneDNN cannot do it; the caller then widens the operands and uses Sgemm.
bool LowPrecisionGemm(hlo::ElementType type, hlo::ElementType out_type, int64_t batch,
                      int64_t m, int64_t n, int64_t k, bool ta, const void* a, bool tb,
                      const void* b, void* c);

// Products LowPrecisionGemm has run on oneDNN so far (tests: did the fast
// path run?).
int64_t LowPrecisionGemmProducts();

// Tests: false turns the oneDNN path off, so the fallback can be compared
// with it; true restores it.
void SetLowPrecisionGemmEnabled(bool enabled);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_LOW_PRECISION_GEMM_H_
