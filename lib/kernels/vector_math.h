// Vectorized (AVX2 + FMA) float transcendentals for the elementwise
// interpreter: libm's scalar expf/tanhf/logf would dominate a fused chain.
// Cephes-style range reduction and polynomials, within ~2 ulp of the
// correctly rounded result; NaN and infinities behave as in libm.
#ifndef NEURON_LIB_KERNELS_VECTOR_MATH_H_
#define NEURON_LIB_KERNELS_VECTOR_MATH_H_

#include <cstdint>

namespace neuron::kernels {

void VecExp(const float* a, float* r, int64_t n);
void VecTanh(const float* a, float* r, int64_t n);
void VecLogistic(const float* a, float* r, int64_t n);
void VecLog(const float* a, float* r, int64_t n);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_VECTOR_MATH_H_
