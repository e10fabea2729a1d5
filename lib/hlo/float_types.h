// Conversions between double and the bit patterns of the narrow floating
// types a Literal stores raw (f16, bf16, the f8/f6/f4 families), plus f32 and
// f64. Rounding is to nearest, ties to even, as XLA's converts do.
#ifndef NEURON_LIB_HLO_FLOAT_TYPES_H_
#define NEURON_LIB_HLO_FLOAT_TYPES_H_

#include <cstdint>

#include "lib/hlo/shape.h"

namespace neuron::hlo {

// Bits of `value` in floating type `type` (low BitWidth(type) bits used).
// Out-of-range values become inf where the type has one, NaN where it has
// NaN but no inf, and the largest finite value otherwise.
uint64_t EncodeFloat(ElementType type, double value);

// The value the bits stand for in floating type `type`.
double DecodeFloat(ElementType type, uint64_t bits);

// How a narrow format spends its top exponent code on inf/NaN.
enum class FloatSpecial {
  kIeee,  // all-ones exponent: inf (mantissa 0) or NaN
  kFn,    // no inf; all-ones exponent and mantissa is NaN
  kFnuz,  // no inf, no -0; the pattern "sign only" is NaN
  kNone,  // neither inf nor NaN (f4/f6)
  kE8M0,  // unsigned powers of two; all ones is NaN
};

// The layout of a narrow floating type (f16, bf16 and the f8/f6/f4
// families): exponent and mantissa bits, exponent bias, specials.
struct FloatFormat {
  int ebits;
  int mbits;
  int bias;
  FloatSpecial special;
};

// False for f32, f64 and non-float types.
bool FloatFormatOf(ElementType type, FloatFormat* format);

}  // namespace neuron::hlo

#endif  // NEURON_LIB_HLO_FLOAT_TYPES_H_
