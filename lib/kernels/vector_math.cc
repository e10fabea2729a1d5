#include "lib/kernels/vector_math.h"

#include <immintrin.h>

#include <cmath>

#include "lib/kernels/vector_math_avx2.h"

namespace neuron::kernels {
namespace {

using vec8::Exp8;
using vec8::Log8;
using vec8::Tanh8;

template <typename V, typename S>
void Apply(const float* a, float* r, int64_t n, V vec, S scalar) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(r + i, vec(_mm256_loadu_ps(a + i)));
  for (; i < n; ++i) r[i] = scalar(a[i]);
}

}  // namespace

void VecExp(const float* a, float* r, int64_t n) {
  Apply(a, r, n, Exp8, [](float x) { return std::exp(x); });
}

void VecTanh(const float* a, float* r, int64_t n) {
  Apply(a, r, n, Tanh8, [](float x) { return std::tanh(x); });
}

void VecLogistic(const float* a, float* r, int64_t n) {
  Apply(a, r, n, [](__m256 x) {
    __m256 e = Exp8(_mm256_xor_ps(x, _mm256_set1_ps(-0.0f)));
    __m256 y = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
    return _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  }, [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
}

void VecLog(const float* a, float* r, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_loadu_ps(a + i);
    // Normal positive finite lanes take the polynomial; others libm.
    __m256 ok = _mm256_and_ps(_mm256_cmp_ps(x, _mm256_set1_ps(1.17549435e-38f), _CMP_GE_OQ),
                              _mm256_cmp_ps(x, _mm256_set1_ps(3.40282347e+38f), _CMP_LE_OQ));
    if (_mm256_movemask_ps(ok) == 0xff) {
      _mm256_storeu_ps(r + i, Log8(x));
    } else {
      for (int k = 0; k < 8; ++k) r[i + k] = std::log(a[i + k]);
    }
  }
  for (; i < n; ++i) r[i] = std::log(a[i]);
}

}  // namespace neuron::kernels
