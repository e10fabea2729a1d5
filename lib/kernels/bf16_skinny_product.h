// y = x . W for a few f32 rows x and a bf16 matrix W read as stored: the
// products of LLM decoding (one token, or a short prompt), where every
// weight is read once. Each weight is widened in registers (AVX2) and the output columns
// are split over the threads, so each streams its own part of W; the
// scalar loop this replaces reached about a tenth of the memory's speed.
#ifndef NEURON_LIB_KERNELS_BF16_SKINNY_PRODUCT_H_
#define NEURON_LIB_KERNELS_BF16_SKINNY_PRODUCT_H_

#include <cstdint>

namespace neuron::kernels {

// Rows up to which the product reads W once for all of them.
inline constexpr int64_t kBf16SkinnyRows = 16;

// y[r, j] = sum_i x[r, i] * W(i, j) for r < m, j < n, i < k; x and y row
// major. W(i, j) is w[j * k + i] when `w_rows_are_outputs` (W stored
// transposed, [n, k]) and w[i * n + j] otherwise ([k, n]). Sums in f32.
void Bf16SkinnyProduct(const float* x, int64_t m, const uint16_t* w, int64_t k, int64_t n,
                       bool w_rows_are_outputs, float* y, int threads);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_BF16_SKINNY_PRODUCT_H_
