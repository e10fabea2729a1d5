#include "lib/kernels/skinny_product.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "lib/kernels/element_convert.h"
#include "lib/kernels/row_groups.h"
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
  static constexpr bool kMendsNaN = false;  // NaN widens to NaN by itself
  static constexpr int kBytes = 2;
  static constexpr float kScale = 1.0f;  // Widen8 gives the values themselves
  static __m256 Widen8(const uint8_t* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));  // f32's top half
  }
  static float One(const uint8_t* p) { return OneValue<ET::kBF16>(p); }
};

// f32 as it is: for matrices the general product would have to permute
// first (see PlanSkinnyDot).
struct F32Weights {
  static constexpr bool kMendsNaN = false;
  static constexpr int kBytes = 4;
  static constexpr float kScale = 1.0f;
  static __m256 Widen8(const uint8_t* p) { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }
  static float One(const uint8_t* p) {
    float f;
    std::memcpy(&f, p, sizeof f);
    return f;
  }
};

struct F16Weights {
  static constexpr bool kMendsNaN = false;  // NaN widens to NaN by itself
  static constexpr int kBytes = 2;
  static constexpr float kScale = 1.0f;  // Widen8 gives the values themselves
  static __m256 Widen8(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static float One(const uint8_t* p) { return OneValue<ET::kF16>(p); }
};

// f8e5m2 is the top byte of an f16.
struct F8e5m2Weights {
  static constexpr bool kMendsNaN = false;  // NaN widens to NaN by itself
  static constexpr int kBytes = 1;
  static constexpr float kScale = 1.0f;  // Widen8 gives the values themselves
  static __m256 Widen8(const uint8_t* p) {
    const __m128i b = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    return _mm256_cvtph_ps(_mm_slli_epi16(b, 8));
  }
  static float One(const uint8_t* p) { return OneValue<ET::kF8E5M2>(p); }
};

// f8e4m3fn's sign, exponent and mantissa placed in an f16's
// (s.eeee.mmm -> s.0eeee.mmm0000000, three integer operations): the value
// divided by 256 (the exponent biases are 7 and 15), denormals included.
// Sums of these are scaled back by kScale once each, not per weight.
// S.1111.111 is NaN (the type has no infinities): rare, so a test of
// the eight values decides whether to mend any.
struct F8e4m3fnWeights {
  static constexpr bool kMendsNaN = true;
  static constexpr int kBytes = 1;
  static constexpr float kScale = 256.0f;
  // Eight values with no NaN among them.
  static __m256 Widen8Finite(const uint8_t* p) {
    return _mm256_cvtph_ps(Half8(p));
  }
  static __m256 Widen8(const uint8_t* p) {
    const __m128i h = Half8(p);
    __m256 v = _mm256_cvtph_ps(h);
    const __m128i nan = _mm_cmpeq_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7F80)), _mm_set1_epi16(0x3F80));
    if (!_mm_testz_si128(nan, nan))
      v = _mm256_blendv_ps(v, _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN()),
                           _mm256_castsi256_ps(_mm256_cvtepi16_epi32(nan)));
    return v;
  }
  static float One(const uint8_t* p) { return OneValue<ET::kF8E4M3FN>(p); }
  // Whether any of n values at p is NaN: a scan of 32 bytes per step, far
  // cheaper than a test per eight values as they are widened.
  static bool AnyNaN(const uint8_t* p, int64_t n) {
    __m256i found = _mm256_setzero_si256();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
      found = _mm256_or_si256(found, _mm256_cmpeq_epi8(_mm256_or_si256(b, _mm256_set1_epi8(-128)), _mm256_set1_epi8(-1)));
    }
    bool any = !_mm256_testz_si256(found, found);
    for (; i < n; ++i) any = any || (p[i] & 0x7f) == 0x7f;
    return any;
  }

 private:
  static __m128i Half8(const uint8_t* p) {
    // Each byte into the high half of a 16-bit lane (byte << 8) by one
    // unpack, then shifted down one keeping its sign, and the sign's copy
    // cleared.
    const __m128i hi = _mm_unpacklo_epi8(_mm_setzero_si128(), _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    return _mm_and_si128(_mm_srai_epi16(hi, 1), _mm_set1_epi16(static_cast<int16_t>(0xBF80)));
  }
};

