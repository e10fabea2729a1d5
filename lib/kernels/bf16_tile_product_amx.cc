// Bf16PairProduct's AMX kernels (tdpbf16ps: a 16x16 f32 tile += a 16x32
// bf16 tile times a 32x16 one, 8192 multiply-adds an instruction), built
// with AMX enabled (only this file); called where Bf16TilesAvailable().
//
// W stored [n, k]: Y^T = W . X^T, W's rows loaded as tiles where they lie
// (16 outputs x 32 of k), X^T laid out once per call in the pair-interleaved
// form the instruction takes for its second operand.
// W stored [k, n]: Y = X . W, W's rows loaded as tiles where they lie (16
// of k x 32 outputs), X spread out with zeros so each tile product gives
// the even or the odd outputs.
//
// Both fetch W's lines a few steps ahead of the tile loads.
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "lib/kernels/bf16_pair_product.h"

namespace neuron::kernels {
namespace {

struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};

// Tiles of 64-byte rows, 16 of them but in the first `short_tiles` (the
// sums and x's operands in the [k, n] products), which have `short_rows`
// (x's m rows); released when the product is done, so the thread does not
// carry AMX state into context switches.
class Tiles {
 public:
  explicit Tiles(int short_rows = 16, int short_tiles = 0) {
    TileConfig config;
    for (int t = 0; t < 8; ++t) {
      config.rows[t] = static_cast<uint8_t>(t < short_tiles ? short_rows : 16);
      config.bytes_per_row[t] = 64;
    }
    _tile_loadconfig(&config);
  }
  ~Tiles() { _tile_release(); }
  Tiles(const Tiles&) = delete;
  Tiles& operator=(const Tiles&) = delete;
};

// Tile registers are written as numbers (GCC's tile intrinsics paste their
// argument's text into the instruction); each kernel says what it keeps in
// which.

// y[r, j + t] = c[t * 16 + r] for r < m, t < cols: a [16 outputs][16 rows]
// block of sums back into y.
void StoreTransposed(const float* c, int64_t m, int64_t cols, float* y, int64_t ldy) {
  for (int64_t r = 0; r < m; ++r)
    for (int64_t t = 0; t < cols; ++t) y[r * ldy + t] = c[t * 16 + r];
}

// How far ahead along W's rows the [n, k] kernel fetches (elements: 4
// lines, 4 steps of 32): left to the hardware, the tile loads wait on
// every line they read and one thread read 12.5 GB/s of the 14.7 its core
// can take; fetched, two threads read 25-26 GB/s of 28 (6912 x 1152 bf16,
// 11 rows).
constexpr int64_t kFetchAhead = 128;

// Starts loading the line at `p` in each of `rows` rows `ld` elements
// apart; null for none.
template <int rows>
inline void FetchRows(const uint16_t* p, int64_t ld) {
  if (p == nullptr) return;
  for (int r = 0; r < rows; ++r) _mm_prefetch(reinterpret_cast<const char*>(p + r * ld), _MM_HINT_T0);
}

void RowsAsOutputs(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, int64_t ldw, float* y,
                   int64_t ldy) {
  // X^T pair-interleaved: row p holds (x[r, 2p], x[r, 2p + 1]) for r < 16,
  // zero past m. Kept per thread (32 bytes per k), so a call allocates
  // nothing once it has run.
  thread_local std::vector<uint32_t> xt;
  xt.assign(static_cast<size_t>(k / 2) * 16, 0);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t p = 0; p < k / 2; ++p)
      xt[p * 16 + r] = x[r * k + 2 * p] | static_cast<uint32_t>(x[r * k + 2 * p + 1]) << 16;
  alignas(64) float c[2][16 * 16];
  const int64_t stride = ldw * 2;
  // Sums in 0 and 1, W's rows in 2 and 3, x^T in 4.
  Tiles tiles;
  for (int64_t j = 0; j < n; j += 32) {
    _tile_zero(0);
    _tile_zero(1);
    const uint16_t* w0 = w + j * ldw;
    const uint16_t* w1 = w0 + 16 * ldw;
    const bool more = j + 32 < n;
    for (int64_t i = 0; i < k; i += 32) {
      // These 32 rows further on, or the next block's at its start.
      FetchRows<32>(i + kFetchAhead < k ? w0 + i + kFetchAhead : more ? w0 + 32 * ldw + (i + kFetchAhead - k) : nullptr,
                ldw);
      _tile_loadd(4, xt.data() + (i / 2) * 16, 64);
      _tile_loadd(2, w0 + i, stride);
      _tile_loadd(3, w1 + i, stride);
      _tile_dpbf16ps(0, 2, 4);
      _tile_dpbf16ps(1, 3, 4);
    }
    _tile_stored(0, c[0], 64);
    _tile_stored(1, c[1], 64);
    StoreTransposed(c[0], m, 16, y + j, ldy);
    StoreTransposed(c[1], m, 16, y + j + 16, ldy);
  }
}

