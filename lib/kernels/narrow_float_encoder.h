// Rounding f32 into the float formats of 8 bits or fewer (the f8 family,
// f6, f4) with a few integer operations per value. hlo::EncodeFloat gives
// the same bits through frexp/ldexp in double, at about 25x the cost: f8
// models spent most of their time there, rounding every op's result.
#ifndef NEURON_LIB_KERNELS_NARROW_FLOAT_ENCODER_H_
#define NEURON_LIB_KERNELS_NARROW_FLOAT_ENCODER_H_

#include <cstdint>

#include "lib/hlo/shape.h"

namespace neuron::kernels {

// True for the types EncodeNarrowFloat handles: floats of 8 bits or fewer
// with a sign and a mantissa (not f8e8m0fnu).
bool HasNarrowFloatEncoder(hlo::ElementType type);

// dst[i] = the bits of src[i] in `type`, exactly as hlo::EncodeFloat:
// round to nearest, ties to even; overflow to inf, NaN or the largest
// finite value as the format has them. One byte per element.
void EncodeNarrowFloat(hlo::ElementType type, const float* src, int64_t n, uint8_t* dst);

// One value of the above.
uint8_t EncodeNarrowFloat(hlo::ElementType type, float value);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_NARROW_FLOAT_ENCODER_H_
