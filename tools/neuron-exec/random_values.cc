#include "tools/neuron-exec/random_values.h"

#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace neuron::exec_tool {
namespace {

using U32x8 = uint32_t __attribute__((vector_size(32)));
using I32x8 = int32_t __attribute__((vector_size(32)));
using F32x8 = float __attribute__((vector_size(32)));

// Runs fn over n elements 8 at a time (one In each, out_per Outs each); the
// last partial group goes through a padded copy, so every element takes the
// same vector code.
template <typename In, typename Out, typename Fn>
void ForEach8(const In* in, Out* out, int64_t n, int out_per, Fn fn) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) fn(in + i, out + i * out_per);
  if (i == n) return;
  In in_pad[8] = {};
  Out out_pad[8 * 8];
  const int64_t rest = n - i;
  std::memcpy(in_pad, in + i, rest * sizeof(In));
  fn(in_pad, out_pad);
  std::memcpy(out + i * out_per, out_pad, rest * out_per * sizeof(Out));
}

// The low 16 / 8 bits of each lane, stored packed. GCC turns a narrowing
// __builtin_convertvector into lane-by-lane scalar code, so AVX2's
// saturating packs do it (every lane here already fits).
void StoreNarrow16(void* p, U32x8 v) {
#if defined(__AVX2__)
  const __m256i x = reinterpret_cast<__m256i>(v);
  _mm_storeu_si128(static_cast<__m128i*>(p),
                   _mm_packus_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1)));
#else
  for (int i = 0; i < 8; ++i) {
    const uint16_t lane = static_cast<uint16_t>(v[i]);
    std::memcpy(static_cast<uint8_t*>(p) + 2 * i, &lane, 2);
  }
#endif
}

void StoreNarrow8(void* p, U32x8 v) {
#if defined(__AVX2__)
  const __m256i x = reinterpret_cast<__m256i>(v);
  const __m128i words = _mm_packus_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
  _mm_storel_epi64(static_cast<__m128i*>(p), _mm_packus_epi16(words, words));
#else
  for (int i = 0; i < 8; ++i) static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v[i]);
#endif
}

