// y = x . W for a few f32 rows x and a matrix W of narrow floats read as
// stored (bf16, f16, f8e4m3fn, f8e5m2): the products of LLM decoding (one
// token, or a short prompt), where every weight is read once. Each weight
// is widened in registers (AVX2, F16C) and the output columns are split
// over the threads, so each streams its own part of W. fp8 weights are read
// as they are stored, so a weight-only fp8 checkpoint's product reads half
// the bytes of bf16 and is never widened into memory first. (bf16 rows
// against bf16 weights on CPUs with AVX512_BF16 take bf16_pair_product.h.)
#ifndef NEURON_LIB_KERNELS_SKINNY_PRODUCT_H_
#define NEURON_LIB_KERNELS_SKINNY_PRODUCT_H_

#include <cstdint>

#include "lib/hlo/shape.h"

namespace neuron::kernels {

// Rows up to which the product reads W once for all of them.
inline constexpr int64_t kSkinnyRows = 16;
// Weights below which a second thread costs more than it saves.
inline constexpr int64_t kSkinnyParallelWeights = int64_t{1} << 16;

// The narrow weight types SkinnyProduct reads as stored (it reads f32 too).
bool IsSkinnyWeightType(hlo::ElementType type);

// y[r * ldy + j] = sum_i x[r * k + i] * W(i, j) for r < m, j < n, i < k.
// W(i, j) is element j * ldw + i of `w` when `w_rows_are_outputs` (W
// stored transposed, [n, k]) and i * ldw + j otherwise ([k, n]); `w_type`
// is one IsSkinnyWeightType accepts, or f32. Sums in f32; the outputs are
// split over up to `threads` threads.
void SkinnyProduct(const float* x, int64_t m, const void* w, hlo::ElementType w_type, int64_t k, int64_t n,
                   bool w_rows_are_outputs, int64_t ldw, float* y, int64_t ldy, int threads);

// The same for a dense W and y (ldw k or n, ldy n).
inline void SkinnyProduct(const float* x, int64_t m, const void* w, hlo::ElementType w_type, int64_t k, int64_t n,
                          bool w_rows_are_outputs, float* y, int threads) {
  SkinnyProduct(x, m, w, w_type, k, n, w_rows_are_outputs, w_rows_are_outputs ? k : n, y, n, threads);
}

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_SKINNY_PRODUCT_H_