// W's weights known to hold no NaN: widened without the mending.
template <typename W>
struct FiniteWeights : W {
  static __m256 Widen8(const uint8_t* p) { return W::Widen8Finite(p); }
};

// Outputs of a [n, k] matrix a tile computes at once for R rows: enough
// independent sums (R x J) to hide the multiply-add's latency, few enough
// to stay in the 16 registers with the widened weights. Every group steps
// over kOutputsPerStep outputs, a multiple of each tile's width.
constexpr int OutputsPerTile(int rows) { return rows <= 2 ? 4 : 2; }
constexpr int64_t kOutputsPerStep = 4;

// y[r, c] = x[r, :] . W[j + c, :] for r < R, c < J: J rows of a [n, k]
// matrix (`w` at the first, `ldw` bytes apart) against R rows of x (k
// apart), each weight vector widened once for the R rows. When `ahead` is
// set, the J rows there are fetched into cache meanwhile: the hardware's
// prefetchers alone left the first group waiting on memory half the time.
template <int R, int J, typename W>
void DotTile(const float* x, int64_t k, const uint8_t* w, int64_t ldw, float* y, int64_t ldy,
             const uint8_t* ahead) {
  // One row makes only J sums: each takes alternate vectors into a second
  // sum, so 2J chains of multiply-adds run at once.
  constexpr int S = R == 1 ? 2 : 1;
  __m256 acc[S][R][J];
#pragma GCC unroll 16
  for (int s = 0; s < S; ++s)
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
      for (int c = 0; c < J; ++c) acc[s][r][c] = _mm256_setzero_ps();
  int64_t i = 0;
  constexpr int64_t kLine = 64 / W::kBytes;  // weights in a cache line
  for (; i + 8 * S <= k; i += 8 * S) {
    if (ahead != nullptr && i % kLine == 0)
#pragma GCC unroll 16
      for (int c = 0; c < J; ++c) _mm_prefetch(reinterpret_cast<const char*>(ahead + c * ldw + i * W::kBytes), _MM_HINT_T0);
#pragma GCC unroll 16
    for (int s = 0; s < S; ++s) {
      const int64_t is = i + 8 * s;
      __m256 wv[J];
#pragma GCC unroll 16
      for (int c = 0; c < J; ++c) wv[c] = W::Widen8(w + c * ldw + is * W::kBytes);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        __m256 xv = _mm256_loadu_ps(x + r * k + is);
        // Loaded once into a register for the J products: left to itself
        // the compiler folds the load into each multiply-add, and the
        // loads, not the multiply-adds, set the pace.
        asm("" : "+x"(xv));
#pragma GCC unroll 16
        for (int c = 0; c < J; ++c) acc[s][r][c] = _mm256_fmadd_ps(xv, wv[c], acc[s][r][c]);
      }
    }
  }
  for (; i + 8 <= k; i += 8)
#pragma GCC unroll 16
    for (int c = 0; c < J; ++c) {
      const __m256 wv = W::Widen8(w + c * ldw + i * W::kBytes);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) acc[0][r][c] = _mm256_fmadd_ps(_mm256_loadu_ps(x + r * k + i), wv, acc[0][r][c]);
    }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < J; ++c) {
      __m256 total = acc[0][r][c];
      if constexpr (S == 2) total = _mm256_add_ps(total, acc[1][r][c]);
      float sum = vec8::HorizontalSum(total);
      if constexpr (W::kScale != 1.0f) sum *= W::kScale;
      for (int64_t t = i; t < k; ++t) sum += x[r * k + t] * W::One(w + c * ldw + t * W::kBytes);
      y[r * ldy + c] = sum;
    }
}

// Outputs [j0, j1) of a [n, k] matrix: J of its rows at a time, every group
// of x's rows against them while they are in cache.
// kOutputsPerStep outputs from row j of a [n, k] matrix, every group of
// x's rows against them while they are in cache.
template <typename W>
void OutputStep(const float* x, int64_t m, const uint8_t* w, int64_t k, int64_t ldw_bytes, int64_t j, bool more,
                float* y, int64_t ldy) {
  ForRowGroups<6>(m, [&]<int R>(int64_t r0) {
    constexpr int J = OutputsPerTile(R);
    static_assert(kOutputsPerStep % J == 0);
    for (int64_t c = 0; c < kOutputsPerStep; c += J) {
      const uint8_t* rows = w + (j + c) * ldw_bytes;
      // The first group brings the next step's rows in.
      DotTile<R, J, W>(x + r0 * k, k, rows, ldw_bytes, y + r0 * ldy + j + c, ldy,
                       r0 == 0 && more ? rows + kOutputsPerStep * ldw_bytes : nullptr);
    }
  });
}