template <typename V>
V Load(const void* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename V>
void Store(void* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

// Round-to-nearest-even of f32 bits `b` (finite, |x| <= 1) to a float format
// with MBITS mantissa bits and exponent bias BIAS (sign at bit EBITS+MBITS).
// Normal results round the bits directly (a carry into the exponent is the
// right answer); below the smallest normal, adding 2^k whose ulp is the
// smallest subnormal lets the FPU round, and the low bits are the count.
template <int EBITS, int MBITS, int BIAS>
U32x8 RoundBits(U32x8 b) {
  constexpr int kShift = 23 - MBITS;
  if constexpr (BIAS == 127) {
    // bf16 keeps f32's exponent: round the whole pattern, sign included
    // (|x| <= 1 cannot carry into it).
    return (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
  } else {
    const U32x8 a = b & 0x7fffffffu;
    const U32x8 sign = (b >> 31) << (EBITS + MBITS);
    const U32x8 normal =
        (a + static_cast<uint32_t>(((1u << (kShift - 1)) - 1) - ((127u - BIAS) << 23)) +
         ((a >> kShift) & 1u)) >>
        kShift;
    // 2^(23 + 1 - BIAS - MBITS) has the smallest subnormal as its ulp.
    constexpr uint32_t kMagicBits = (127u + 24 - BIAS - MBITS) << 23;
    F32x8 magnitude, magic;
    std::memcpy(&magnitude, &a, sizeof a);
    const U32x8 magic_bits = U32x8{} + kMagicBits;
    std::memcpy(&magic, &magic_bits, sizeof magic);
    const F32x8 sum = magnitude + magic;
    U32x8 sub;
    std::memcpy(&sub, &sum, sizeof sub);
    sub -= kMagicBits;
    const I32x8 min_normal = I32x8{} + static_cast<int32_t>((128 - BIAS) << 23);
    // Signed compare: a has no sign bit, and AVX2 has no unsigned one.
    return sign | (reinterpret_cast<const I32x8&>(a) < min_normal ? sub : normal);
  }
}

// The f32 a word stands for, as bits: its top 24 bits, signed, times 2^-23.
U32x8 UnitF32Bits(U32x8 word) {
  const I32x8 top = reinterpret_cast<const I32x8&>(word) >> 8;  // [-2^23, 2^23)
  const F32x8 f = __builtin_convertvector(top, F32x8) * (1.0f / 8388608.0f);
  U32x8 bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

template <int EBITS, int MBITS, int BIAS, typename Out, bool kFromWords>
void RoundAll(const void* in, Out* out, int64_t n) {
  ForEach8(static_cast<const uint32_t*>(in), out, n, 1, [](const uint32_t* src, Out* dst) {
    U32x8 b = Load<U32x8>(src);
    if constexpr (kFromWords) b = UnitF32Bits(b);
    const U32x8 r = RoundBits<EBITS, MBITS, BIAS>(b);
    if constexpr (sizeof(Out) == 2) {
      StoreNarrow16(dst, r);
    } else {
      StoreNarrow8(dst, r);
    }
  });
}

template <bool kFromWords>
void RoundUnit(hlo::ElementType type, const void* in, void* out, int64_t n) {
  switch (type) {
    case hlo::ElementType::kBF16:
      RoundAll<8, 7, 127, uint16_t, kFromWords>(in, static_cast<uint16_t*>(out), n);
      return;
    case hlo::ElementType::kF16:
      RoundAll<5, 10, 15, uint16_t, kFromWords>(in, static_cast<uint16_t*>(out), n);
      return;
    case hlo::ElementType::kF8E4M3FN:
      RoundAll<4, 3, 7, uint8_t, kFromWords>(in, static_cast<uint8_t*>(out), n);
      return;
    case hlo::ElementType::kF8E5M2:
      RoundAll<5, 2, 15, uint8_t, kFromWords>(in, static_cast<uint8_t*>(out), n);
      return;
    default:
      return;
  }
}

}  // namespace

void WordsToUnitF32(const uint32_t* words, float* out, int64_t n) {
  ForEach8(words, out, n, 1,
           [](const uint32_t* src, float* dst) { Store(dst, UnitF32Bits(Load<U32x8>(src))); });
}

void WordsToUnitF64(const uint32_t* words, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t bits =
        (uint64_t{words[2 * i] >> 5} << 37) | (uint64_t{words[2 * i + 1] >> 6} << 11);
    out[i] = static_cast<double>(static_cast<int64_t>(bits) >> 11) * 0x1p-52;
  }
}

void WordsToDigits(const uint32_t* words, void* out, int bytes, int64_t n) {
  auto digits = [](const uint32_t* src) { return ((Load<U32x8>(src) >> 16) * 10u) >> 16; };
  uint8_t* o = static_cast<uint8_t*>(out);
  switch (bytes) {
    case 1:
      ForEach8(words, o, n, 1, [&](const uint32_t* s, uint8_t* d) { StoreNarrow8(d, digits(s)); });
      return;
    case 2:
      ForEach8(words, o, n, 2, [&](const uint32_t* s, uint8_t* d) { StoreNarrow16(d, digits(s)); });
      return;
    case 4:
      ForEach8(words, o, n, 4, [&](const uint32_t* s, uint8_t* d) { Store(d, digits(s)); });
      return;
    default:
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t v = ((words[i] >> 16) * 10u) >> 16;
        std::memcpy(o + 8 * i, &v, 8);
      }
  }
}

void WordsToBits(const uint32_t* words, uint8_t* out, int64_t n) {
  ForEach8(words, out, n, 1,
           [](const uint32_t* s, uint8_t* d) { StoreNarrow8(d, Load<U32x8>(s) >> 31); });
}

bool HasFastUnitRounding(hlo::ElementType type) {
  switch (type) {
    case hlo::ElementType::kBF16:
    case hlo::ElementType::kF16:
    case hlo::ElementType::kF8E4M3FN:
    case hlo::ElementType::kF8E5M2:
      return true;
    default:
      return false;
  }
}

void RoundUnitF32(hlo::ElementType type, const float* in, void* out, int64_t n) {
  RoundUnit<false>(type, in, out, n);
}

void WordsToUnitNarrow(hlo::ElementType type, const uint32_t* words, void* out, int64_t n) {
  RoundUnit<true>(type, words, out, n);
}

}  // namespace neuron::exec_tool