// An infinite or NaN weight makes NaN of the zero it meets in the [k, n]
// product's spread x, and so of its neighbouring column's sums. Where a
// row of y has NaN and its row of x is finite, the 16-column stripes
// holding them are summed again without zeros, 16 columns at a time in f32
// lanes (a step whose activations overflowed has NaN in every column: one
// product at a time took 50 times the product's own time). A row of x with
// a NaN is NaN throughout in any order of sums; one with an infinity has
// no finite sum, and is left as it came (NaN where an infinite weight's
// neighbour would have been infinite).
void MendSpuriousNans(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, int64_t ldw,
                      int64_t blocks, int64_t block_stride, float* y, int64_t ldy) {
  for (int64_t r = 0; r < m; ++r) {
    const float* yr = y + r * ldy;
    bool any = false;
    for (int64_t c = 0; c < blocks * n && !any; ++c) any = std::isnan(yr[c]);
    if (!any) continue;
    bool x_finite = true;
    for (int64_t i = 0; i < k && x_finite; ++i) x_finite = (x[r * k + i] & 0x7F80) != 0x7F80;
    if (!x_finite) continue;
    for (int64_t c0 = 0; c0 < blocks * n; c0 += 16) {  // n is whole 32s: stripes stay in a block
      bool stripe = false;
      for (int64_t c = c0; c < c0 + 16; ++c) stripe = stripe || std::isnan(yr[c]);
      if (!stripe) continue;
      const uint16_t* ws = w + (c0 / n) * block_stride + c0 % n;
      __m512 sum = _mm512_setzero_ps();
      for (int64_t i = 0; i < k; ++i) {
        const __m512 wv = _mm512_castsi512_ps(_mm512_slli_epi32(
            _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(ws + i * ldw))), 16));
        const __m512 xv = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(uint32_t{x[r * k + i]} << 16)));
        sum = _mm512_fmadd_ps(xv, wv, sum);
      }
      _mm512_storeu_ps(y + r * ldy + c0, sum);
    }
  }
}

