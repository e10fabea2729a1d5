#include "lib/kernels/skinny_product.h"

#include <immintrin.h>

#include <algorithm>
#include <limits>

#include "lib/kernels/element_convert.h"
#include "lib/kernels/thread_pool.h"
#include "lib/kernels/vector_math_avx2.h"

namespace neuron::kernels {
namespace {

using ET = hlo::ElementType;

// How each weight type is read: eight values widened to f32 in a register
// (exactly: every one of these types is a subset of f32), and one value.
// The scalar tails read one value through the shared converter.
template <ET kType>
float OneValue(const uint8_t* p) {
  float f;
  LoadToDomain(kType, p, 1, &f);
  return f;
}

struct Bf16Weights {
  static constexpr int kBytes = 2;
  static __m256 Widen8(const uint8_t* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));  // f32's top half
  }
  static float One(const uint8_t* p) { return OneValue<ET::kBF16>(p); }
};

struct F16Weights {
  static constexpr int kBytes = 2;
  static __m256 Widen8(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static float One(const uint8_t* p) { return OneValue<ET::kF16>(p); }
};

// f8e5m2 is the top byte of an f16.
struct F8e5m2Weights {
  static constexpr int kBytes = 1;
  static __m256 Widen8(const uint8_t* p) {
    const __m128i b = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    return _mm256_cvtph_ps(_mm_slli_epi16(b, 8));
  }
  static float One(const uint8_t* p) { return OneValue<ET::kF8E5M2>(p); }
};

// f8e4m3fn's exponent and mantissa placed in an f16's (its value times
// 2^-8, denormals included), scaled back by 256; S.1111.111 is NaN (the
// type has no infinities).
struct F8e4m3fnWeights {
  static constexpr int kBytes = 1;
  static __m256 Widen8(const uint8_t* p) {
    const __m128i b = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    const __m128i mag = _mm_and_si128(b, _mm_set1_epi16(0x7f));
    const __m128i sign = _mm_slli_epi16(_mm_and_si128(b, _mm_set1_epi16(0x80)), 8);
    const __m128i h = _mm_or_si128(sign, _mm_slli_epi16(mag, 7));
    const __m256 v = _mm256_mul_ps(_mm256_cvtph_ps(h), _mm256_set1_ps(256.0f));
    const __m256 nan = _mm256_castsi256_ps(_mm256_cvtepi16_epi32(_mm_cmpeq_epi16(mag, _mm_set1_epi16(0x7f))));
    return _mm256_blendv_ps(v, _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN()), nan);
  }
  static float One(const uint8_t* p) { return OneValue<ET::kF8E4M3FN>(p); }
};

// Rows [r0, r0 + R) of outputs [j0, j1) of a [n, k] matrix: one dot per
// row of W and of x, the W row widened once for the R rows.
template <int R, typename W>
void RowsAsOutputs(const float* x, const uint8_t* w, int64_t k, int64_t n, int64_t r0, int64_t j0, int64_t j1,
                   float* y) {
  // Independent sums per row (U of them), so a few rows do not wait on one
  // chain of dependent multiply-adds: one token's row alone would run at
  // the FMA's latency, not at the memory's speed.
  constexpr int U = R == 1 ? 4 : R == 2 ? 2 : 1;
  for (int64_t j = j0; j < j1; ++j) {
    const uint8_t* row = w + j * k * W::kBytes;
    __m256 acc[R][U];
    for (int r = 0; r < R; ++r)
      for (int u = 0; u < U; ++u) acc[r][u] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 * U <= k; i += 8 * U) {
      for (int u = 0; u < U; ++u) {
        const __m256 wv = W::Widen8(row + (i + 8 * u) * W::kBytes);
        for (int r = 0; r < R; ++r)
          acc[r][u] = _mm256_fmadd_ps(_mm256_loadu_ps(x + (r0 + r) * k + i + 8 * u), wv, acc[r][u]);
      }
    }
    for (; i + 8 <= k; i += 8) {
      const __m256 wv = W::Widen8(row + i * W::kBytes);
      for (int r = 0; r < R; ++r) acc[r][0] = _mm256_fmadd_ps(_mm256_loadu_ps(x + (r0 + r) * k + i), wv, acc[r][0]);
    }
    for (int r = 0; r < R; ++r) {
      for (int u = 1; u < U; ++u) acc[r][0] = _mm256_add_ps(acc[r][0], acc[r][u]);
      float sum = vec8::HorizontalSum(acc[r][0]);
      for (int64_t t = i; t < k; ++t) sum += x[(r0 + r) * k + t] * W::One(row + t * W::kBytes);
      y[(r0 + r) * n + j] = sum;
    }
  }
}

