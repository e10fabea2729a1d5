#include "lib/kernels/float_sums.h"

#include <immintrin.h>

namespace neuron::kernels {

double SumF32InDouble(const float* p, int64_t n) {
  __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm_loadu_ps(p + i)));
    s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm_loadu_ps(p + i + 4)));
    s2 = _mm256_add_pd(s2, _mm256_cvtps_pd(_mm_loadu_ps(p + i + 8)));
    s3 = _mm256_add_pd(s3, _mm256_cvtps_pd(_mm_loadu_ps(p + i + 12)));
  }
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, _mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3)));
  double sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  for (; i < n; ++i) sum += p[i];
  return sum;
}

}  // namespace neuron::kernels