// Outputs [j0, j1) of a [n, k] matrix, kOutputsPerStep of its rows at a
// time; rows a scan finds free of NaN are widened without mending it.
template <typename W>
void RowsAsOutputs(const float* x, int64_t m, const uint8_t* w, int64_t k, int64_t ldw, int64_t j0, int64_t j1,
                   float* y, int64_t ldy) {
  const int64_t ldw_bytes = ldw * W::kBytes;
  int64_t j = j0;
  for (; j + kOutputsPerStep <= j1; j += kOutputsPerStep) {
    const bool more = j + 2 * kOutputsPerStep <= j1;
    if constexpr (W::kMendsNaN) {
      bool nan = false;
      for (int64_t c = 0; c < kOutputsPerStep; ++c) nan = nan || W::AnyNaN(w + (j + c) * ldw_bytes, k);
      if (!nan) {
        OutputStep<FiniteWeights<W>>(x, m, w, k, ldw_bytes, j, more, y, ldy);
        continue;
      }
    }
    OutputStep<W>(x, m, w, k, ldw_bytes, j, more, y, ldy);
  }
  for (; j < j1; ++j)
    ForRowGroups<6>(m, [&]<int R>(int64_t r0) {
      DotTile<R, 1, W>(x + r0 * k, k, w + j * ldw_bytes, ldw_bytes, y + r0 * ldy + j, ldy, nullptr);
    });
}

// Rows of a [k, n] matrix a tile reads before its sums go back to y: the
// sums stay in registers across them, and the rows are that many
// sequential streams the prefetchers follow. Several rows of x reuse each
// weight and gain from longer passes; one or two mostly wait on memory,
// and fewer streams serve them better (measured: 11 rows, 16 a pass 1.3x
// faster than 8; one row, 8 a pass 1.2x faster than 16).
constexpr int64_t RowsPerPass(int64_t m) { return m <= 2 ? 8 : 16; }

// y[r, 0:8V] += sum over i in [i0, i1) of x[r, i] * W[i, 0:8V] for r < R:
// V vectors of columns of a [k, n] matrix (`w` at row 0, column 0; rows
// `ldw` bytes apart), the sums in registers for the whole pass. (The
// unroll pragmas keep them there: at -O2 the loops over the tile stayed
// loops and the sums went through the stack.) When `ahead` is set, the
// same columns of the rows there are fetched into cache meanwhile.
template <int R, int V, typename W>
void ColumnTile(const float* x, int64_t k, const uint8_t* w, int64_t ldw, int64_t i0, int64_t i1, float* y,
                int64_t ldy, const uint8_t* ahead) {
  __m256 acc[R][V];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      acc[r][v] = _mm256_loadu_ps(y + r * ldy + 8 * v);
      if constexpr (W::kScale != 1.0f) acc[r][v] = _mm256_mul_ps(acc[r][v], _mm256_set1_ps(1.0f / W::kScale));
    }
  // The tile's columns span this many cache lines of a row (f32: two at
  // V = 4), each fetched ahead.
  constexpr int kAheadLines = (8 * V * W::kBytes + 63) / 64;
  for (int64_t i = i0; i < i1; ++i) {
    if (ahead != nullptr)
#pragma GCC unroll 4
      for (int l = 0; l < kAheadLines; ++l)
        _mm_prefetch(reinterpret_cast<const char*>(ahead + i * ldw + 64 * l), _MM_HINT_T0);
    __m256 wv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) wv[v] = W::Widen8(w + i * ldw + 8 * v * W::kBytes);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m256 xb = _mm256_broadcast_ss(x + r * k + i);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(xb, wv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      if constexpr (W::kScale != 1.0f) acc[r][v] = _mm256_mul_ps(acc[r][v], _mm256_set1_ps(W::kScale));
      _mm256_storeu_ps(y + r * ldy + 8 * v, acc[r][v]);
    }
}

