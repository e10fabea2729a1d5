// Element-type dispatch for the kernels: every array type is computed in one
// of three domains (f32 for f32 and the narrow floats, f64 for f64, int64 for
// integers and pred) and converted from/to its storage bytes in bulk.
// Narrow floats round to nearest even; stochastic rounding is available for
// conversions into them.
#ifndef NEURON_LIB_KERNELS_ELEMENT_CONVERT_H_
#define NEURON_LIB_KERNELS_ELEMENT_CONVERT_H_

#include <complex>
#include <cstdint>

#include "lib/hlo/shape.h"

namespace neuron::kernels {

using hlo::ElementType;

enum class Domain : uint8_t { kF32, kF64, kI64, kC64, kC128 };

// Bytes one lane of a domain takes (complex: real and imaginary parts).
int DomainBytes(Domain d);
inline bool IsComplexDomain(Domain d) { return d == Domain::kC64 || d == Domain::kC128; }

// The domain a type computes in; kI64 for pred and integers; complex types
// compute as std::complex<float/double>.
Domain DomainOf(ElementType type);
// True for the types the kernels can hold (arrays, complex included).
bool IsSupportedElementType(ElementType type);
// Narrow floats: computed in f32 but rounded to the type after every op.
bool IsNarrowFloat(ElementType type);

// Storage -> domain array (float*, double* or int64_t* per DomainOf(type)).
void LoadToDomain(ElementType type, const uint8_t* src, int64_t n, void* dst);
// Domain array -> storage; narrow floats round to nearest even, integers
// wrap to the type's width, pred stores value != 0.
void StoreFromDomain(ElementType type, const void* src, int64_t n, uint8_t* dst);

// Floats of 8 bits or fewer (the f8 family but f8e8m0fnu, f6, f4): every
// value is a normal bf16 (or zero), so their products can run on the bf16
// matmul.
bool IsByteFloat(ElementType type);
// Their values as bf16 bits, exactly (IsByteFloat types only).
void ByteFloatToBf16(ElementType type, const uint8_t* src, int64_t n, uint16_t* dst);

// Rounds f32 values to the nearest value of narrow float `type` in place.
void QuantizeF32(ElementType type, float* values, int64_t n);
// Same, reading from src (may equal dst): one pass instead of copy + round.
void QuantizeF32(ElementType type, const float* src, int64_t n, float* dst);
// Same with stochastic rounding: rounds up with probability equal to the
// fraction of the way to the next value. Random bits come from a hash of
// (seed, salt, first_index + i), so results are reproducible and
// independent of threading.
void QuantizeF32Stochastic(ElementType type, float* values, int64_t n,
                           uint64_t seed, uint64_t salt, int64_t first_index);

// Wraps an integer to the width and signedness of `type` (pred -> 0/1).
int64_t WrapInt(ElementType type, int64_t value);

// Single-element access for the general (non-bulk) kernels.
double LoadDouble(ElementType type, const uint8_t* base, int64_t index);
void StoreDouble(ElementType type, uint8_t* base, int64_t index, double value);
// Any type as a complex number (real types: imaginary part 0), and back
// (real types keep the real part).
std::complex<double> LoadComplex(ElementType type, const uint8_t* base, int64_t index);
void StoreComplex(ElementType type, uint8_t* base, int64_t index, std::complex<double> value);
int64_t LoadInt(ElementType type, const uint8_t* base, int64_t index);
void StoreInt(ElementType type, uint8_t* base, int64_t index, int64_t value);

// bf16 helpers used on hot paths.
inline float Bf16ToF32(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
inline uint16_t F32ToBf16(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_ELEMENT_CONVERT_H_