template <typename W>
void RowsAsOutputsAll(const float* x, int64_t m, const uint8_t* w, int64_t k, int64_t n, int64_t j0, int64_t j1,
                      float* y) {
  int64_t r = 0;
  for (; r + 8 <= m; r += 8) RowsAsOutputs<8, W>(x, w, k, n, r, j0, j1, y);
  if (r + 4 <= m) { RowsAsOutputs<4, W>(x, w, k, n, r, j0, j1, y); r += 4; }
  if (r + 2 <= m) { RowsAsOutputs<2, W>(x, w, k, n, r, j0, j1, y); r += 2; }
  if (r < m) RowsAsOutputs<1, W>(x, w, k, n, r, j0, j1, y);
}

// y[r, j0:j1] += sum over t < T of x[r, i + t] * W[i + t, j0:j1]: T rows of
// a [k, n] matrix at once, each read front to back (T sequential streams,
// which the prefetchers follow), every y vector loaded and stored once per
// T rows instead of once per row. Two sums per vector halve the chain of
// dependent multiply-adds.
template <int T, typename W>
void RowBlock(const float* x, int64_t m, const uint8_t* w, int64_t k, int64_t n, int64_t i, int64_t j0,
              int64_t j1, float* y) {
  const uint8_t* wi = w + i * n * W::kBytes;
  // Element j of row t of the block.
  auto at = [&](int t, int64_t j) { return wi + (t * n + j) * W::kBytes; };
  int64_t j = j0;
  if constexpr (T == 4) {
    // Two vectors of columns per pass: each x broadcast feeds two products.
    for (; j + 16 <= j1; j += 16) {
      __m256 wv[T][2];
      for (int t = 0; t < T; ++t) {
        wv[t][0] = W::Widen8(at(t, j));
        wv[t][1] = W::Widen8(at(t, j + 8));
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
    for (int t = 0; t < T; ++t) wv[t] = W::Widen8(at(t, j));
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
      const float wv = W::One(at(t, j));
      for (int64_t r = 0; r < m; ++r) y[r * n + j] += x[r * k + i + t] * wv;
    }
}

// Outputs [j0, j1) of a [k, n] matrix, eight of its rows at a time.
template <typename W>
void ColumnsAsOutputs(const float* x, int64_t m, const uint8_t* w, int64_t k, int64_t n, int64_t j0, int64_t j1,
                      float* y) {
  for (int64_t r = 0; r < m; ++r) std::fill(y + r * n + j0, y + r * n + j1, 0.0f);
  int64_t i = 0;
  for (; i + 4 <= k; i += 4) RowBlock<4, W>(x, m, w, k, n, i, j0, j1, y);
  for (; i < k; ++i) RowBlock<1, W>(x, m, w, k, n, i, j0, j1, y);
}

// Below this many weights a second thread costs more than it saves.
constexpr int64_t kParallelWeights = int64_t{1} << 16;

template <typename W>
void Product(const float* x, int64_t m, const uint8_t* w, int64_t k, int64_t n, bool w_rows_are_outputs, float* y,
             int threads) {
  auto part = [&](int64_t j0, int64_t j1) {
    if (w_rows_are_outputs) RowsAsOutputsAll<W>(x, m, w, k, n, j0, j1, y);
    else ColumnsAsOutputs<W>(x, m, w, k, n, j0, j1, y);
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

}  // namespace

bool IsSkinnyWeightType(hlo::ElementType type) {
  return type == ET::kBF16 || type == ET::kF16 || type == ET::kF8E4M3FN || type == ET::kF8E5M2;
}

void SkinnyProduct(const float* x, int64_t m, const void* w, hlo::ElementType w_type, int64_t k, int64_t n,
                   bool w_rows_are_outputs, float* y, int threads) {
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  switch (w_type) {
    case ET::kBF16: return Product<Bf16Weights>(x, m, wb, k, n, w_rows_are_outputs, y, threads);
    case ET::kF16: return Product<F16Weights>(x, m, wb, k, n, w_rows_are_outputs, y, threads);
    case ET::kF8E4M3FN: return Product<F8e4m3fnWeights>(x, m, wb, k, n, w_rows_are_outputs, y, threads);
    case ET::kF8E5M2: return Product<F8e5m2Weights>(x, m, wb, k, n, w_rows_are_outputs, y, threads);
    default: return;
  }
}

}  // namespace neuron::kernels