// Outputs [j0, j1) of a [k, n] matrix (rows `ldw` elements apart): passes
// over RowsPerPass(m) of its rows, each walking the columns two vectors at a
// time with every group of x's rows.
template <typename W>
void ColumnsAsOutputs(const float* x, int64_t m, const uint8_t* w, int64_t k, int64_t ldw, int64_t j0, int64_t j1,
                      float* y, int64_t ldy) {
  for (int64_t r = 0; r < m; ++r) std::fill(y + r * ldy + j0, y + r * ldy + j1, 0.0f);
  const int64_t ldw_bytes = ldw * W::kBytes;
  const int64_t pass = RowsPerPass(m);
  for (int64_t i0 = 0; i0 < k; i0 += pass) {
    const int64_t i1 = std::min(k, i0 + pass);
    // The first group of each line's first vector brings in the next
    // pass's rows.
    const bool more = i1 < k;
    auto ahead = [&](int64_t r0, int64_t j) -> const uint8_t* {
      return r0 == 0 && more && (j * W::kBytes) % 64 == 0 ? w + j * W::kBytes + pass * ldw_bytes : nullptr;
    };
    // V vectors of columns from column j for every group of rows (at most
    // kMaxRows a group); the rows' values are scanned for NaN first where
    // the type needs its NaN mended.
    auto chunk = [&]<int V, int kMaxRows>(int64_t j) {
      auto tiles = [&]<typename Widen>() {
        ForRowGroups<kMaxRows>(m, [&]<int R>(int64_t r0) {
          ColumnTile<R, V, Widen>(x + r0 * k, k, w + j * W::kBytes, ldw_bytes, i0, i1, y + r0 * ldy + j, ldy,
                                  ahead(r0, j));
        });
      };
      if constexpr (W::kMendsNaN) {
        bool nan = false;
        for (int64_t i = i0; i < i1; ++i) nan = nan || W::AnyNaN(w + i * ldw_bytes + j * W::kBytes, 8 * V);
        if (!nan) return tiles.template operator()<FiniteWeights<W>>();
      }
      tiles.template operator()<W>();
    };
    int64_t j = j0;
    // One or two rows make few sums: four vectors of columns at a time
    // give them enough to hide the multiply-add's latency.
    if (m <= 2)
      for (; j + 32 <= j1; j += 32) chunk.template operator()<4, 2>(j);
    for (; j + 16 <= j1; j += 16) chunk.template operator()<2, 5>(j);
    for (; j + 8 <= j1; j += 8) chunk.template operator()<1, 5>(j);
    for (; j < j1; ++j)
      for (int64_t i = i0; i < i1; ++i) {
        const float wv = W::One(w + i * ldw_bytes + j * W::kBytes);
        for (int64_t r = 0; r < m; ++r) y[r * ldy + j] += x[r * k + i] * wv;
      }
  }
}

template <typename W>
void Product(const float* x, int64_t m, const uint8_t* w, int64_t k, int64_t n, bool w_rows_are_outputs,
             int64_t ldw, float* y, int64_t ldy, int threads) {
  auto part = [&](int64_t j0, int64_t j1) {
    if (w_rows_are_outputs) RowsAsOutputs<W>(x, m, w, k, ldw, j0, j1, y, ldy);
    else ColumnsAsOutputs<W>(x, m, w, k, ldw, j0, j1, y, ldy);
  };
  const int parts = k * n >= kSkinnyParallelWeights
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
                   bool w_rows_are_outputs, int64_t ldw, float* y, int64_t ldy, int threads) {
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  switch (w_type) {
    case ET::kBF16: return Product<Bf16Weights>(x, m, wb, k, n, w_rows_are_outputs, ldw, y, ldy, threads);
    case ET::kF16: return Product<F16Weights>(x, m, wb, k, n, w_rows_are_outputs, ldw, y, ldy, threads);
    case ET::kF8E4M3FN: return Product<F8e4m3fnWeights>(x, m, wb, k, n, w_rows_are_outputs, ldw, y, ldy, threads);
    case ET::kF8E5M2: return Product<F8e5m2Weights>(x, m, wb, k, n, w_rows_are_outputs, ldw, y, ldy, threads);
    case ET::kF32: return Product<F32Weights>(x, m, wb, k, n, w_rows_are_outputs, ldw, y, ldy, threads);
    default: return;
  }
}

}  // namespace neuron::kernels
