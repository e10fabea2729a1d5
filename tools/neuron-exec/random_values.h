// Uniform 32-bit words (random_words) turned into the values of
// each element type, in bulk: written over 8-lane vectors so one pass over a
// chunk is AVX2 code, with no per-element dispatch.
#ifndef NEURON_TOOLS_NEURON_EXEC_RANDOM_VALUES_H_
#define NEURON_TOOLS_NEURON_EXEC_RANDOM_VALUES_H_

#include <cstdint>

#include "lib/hlo/shape.h"

namespace neuron::exec_tool {

// One word each: the top 24 bits as a signed integer times 2^-23, so the
// values are the multiples of 2^-23 in [-1, 1), each equally likely.
void WordsToUnitF32(const uint32_t* words, float* out, int64_t n);

// Two words each: the first's top 27 bits then the second's top 26, as a
// signed integer times 2^-52: the multiples of 2^-52 in [-1, 1).
void WordsToUnitF64(const uint32_t* words, double* out, int64_t n);

// One word each: integers in [0, 10) (the top 16 bits times 10, over 2^16),
// stored in `bytes` (1, 2, 4 or 8) little-endian bytes.
void WordsToDigits(const uint32_t* words, void* out, int bytes, int64_t n);

// One word each: 0 or 1 (the top bit), one byte each.
void WordsToBits(const uint32_t* words, uint8_t* out, int64_t n);

// Whether RoundUnitF32 handles `type`: bf16, f16, f8e4m3fn, f8e5m2.
bool HasFastUnitRounding(hlo::ElementType type);

// f32 values in [-1, 1] rounded to nearest, ties to even, as the bits of
// `type` (2 bytes for bf16/f16, 1 for the f8 types): the same bits
// hlo::EncodeFloat gives, for that range only (no overflow or NaN handling).
void RoundUnitF32(hlo::ElementType type, const float* in, void* out, int64_t n);

// WordsToUnitF32 and RoundUnitF32 in one pass, without the f32 in memory.
void WordsToUnitNarrow(hlo::ElementType type, const uint32_t* words, void* out, int64_t n);

}  // namespace neuron::exec_tool

#endif  // NEURON_TOOLS_NEURON_EXEC_RANDOM_VALUES_H_
