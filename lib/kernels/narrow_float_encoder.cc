#include "lib/kernels/narrow_float_encoder.h"

#include <immintrin.h>

#include <array>
#include <cstring>
#include <mutex>

#include "lib/hlo/float_types.h"

namespace neuron::kernels {
namespace {

using hlo::ElementType;
using hlo::FloatFormat;
using hlo::FloatSpecial;

// What rounding into one format needs, derived once from its layout.
struct Encoder {
  bool usable = false;
  int mbits = 0;
  int min_exp = 0;          // exponent of the smallest normal value
  uint32_t sign_bit = 0;
  uint32_t max_code = 0;    // magnitude bits of the largest finite value
  uint32_t nan_code = 0;    // what NaN becomes
  uint32_t overflow = 0;    // what a too-large magnitude becomes
  bool overflow_signed = false;  // ... with the value's sign
  bool fnuz = false;        // no negative zero
};

Encoder Derive(ElementType type) {
  Encoder e;
  FloatFormat f;
  if (!hlo::FloatFormatOf(type, &f) || f.special == FloatSpecial::kE8M0 ||
      f.ebits + f.mbits + 1 > 8)
    return e;
  const uint32_t emax = (1u << f.ebits) - 1, mmax = (1u << f.mbits) - 1;
  e.usable = true;
  e.mbits = f.mbits;
  e.min_exp = 1 - f.bias;
  e.sign_bit = 1u << (f.ebits + f.mbits);
  switch (f.special) {
    case FloatSpecial::kIeee:
      e.max_code = ((emax - 1) << f.mbits) | mmax;
      e.nan_code = (emax << f.mbits) | (1u << (f.mbits - 1));
      e.overflow = emax << f.mbits;  // inf
      e.overflow_signed = true;
      break;
    case FloatSpecial::kFn:
      e.max_code = (emax << f.mbits) | (mmax - 1);
      e.nan_code = e.overflow = (emax << f.mbits) | mmax;
      break;
    case FloatSpecial::kFnuz:
      e.max_code = (emax << f.mbits) | mmax;
      e.nan_code = e.overflow = e.sign_bit;
      e.fnuz = true;
      break;
    case FloatSpecial::kNone:  // saturates; NaN becomes +0
      e.max_code = (emax << f.mbits) | mmax;
      e.overflow = e.max_code;
      e.overflow_signed = true;
      break;
    case FloatSpecial::kE8M0:
      break;
  }
  return e;
}

const Encoder& EncoderFor(ElementType type) {
  static std::once_flag once;
  static std::array<Encoder, 64>* table = nullptr;
  std::call_once(once, [] {
    table = new std::array<Encoder, 64>();
    for (int t = 0; t < 64; ++t)
      if (hlo::IsKnownElementType(t)) (*table)[t] = Derive(static_cast<ElementType>(t));
  });
  static const Encoder none;
  const int t = static_cast<int>(type);
  return t >= 0 && t < 64 ? (*table)[t] : none;
}

inline uint8_t EncodeOne(const Encoder& e, float value) {
  uint32_t u;
  std::memcpy(&u, &value, 4);
  const uint32_t sign = (u >> 31) != 0 ? e.sign_bit : 0;
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint8_t>(e.nan_code);
  uint32_t mag = 0;
  if (a == 0x7f800000u) {
    mag = e.max_code + 1;  // inf: the overflow case
  } else if (a >= 0x00800000u) {
    // f32 subnormals lie far below half the smallest value of every format
    // here, so they (and zero) round to zero.
    const int exp = static_cast<int>(a >> 23) - 127;
    const bool subnormal = exp < e.min_exp;
    // The grid spacing at this magnitude is 2^(max(exp, min_exp) - mbits);
    // the 24-bit significand shifted right by `shift` counts grid steps.
    const int shift = 23 - e.mbits + (subnormal ? e.min_exp - exp : 0);
    const uint32_t sig = (a & 0x7fffffu) | 0x800000u;
    uint32_t steps = 0;
    if (shift < 25) {
      steps = sig >> shift;
      const uint32_t rest = sig & ((1u << shift) - 1), half = 1u << (shift - 1);
      steps += (rest > half) | ((rest == half) & steps & 1u);
    }
    // Subnormal steps are the code itself (2^mbits steps is the smallest
    // normal's code); normal ones carry into the exponent when they round
    // up to 2^(mbits+1).
    mag = subnormal ? steps
                    : (static_cast<uint32_t>(exp - e.min_exp + 1) << e.mbits) + steps -
                          (1u << e.mbits);
  }
  if (mag > e.max_code) return static_cast<uint8_t>(e.overflow | (e.overflow_signed ? sign : 0));
  if (e.fnuz && mag == 0) return 0;
  return static_cast<uint8_t>(sign | mag);
}

// EncodeOne on 8 lanes (AVX2, the build's baseline): the same steps, with
// the branches turned into masks.
inline void EncodeEight(const Encoder& e, const float* src, uint8_t* dst) {
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
  const __m256i sign = _mm256_and_si256(_mm256_srai_epi32(u, 31), _mm256_set1_epi32(e.sign_bit));
  const __m256i a = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
  const __m256i is_nan = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7f800000));
  const __m256i is_inf = _mm256_cmpeq_epi32(a, _mm256_set1_epi32(0x7f800000));
  const __m256i tiny = _mm256_cmpgt_epi32(_mm256_set1_epi32(0x00800000), a);
  const __m256i exp = _mm256_sub_epi32(_mm256_srli_epi32(a, 23), _mm256_set1_epi32(127));
  const __m256i min_exp = _mm256_set1_epi32(e.min_exp);
  const __m256i subnormal = _mm256_cmpgt_epi32(min_exp, exp);
  const __m256i below = _mm256_max_epi32(_mm256_sub_epi32(min_exp, exp), _mm256_setzero_si256());
  const __m256i shift = _mm256_min_epi32(
      _mm256_add_epi32(_mm256_set1_epi32(23 - e.mbits), below), _mm256_set1_epi32(31));
  const __m256i sig = _mm256_or_si256(_mm256_and_si256(a, _mm256_set1_epi32(0x7fffff)),
                                      _mm256_set1_epi32(0x800000));
  __m256i steps = _mm256_srlv_epi32(sig, shift);
  const __m256i rest = _mm256_and_si256(sig, _mm256_sub_epi32(_mm256_sllv_epi32(one, shift), one));
  const __m256i half = _mm256_sllv_epi32(one, _mm256_sub_epi32(shift, one));
  const __m256i tie_odd = _mm256_and_si256(_mm256_cmpeq_epi32(rest, half),
                                           _mm256_cmpeq_epi32(_mm256_and_si256(steps, one), one));
  const __m256i up = _mm256_or_si256(_mm256_cmpgt_epi32(rest, half), tie_odd);
  steps = _mm256_sub_epi32(steps, up);  // up is -1 where rounding up
  const __m256i normal = _mm256_sub_epi32(
      _mm256_add_epi32(_mm256_sllv_epi32(_mm256_add_epi32(_mm256_sub_epi32(exp, min_exp), one),
                                         _mm256_set1_epi32(e.mbits)),
                       steps),
      _mm256_set1_epi32(1 << e.mbits));
  __m256i mag = _mm256_blendv_epi8(normal, steps, subnormal);
  mag = _mm256_andnot_si256(tiny, mag);
  const __m256i overflow = _mm256_or_si256(is_inf, _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(e.max_code)));
  __m256i r = _mm256_or_si256(sign, mag);
  if (e.fnuz) r = _mm256_andnot_si256(_mm256_cmpeq_epi32(mag, _mm256_setzero_si256()), r);
  __m256i over = _mm256_set1_epi32(e.overflow);
  if (e.overflow_signed) over = _mm256_or_si256(over, sign);
  r = _mm256_blendv_epi8(r, over, overflow);
  r = _mm256_blendv_epi8(r, _mm256_set1_epi32(e.nan_code), is_nan);
  // The low byte of each lane, in order, into 8 bytes.
  const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                        0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(r, pick),
                                                    _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), _mm256_castsi256_si128(bytes));
}

}  // namespace

bool HasNarrowFloatEncoder(ElementType type) { return EncoderFor(type).usable; }

void EncodeNarrowFloat(ElementType type, const float* src, int64_t n, uint8_t* dst) {
  const Encoder& e = EncoderFor(type);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) EncodeEight(e, src + i, dst + i);
  for (; i < n; ++i) dst[i] = EncodeOne(e, src[i]);
}

uint8_t EncodeNarrowFloat(ElementType type, float value) {
  return EncodeOne(EncoderFor(type), value);
}

}  // namespace neuron::kernels
