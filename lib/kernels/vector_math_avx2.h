// The 8-lane (AVX2 + FMA) exp, tanh, log and lane sum behind vector_math.h, shared
// with the AVX2 tile runner (f32_tiles_avx2.cc) so that both give the same
// bits, as the AVX-512 runner's 16-lane copies do. Include only from
// translation units built for the baseline x86-64-v3: an inline function
// here compiled into an AVX-512 unit could be linked into every caller.
#ifndef NEURON_LIB_KERNELS_VECTOR_MATH_AVX2_H_
#define NEURON_LIB_KERNELS_VECTOR_MATH_AVX2_H_

#include <immintrin.h>

#include <cmath>

namespace neuron::kernels::vec8 {

// exp(x) for 8 lanes; x already finite-or-NaN handled by the caller.
inline __m256 Exp8(__m256 x) {
  const __m256 hi = _mm256_set1_ps(88.7228317f), lo = _mm256_set1_ps(-103.972084f);
  __m256 xc = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
  const __m256 log2e = _mm256_set1_ps(1.44269504088896341f);
  __m256 n = _mm256_round_ps(_mm256_mul_ps(xc, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), xc);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500E-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507E-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073E-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894E-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459E-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201E-1f));
  __m256 r2 = _mm256_mul_ps(r, r);
  __m256 y = _mm256_add_ps(_mm256_fmadd_ps(p, r2, r), _mm256_set1_ps(1.0f));
  // 2^n in two steps so n down to -150 (subnormal results) works.
  __m256i ni = _mm256_cvtps_epi32(n);
  __m256i n1 = _mm256_srai_epi32(ni, 1);
  __m256i n2 = _mm256_sub_epi32(ni, n1);
  __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, _mm256_set1_epi32(127)), 23));
  __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, _mm256_set1_epi32(127)), 23));
  y = _mm256_mul_ps(_mm256_mul_ps(y, s1), s2);
  // Overflow to +inf, NaN stays NaN.
  y = _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY), _mm256_cmp_ps(x, hi, _CMP_GT_OQ));
  y = _mm256_blendv_ps(y, _mm256_setzero_ps(), _mm256_cmp_ps(x, lo, _CMP_LT_OQ));
  return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

// tanh(x) = x * P(x^2) / Q(x^2) on [-9, 9] (beyond, tanh rounds to +-1 in
// f32). The coefficients are a relative-error minimax fit made for this
// file (about 6 ulp at worst); the AVX-512 runner uses the same ones.
inline __m256 Tanh8(__m256 x) {
  // max/min return their second operand when one is NaN: NaN flows through.
  __m256 xc = _mm256_min_ps(_mm256_set1_ps(9.0f), _mm256_max_ps(_mm256_set1_ps(-9.0f), x));
  __m256 z = _mm256_mul_ps(xc, xc);
  __m256 p = _mm256_set1_ps(-8.4927257678e-14f);
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(5.2795343750e-11f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-2.0228570064e-08f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.1155144545e-05f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(3.1040369963e-03f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.3084082726e-01f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(9.9999999349e-01f));
  __m256 q = _mm256_set1_ps(2.5462623338e-04f);
  q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(2.4495501013e-02f));
  q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(4.6417409862e-01f));
  q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(1.0f));
  __m256 y = _mm256_div_ps(_mm256_mul_ps(xc, p), q);
  return _mm256_min_ps(_mm256_set1_ps(1.0f), _mm256_max_ps(_mm256_set1_ps(-1.0f), y));
}

inline __m256 Log8(__m256 x) {
  // x = m * 2^e with m in [sqrt(1/2), sqrt(2)); log = e*ln2 + log(m).
  __m256i xi = _mm256_castps_si256(x);
  __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(xi, 23), _mm256_set1_epi32(127));
  __m256 m = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(xi, _mm256_set1_epi32(0x007fffff)),
                                                 _mm256_set1_epi32(0x3f800000)));
  __m256 ef = _mm256_cvtepi32_ps(e);
  __m256 big = _mm256_cmp_ps(m, _mm256_set1_ps(1.41421356f), _CMP_GT_OQ);
  m = _mm256_blendv_ps(m, _mm256_mul_ps(m, _mm256_set1_ps(0.5f)), big);
  ef = _mm256_add_ps(ef, _mm256_and_ps(big, _mm256_set1_ps(1.0f)));
  __m256 f = _mm256_sub_ps(m, _mm256_set1_ps(1.0f));
  __m256 p = _mm256_set1_ps(7.0376836292E-2f);
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(-1.1514610310E-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.1676998740E-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(-1.2420140846E-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.4249322787E-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(-1.6668057665E-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(2.0000714765E-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(-2.4999993993E-1f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(3.3333331174E-1f));
  __m256 f2 = _mm256_mul_ps(f, f);
  __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, f2), f);
  y = _mm256_fmadd_ps(ef, _mm256_set1_ps(-2.12194440e-4f), y);
  y = _mm256_fnmadd_ps(f2, _mm256_set1_ps(0.5f), y);
  y = _mm256_add_ps(f, y);
  y = _mm256_fmadd_ps(ef, _mm256_set1_ps(0.693359375f), y);
  return y;
}

// The sum of the 8 lanes.
inline float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

}  // namespace neuron::kernels::vec8

#endif  // NEURON_LIB_KERNELS_VECTOR_MATH_AVX2_H_
