#include "lib/kernels/bf16_skinny_product.h"

#include <immintrin.h>

#include <algorithm>

#include "lib/kernels/element_convert.h"
#include "lib/kernels/thread_pool.h"
#include "lib/kernels/vector_math_avx2.h"

namespace neuron::kernels {
namespace {

// Eight bf16 values widened to f32 (exactly: bf16 is f32's top half).
inline __m256 Widen8(const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

// Rows [r0, r0 + R) of outputs [j0, j1) of a [n, k] matrix: one dot per
// row of W and of x, the W row widened once for the R rows.
template <int R>
void RowsAsOutputs(const float* x, const uint16_t* w, int64_t k, int64_t n, int64_t r0, int64_t j0, int64_t j1,
                   float* y) {
  for (int64_t j = j0; j < j1; ++j) {
    const uint16_t* row = w + j * k;
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= k; i += 8) {
      const __m256 wv = Widen8(row + i);
      for (int r = 0; r < R; ++r) acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(x + (r0 + r) * k + i), wv, acc[r]);
    }
    for (int r = 0; r < R; ++r) {
      float sum = vec8::HorizontalSum(acc[r]);
      for (int64_t t = i; t < k; ++t) sum += x[(r0 + r) * k + t] * Bf16ToF32(row[t]);
      y[(r0 + r) * n + j] = sum;
    }
  }
}

void RowsAsOutputsAll(const float* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, int64_t j0, int64_t j1,
                      float* y) {
  int64_t r = 0;
  for (; r + 8 <= m; r += 8) RowsAsOutputs<8>(x, w, k, n, r, j0, j1, y);
  if (r + 4 <= m) { RowsAsOutputs<4>(x, w, k, n, r, j0, j1, y); r += 4; }
  if (r + 2 <= m) { RowsAsOutputs<2>(x, w, k, n, r, j0, j1, y); r += 2; }
  if (r < m) RowsAsOutputs<1>(x, w, k, n, r, j0, j1, y);
}

// y[r, j0:j1] += sum over t < T of x[r, i + t] * W[i + t, j0:j1]: T rows of
// a [k, n] matrix at once, each read front to back (T sequential streams,
// which the prefetchers follow), every y vector loaded and stored once per
// T rows instead of once per row. Two sums per vector halve the chain of
// dependent multiply-adds.
template <int T>
void RowBlock(const float* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, int64_t i, int64_t j0,
              int64_t j1, float* y) {
  const uint16_t* wi = w + i * n;
  int64_t j = j0;
  if constexpr (T == 4) {
    // Two vectors of columns per pass: each x broadcast feeds two products.
    for (; j + 16 <= j1; j += 16) {
      __m256 wv[T][2];
      for (int t = 0; t < T; ++t) {
        wv[t][0] = Widen8(wi + t * n + j);
        wv[t][1] = Widen8(wi + t * n + j + 8);
      }
      for (int64_t r = 0; r < m; ++r) {
        const float* xr = x + r * k + i;
        float* yr = y + r * n + j;
        __m256 a0 = _mm256_loadu_ps(yr), a1 = _mm256_loadu_ps(yr + 8);
        __m256 x0 = _mm256_broadcast_ss(xr), x1 = _mm256_broadcast_ss(xr + 1);
        __m256 b0 = _mm256_mul_ps(x1, wv[1][0]), b1 = _mm256_mul_ps(x1, wv[1][1]);
        a0 = _mm256_fmadd_ps(x0, wv[0][0], a0);
        a1 = _mm256_fmadd_ps(x0, wv[0][1], a1);
        __m256 x2 = _mm256_broadcast_ss(xr + 2), x3 = _mm256_broadcast_ss(xr + 3);
        a0 = _mm256_fmadd_ps(x2, wv[2][0], a0);
        a1 = _mm256_fmadd_ps(x2, wv[2][1], a1);
        b0 = _mm256_fmadd_ps(x3, wv[3][0], b0);
        b1 = _mm256_fmadd_ps(x3, wv[3][1], b1);
        _mm256_storeu_ps(yr, _mm256_add_ps(a0, b0));
        _mm256_storeu_ps(yr + 8, _mm256_add_ps(a1, b1));
      }
    }
  }
  for (; j + 8 <= j1; j += 8) {
    __m256 wv[T];
    for (int t = 0; t < T; ++t) wv[t] = Widen8(wi + t * n + j);
    for (int64_t r = 0; r < m; ++r) {
      const float* xr = x + r * k + i;
      float* yr = y + r * n + j;
      __m256 a = _mm256_loadu_ps(yr);
      __m256 b = _mm256_setzero_ps();
      for (int t = 0; t + 1 < T; t += 2) {
        a = _mm256_fmadd_ps(_mm256_broadcast_ss(xr + t), wv[t], a);
        b = _mm256_fmadd_ps(_mm256_broadcast_ss(xr + t + 1), wv[t + 1], b);
      }
      if (T % 2) a = _mm256_fmadd_ps(_mm256_broadcast_ss(xr + T - 1), wv[T - 1], a);
      _mm256_storeu_ps(yr, _mm256_add_ps(a, b));
    }
  }
  for (; j < j1; ++j)
    for (int t = 0; t < T; ++t) {
      const float wv = Bf16ToF32(wi[t * n + j]);
      for (int64_t r = 0; r < m; ++r) y[r * n + j] += x[r * k + i + t] * wv;
    }
}

// Outputs [j0, j1) of a [k, n] matrix, eight of its rows at a time.
void ColumnsAsOutputs(const float* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, int64_t j0, int64_t j1,
                      float* y) {
  for (int64_t r = 0; r < m; ++r) std::fill(y + r * n + j0, y + r * n + j1, 0.0f);
  int64_t i = 0;
  for (; i + 4 <= k; i += 4) RowBlock<4>(x, m, w, k, n, i, j0, j1, y);
  for (; i < k; ++i) RowBlock<1>(x, m, w, k, n, i, j0, j1, y);
}

// Below this many weights a second thread costs more than it saves.
constexpr int64_t kParallelWeights = int64_t{1} << 16;

}  // namespace

void Bf16SkinnyProduct(const float* x, int64_t m, const uint16_t* w, int64_t k, int64_t n,
                       bool w_rows_are_outputs, float* y, int threads) {
  auto part = [&](int64_t j0, int64_t j1) {
    if (w_rows_are_outputs) RowsAsOutputsAll(x, m, w, k, n, j0, j1, y);
    else ColumnsAsOutputs(x, m, w, k, n, j0, j1, y);
  };
  const int parts = k * n >= kParallelWeights
                        ? static_cast<int>(std::min<int64_t>({threads, ThreadPool::Global().max_parallelism(), n}))
                        : 1;
  if (parts < 2) {
    part(0, n);
    return;
  }
  // Column blocks of whole vectors, so no two threads share a cache line
  // of y.
  ThreadPool::Global().Run(parts, [&](int p) {
    const int64_t j0 = n * p / parts / 16 * 16, j1 = p + 1 == parts ? n : n * (p + 1) / parts / 16 * 16;
    part(j0, j1);
  });
}

}  // namespace neuron::kernels
