// Sums of f32 rows accumulated in double, vectorized (AVX2, the build's
// baseline): the rows of an RMS norm's mean of squares, of a batch norm's
// statistics, of any f32 add-reduction over contiguous elements.
#ifndef NEURON_LIB_KERNELS_FLOAT_SUMS_H_
#define NEURON_LIB_KERNELS_FLOAT_SUMS_H_

#include <cstdint>

namespace neuron::kernels {

// p[0] + ... + p[n - 1] in double: four vectors of four partial sums, then
// the tail in order.
double SumF32InDouble(const float* p, int64_t n);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_FLOAT_SUMS_H_
