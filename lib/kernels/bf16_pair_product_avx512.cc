// Bf16PairProduct's kernels, built for x86-64-v4 with AVX512_BF16 (only
// this file); callers check Bf16PairProductAvailable() first.
#include <immintrin.h>

#include <algorithm>

#include "lib/kernels/bf16_pair_product.h"
#include "lib/kernels/row_groups.h"

namespace neuron::kernels {
namespace {

// acc + a.pairs . b.pairs, lane by lane.
inline __m512 PairDot(__m512 acc, __m512i a, __m512i b) {
  return _mm512_dpbf16_ps(acc, reinterpret_cast<__m512bh&>(a), reinterpret_cast<__m512bh&>(b));
}

// The first n (< 32) of 32 bf16 values, the rest zero (adding nothing).
inline __m512i LoadFirst(const uint16_t* p, int64_t n) {
  return _mm512_maskz_loadu_epi16(static_cast<__mmask32>((uint64_t{1} << n) - 1), p);
}

// ---- W stored [n, k]: each output's weights are a row, its pairs along k
// adjacent as they are stored, so both x's row and W's are used as loaded.

// Outputs y[r, c] = x[r, :] . W[c, :] for r < R, c < J (`w` at W's first
// row, `ldw` elements apart). When `ahead` is set the J rows there are
// fetched meanwhile: the prefetchers alone leave the first rows waiting.
template <int R, int J>
void RowTile(const uint16_t* x, int64_t k, const uint16_t* w, int64_t ldw, float* y, int64_t ldy,
             const uint16_t* ahead) {
  __m512 acc[R][J];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int c = 0; c < J; ++c) acc[r][c] = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= k; i += 32) {
    if (ahead != nullptr)
#pragma GCC unroll 16
      for (int c = 0; c < J; ++c) _mm_prefetch(reinterpret_cast<const char*>(ahead + c * ldw + i), _MM_HINT_T0);
    __m512i wv[J];
#pragma GCC unroll 16
    for (int c = 0; c < J; ++c) wv[c] = _mm512_loadu_si512(w + c * ldw + i);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m512i xv = _mm512_loadu_si512(x + r * k + i);
#pragma GCC unroll 16
      for (int c = 0; c < J; ++c) acc[r][c] = PairDot(acc[r][c], xv, wv[c]);
    }
  }
  if (i < k) {
    __m512i wv[J];
#pragma GCC unroll 16
    for (int c = 0; c < J; ++c) wv[c] = LoadFirst(w + c * ldw + i, k - i);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m512i xv = LoadFirst(x + r * k + i, k - i);
#pragma GCC unroll 16
      for (int c = 0; c < J; ++c) acc[r][c] = PairDot(acc[r][c], xv, wv[c]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int c = 0; c < J; ++c) y[r * ldy + c] = _mm512_reduce_add_ps(acc[r][c]);
}

// Outputs a step covers: a multiple of every tile's J.
constexpr int64_t kRowStep = 8;
// One or two rows of x make few sums: more outputs a tile keep enough
// chains of pair dots going to hide their latency.
constexpr int RowTileOutputs(int rows) { return rows <= 2 ? 8 : 4; }

void RowsAsOutputs(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, int64_t ldw, float* y,
                   int64_t ldy) {
  int64_t j = 0;
  for (; j + kRowStep <= n; j += kRowStep) {
    const bool more = j + 2 * kRowStep <= n;
    ForRowGroups<6>(m, [&]<int R>(int64_t r0) {
      constexpr int J = RowTileOutputs(R);
      for (int64_t c = 0; c < kRowStep; c += J) {
        const uint16_t* rows = w + (j + c) * ldw;
        // The first group brings the next step's rows in.
        RowTile<R, J>(x + r0 * k, k, rows, ldw, y + r0 * ldy + j + c, ldy,
                      r0 == 0 && more ? rows + kRowStep * ldw : nullptr);
      }
    });
  }
  for (; j < n; ++j)
    ForRowGroups<6>(m, [&]<int R>(int64_t r0) {
      RowTile<R, 1>(x + r0 * k, k, w + j * ldw, ldw, y + r0 * ldy + j, ldy, nullptr);
    });
}

// ---- W stored [k, n]: the pairs along k are two rows' same columns,
// interleaved in registers (unpacklo/unpackhi of 16-bit words). Within each
// 128-bit lane that puts columns 0-3 (of every 8) in the "lo" sums and 4-7
// in the "hi" sums; the sums are put back in column order once, at the end
// of a pass.

// Rows of W a pass reads before its sums go back to y (even, so no pair
// straddles two passes).
constexpr int64_t kRowsPerPass = 16;

// Columns 0-15 and 16-31 of a 32-column chunk from its lo and hi sums.
inline void InColumnOrder(__m512 lo, __m512 hi, __m512* first, __m512* second) {
  const __m512i first_idx = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i second_idx = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  *first = _mm512_permutex2var_ps(lo, first_idx, hi);
  *second = _mm512_permutex2var_ps(lo, second_idx, hi);
}