// y[0:m, 0:n] = x . W, W [k, n] loaded as second operands where it lies: a
// tile of 16 of W's rows and 32 of its columns pairs adjacent columns
// (c, c + 1) of one row. Against a first operand holding x[r, i] in each
// pair's first place and zero in its second, the sums are W's even
// columns; against x in the second places, its odd ones. That is twice
// the multiply-adds (the tile unit has them to spare) and no interleaving
// of W's rows into pairs (which left one thread reading 8-11 GB/s of the
// 14.7 its core can take). The sums stay in tiles down a run of 32 rows,
// 64 columns at a time, while the next 64 columns are fetched (runs of 64
// and more measured slower in whole models): 8 layers of 11 rows against
// bf16 2048 x 8192 and 8192 x 2048, 27-28 -> 23-26 ms; 1152 x 6912 and back
// 39-52 -> 36 ms.
//
// `blocks` matrices [k, n], `block_stride` elements apart, are taken as one
// [k, blocks * n]: a run of rows goes through every block before the next
// run, so a thread reads as many streams as there are blocks (gemma's q
// einsum: 4 heads of [1152, 256]; one narrow stream a thread left the
// memory idle between its requests).
void ColumnsAsOutputs(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, int64_t ldw,
                      int64_t blocks, int64_t block_stride, float* y, int64_t ldy) {
  constexpr int64_t kRunRows = 32;
  // Each of x's rows spread out with zeros, [0, x0, 0, x1, ..., x(k-1), 0]:
  // from element 1 the even columns' first operand, from element 0 the odd
  // columns'. As 32-bit words that is x[r, i] << 16, 16 at a time. Kept per
  // thread, so a call allocates nothing once it has run.
  const int64_t ldx = 2 * k + 32;
  thread_local std::vector<uint16_t> spread;
  spread.resize(static_cast<size_t>(m * ldx));
  for (int64_t r = 0; r < m; ++r) {
    uint16_t* row = spread.data() + r * ldx;
    for (int64_t i = 0; i < k; i += 16) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + r * k + i));
      _mm512_storeu_si512(row + 2 * i, _mm512_slli_epi32(_mm512_cvtepu16_epi32(v), 16));
    }
    std::fill(row + 2 * k, row + ldx, uint16_t{0});
  }
  const int64_t x_stride = ldx * 2, w_stride = ldw * 2;

  const int64_t columns = blocks * n;
  for (int64_t r = 0; r < m; ++r) std::fill(y + r * ldy, y + r * ldy + columns, 0.0f);
  alignas(64) float c[4][16 * 16];
  const __m512i first_idx = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i second_idx = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  // yj[0:m, 0:32] += the even and odd columns' sums, interleaved.
  auto add_to_y = [&](const float* even, const float* odd, float* yj) {
    for (int64_t r = 0; r < m; ++r) {
      const __m512 e = _mm512_load_ps(even + r * 16), o = _mm512_load_ps(odd + r * 16);
      float* out = yj + r * ldy;
      _mm512_storeu_ps(out, _mm512_add_ps(_mm512_loadu_ps(out), _mm512_permutex2var_ps(e, first_idx, o)));
      _mm512_storeu_ps(out + 16, _mm512_add_ps(_mm512_loadu_ps(out + 16), _mm512_permutex2var_ps(e, second_idx, o)));
    }
  };

  // Sums of columns j..j+31 in tiles 0 (even) and 1 (odd), j+32..j+63 in
  // 2 and 3; x's operands in 4 and 5, W's in 6 and 7.
  Tiles tiles(static_cast<int>(m), /*short_tiles=*/6);
  for (int64_t i0 = 0; i0 < k; i0 += kRunRows) {
    const int64_t i1 = std::min(k, i0 + kRunRows);
    for (int64_t p = 0; p < blocks; ++p) {
      const uint16_t* wp = w + p * block_stride;
      float* yp = y + p * n;
      for (int64_t j = 0; j < n; j += 64) {
        const bool two = j + 64 <= n;
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
        for (int64_t i = i0; i < i1; i += 16) {
          // These rows' next 64 columns, the next block's first ones, or
          // the next run's.
          const uint16_t* next = j + 64 < n        ? wp + i * ldw + j + 64
                                 : p + 1 < blocks  ? wp + block_stride + i * ldw
                                 : i + kRunRows < k ? w + (i + kRunRows) * ldw
                                                    : nullptr;
          if (next != nullptr) {
            FetchRows<16>(next, ldw);
            FetchRows<16>(next + 32, ldw);
          }
          _tile_loadd(4, spread.data() + 1 + 2 * i, x_stride);
          _tile_loadd(5, spread.data() + 2 * i, x_stride);
          _tile_loadd(6, wp + i * ldw + j, w_stride);
          _tile_dpbf16ps(0, 4, 6);
          _tile_dpbf16ps(1, 5, 6);
          if (two) {
            _tile_loadd(7, wp + i * ldw + j + 32, w_stride);
            _tile_dpbf16ps(2, 4, 7);
            _tile_dpbf16ps(3, 5, 7);
          }
        }
        _tile_stored(0, c[0], 64);
        _tile_stored(1, c[1], 64);
        add_to_y(c[0], c[1], yp + j);
        if (two) {
          _tile_stored(2, c[2], 64);
          _tile_stored(3, c[3], 64);
          add_to_y(c[2], c[3], yp + j + 32);
        }
      }
    }
  }

  MendSpuriousNans(x, m, w, k, n, ldw, blocks, block_stride, y, ldy);
}

}  // namespace

void Bf16TileProduct(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, bool w_rows_are_outputs,
                     int64_t ldw, float* y, int64_t ldy) {
  if (w_rows_are_outputs) RowsAsOutputs(x, m, w, k, n, ldw, y, ldy);
  else ColumnsAsOutputs(x, m, w, k, n, ldw, /*blocks=*/1, /*block_stride=*/0, y, ldy);
}

void Bf16TileProductBlocks(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, int64_t ldw,
                           int64_t blocks, int64_t block_stride, float* y, int64_t ldy) {
  ColumnsAsOutputs(x, m, w, k, n, ldw, blocks, block_stride, y, ldy);
}

}  // namespace neuron::kernels