// y[r, 0:cols] += sum over i in [i0, i1) of x[r, i] * W[i, 0:cols] for
// r < R, cols <= 32V: V chunks of 32 columns of a [k, n] matrix (`w` at
// row 0 of the first column, rows `ldw` elements apart). `ahead`: the same
// columns of the next pass's rows, fetched meanwhile.
template <int R, int V>
void ColumnTile(const uint16_t* x, int64_t k, const uint16_t* w, int64_t ldw, int64_t i0, int64_t i1, int64_t cols,
                float* y, int64_t ldy, const uint16_t* ahead) {
  __m512 lo[R][V], hi[R][V];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) lo[r][v] = hi[r][v] = _mm512_setzero_ps();
  const bool whole = cols == 32 * V;
  auto load = [&](const uint16_t* p, int v) {
    if (whole) return _mm512_loadu_si512(p + 32 * v);
    const int64_t left = std::clamp<int64_t>(cols - 32 * v, 0, 32);
    return left == 32 ? _mm512_loadu_si512(p + 32 * v) : LoadFirst(p + 32 * v, left);
  };
  for (int64_t i = i0; i < i1; i += 2) {
    const bool pair = i + 1 < i1;
    const uint16_t* a = w + i * ldw;
    if (ahead != nullptr) {
      // Every line the tile reads of these rows: 32 columns are one.
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) {
        _mm_prefetch(reinterpret_cast<const char*>(ahead + i * ldw + 32 * v), _MM_HINT_T0);
        if (pair) _mm_prefetch(reinterpret_cast<const char*>(ahead + (i + 1) * ldw + 32 * v), _MM_HINT_T0);
      }
    }
    __m512i wlo[V], whi[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const __m512i av = load(a, v);
      const __m512i bv = pair ? load(a + ldw, v) : _mm512_setzero_si512();
      wlo[v] = _mm512_unpacklo_epi16(av, bv);
      whi[v] = _mm512_unpackhi_epi16(av, bv);
    }
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      uint32_t xs = x[r * k + i];
      if (pair) xs |= static_cast<uint32_t>(x[r * k + i + 1]) << 16;
      const __m512i xp = _mm512_set1_epi32(static_cast<int>(xs));
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) {
        lo[r][v] = PairDot(lo[r][v], xp, wlo[v]);
        hi[r][v] = PairDot(hi[r][v], xp, whi[v]);
      }
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      __m512 first, second;
      InColumnOrder(lo[r][v], hi[r][v], &first, &second);
      float* out = y + r * ldy + 32 * v;
      const int64_t left = std::clamp<int64_t>(cols - 32 * v, 0, 32);
      const __mmask16 m1 = static_cast<__mmask16>((1u << std::min<int64_t>(left, 16)) - 1);
      const __mmask16 m2 = static_cast<__mmask16>((1u << std::max<int64_t>(left - 16, 0)) - 1);
      _mm512_mask_storeu_ps(out, m1, _mm512_add_ps(_mm512_maskz_loadu_ps(m1, out), first));
      _mm512_mask_storeu_ps(out + 16, m2, _mm512_add_ps(_mm512_maskz_loadu_ps(m2, out + 16), second));
    }
}

void ColumnsAsOutputs(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, int64_t ldw, float* y,
                      int64_t ldy) {
  for (int64_t r = 0; r < m; ++r) std::fill(y + r * ldy, y + r * ldy + n, 0.0f);
  for (int64_t i0 = 0; i0 < k; i0 += kRowsPerPass) {
    const int64_t i1 = std::min(k, i0 + kRowsPerPass);
    const bool more = i1 < k;
    // V chunks of 32 columns from column j for every group of rows.
    auto chunk = [&]<int V, int kMaxRows>(int64_t j) {
      const int64_t cols = std::min<int64_t>(n - j, 32 * V);
      ForRowGroups<kMaxRows>(m, [&]<int R>(int64_t r0) {
        ColumnTile<R, V>(x + r0 * k, k, w + j, ldw, i0, i1, cols, y + r0 * ldy + j, ldy,
                         r0 == 0 && more ? w + j + kRowsPerPass * ldw : nullptr);
      });
    };
    // One or two rows make few sums: four chunks at a time keep enough
    // chains going.
    int64_t j = 0;
    if (m <= 2)
      for (; j < n; j += 128) chunk.template operator()<4, 2>(j);
    for (; j < n; j += 64) chunk.template operator()<2, 5>(j);
  }
}

}  // namespace

void Bf16PairProduct(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, bool w_rows_are_outputs,
                     int64_t ldw, float* y, int64_t ldy) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int64_t r = 0; r < m; ++r) std::fill(y + r * ldy, y + r * ldy + n, 0.0f);
    return;
  }
  // From 3 rows on the pair dot products cannot keep up with the memory;
  // AMX tiles take the whole 32-output blocks where k is whole tiles.
  int64_t done = 0;
  if (m >= 3 && k % 32 == 0 && n >= 32 && Bf16TilesAvailable()) {
    done = n / 32 * 32;
    Bf16TileProduct(x, m, w, k, done, w_rows_are_outputs, ldw, y, ldy);
    if (done == n) return;
  }
  if (w_rows_are_outputs) RowsAsOutputs(x, m, w + done * ldw, k, n - done, ldw, y + done, ldy);
  else ColumnsAsOutputs(x, m, w + done, k, n - done, ldw, y + done, ldy);
}

}  // namespace neuron::kernels
