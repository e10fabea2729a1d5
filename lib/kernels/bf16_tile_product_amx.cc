// Bf16PairProduct's AMX kernels (tdpbf16ps: a 16x16 f32 tile += a 16x32
// bf16 tile times a 32x16 one, 8192 multiply-adds an instruction), built
// with AMX enabled (only this file); called where Bf16TilesAvailable().
//
// W stored [n, k]: Y^T = W . X^T, W's rows loaded as tiles where they lie
// (16 outputs x 32 of k), X^T laid out once per call in the pair-interleaved
// form the instruction takes for its second operand.
// W stored [k, n]: Y = X . W, either W's rows regrouped into pairs on the
// way into a stage in L2 (the staged kernel), or, for few rows of x
// against wide rows, W's rows loaded as tiles where they lie (16 of k x 32
// outputs) and X spread out with zeros so each tile product gives the even
// or the odd outputs. The two loading tiles where W lies fetch its lines a
// few steps ahead.
#include <immintrin.h>

#include <algorithm>
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
// run, so a thread reads as many streams as there are blocks (one narrow
// stream a thread left the memory idle between its requests). The staged
// kernel below takes every case but few rows against wide ones.
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


// The staged [k, n] product: y[0:m, 0:blocks * n] = x . W, each multiply-
// add done once. The tile unit takes its second operand with the pairs
// along k adjacent; two of W's rows interleaved word by word (unpacking two
// loads) are that, for 16 columns at a time. So W is read two rows at a
// time, front to back, into a stage in L2, and the tiles multiply what was
// staged. Each run stages 32 rows from each of four places far apart: one
// sequential stream a core leaves the memory idle between the prefetcher's
// requests (two threads read 20.5 GB/s that way, 26-29 from four or more
// places each).
//
// Measured on 2 threads against the spread-x kernel above, 11 rows of x:
// 6912 x 1152 16.4 -> 21.2 GB/s, 1152 x 256 12.5 -> 18.8; 16 rows against
// 8192 x 2048 14 -> 22. The spread-x kernel keeps few rows against wide
// ones (2048 x 8192, 3 rows: 25 against 20-21), where its short runs
// stream well and a stage of whole rows would not fit in L2.
constexpr int kStagedStreams = 4;
// Columns staged at a time: matrices wider than one and a half of these go
// in panels of them, so a run's stage stays within L2 (4 streams x 2048
// columns: 512 KiB; 768 at most, for a matrix taken whole).
constexpr int64_t kStagedPanel = 2048;

bool StagedSuits(int64_t m, int64_t n) { return m > 6 || n <= kStagedPanel; }

// One panel (every column of W with blocks > 1).
void StagedPanel(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, int64_t ldw, int64_t blocks,
                 int64_t block_stride, float* y, int64_t ldy);

void ColumnsAsOutputsStaged(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, int64_t ldw,
                            int64_t blocks, int64_t block_stride, float* y, int64_t ldy) {
  if (n <= kStagedPanel * 3 / 2) {
    StagedPanel(x, m, w, k, n, ldw, blocks, block_stride, y, ldy);
    return;
  }
  for (int64_t p = 0; p < blocks; ++p)
    for (int64_t j = 0; j < n; j += kStagedPanel) {
      const int64_t cols = std::min<int64_t>(kStagedPanel, n - j);
      StagedPanel(x, m, w + p * block_stride + j, k, cols, ldw, 1, 0, y + p * n + j, ldy);
    }
}

void StagedPanel(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, int64_t ldw, int64_t blocks,
                 int64_t block_stride, float* y, int64_t ldy) {
  constexpr int kStreams = kStagedStreams;
  const int64_t columns = blocks * n;
  const int64_t chunks = n / 32;  // of a block
  // Sums per 32-column chunk: two [16 rows][16] tiles, of the columns the
  // low and the high unpack put in each 128-bit lane (0-3 and 4-7 of every
  // 8); put in column order at the end. Kept per thread, as the stage.
  thread_local std::vector<float> sums_store;
  sums_store.assign(static_cast<size_t>(columns / 32 * 512 + 16), 0.0f);
  float* sums = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(sums_store.data()) + 63) & ~uintptr_t{63});
  // Staged B tiles of one run: [stream][chunk][half][16 pair rows][32 words].
  thread_local std::vector<uint16_t> stage_store;
  stage_store.resize(static_cast<size_t>(kStreams * chunks * 1024 + 32));
  uint16_t* stage = reinterpret_cast<uint16_t*>((reinterpret_cast<uintptr_t>(stage_store.data()) + 63) & ~uintptr_t{63});
  const int64_t x_stride = k * 2;
  // W's tiles of 32 rows, numbered block by block; stream s takes its
  // share of them in order.
  const int64_t per_block = k / 32, total = blocks * per_block;
  const int streams = static_cast<int>(std::min<int64_t>(kStreams, total));
  int64_t next[kStreams], end[kStreams];
  for (int s = 0; s < streams; ++s) {
    next[s] = total * s / streams;
    end[s] = total * (s + 1) / streams;
  }
  // A tiles (x) in 0 to 3, sums in 4 and 5, W's staged tiles in 6 and 7.
  Tiles tiles(static_cast<int>(m), /*short_tiles=*/6);
  for (;;) {
    const uint16_t* rows[kStreams];
    int64_t tile_of[kStreams];
    int live = 0;
    for (int s = 0; s < streams; ++s)
      if (next[s] < end[s]) {
        const int64_t t = next[s]++;
        tile_of[live] = t;
        rows[live++] = w + (t / per_block) * block_stride + (t % per_block) * 32 * ldw;
      }
    if (live == 0) break;
    // Stage: pairs of rows, each read front to back, the streams in turn.
    for (int64_t q = 0; q < 16; ++q)
      for (int64_t c = 0; c < chunks; ++c)
        for (int s = 0; s < live; ++s) {
          const uint16_t* a = rows[s] + 2 * q * ldw + 32 * c;
          const __m512i av = _mm512_loadu_si512(a), bv = _mm512_loadu_si512(a + ldw);
          uint16_t* t = stage + (s * chunks + c) * 1024 + q * 32;
          _mm512_store_si512(t, _mm512_unpacklo_epi16(av, bv));
          _mm512_store_si512(t + 512, _mm512_unpackhi_epi16(av, bv));
        }
    for (int s = 0; s < live; ++s) {
      const int64_t i = (tile_of[s] % per_block) * 32;
      switch (s) {  // tile numbers are immediates
        case 0: _tile_loadd(0, x + i, x_stride); break;
        case 1: _tile_loadd(1, x + i, x_stride); break;
        case 2: _tile_loadd(2, x + i, x_stride); break;
        default: _tile_loadd(3, x + i, x_stride); break;
      }
    }
    // Streams of one block share its sums: loaded and stored once.
    bool one_block = true;
    for (int s = 1; s < live; ++s) one_block = one_block && tile_of[s] / per_block == tile_of[0] / per_block;
    for (int s = 0; s < live; s = one_block ? live : s + 1) {
      const int64_t block = tile_of[s] / per_block;
      const int last = one_block ? live : s + 1;
      for (int64_t c = 0; c < chunks; ++c) {
        float* sc = sums + (block * chunks + c) * 512;
        _tile_loadd(4, sc, 64);
        _tile_loadd(5, sc + 256, 64);
        for (int u = s; u < last; ++u) {
          const uint16_t* t = stage + (u * chunks + c) * 1024;
          _tile_loadd(6, t, 64);
          _tile_loadd(7, t + 512, 64);
          switch (u) {
            case 0: _tile_dpbf16ps(4, 0, 6); _tile_dpbf16ps(5, 0, 7); break;
            case 1: _tile_dpbf16ps(4, 1, 6); _tile_dpbf16ps(5, 1, 7); break;
            case 2: _tile_dpbf16ps(4, 2, 6); _tile_dpbf16ps(5, 2, 7); break;
            default: _tile_dpbf16ps(4, 3, 6); _tile_dpbf16ps(5, 3, 7); break;
          }
        }
        _tile_stored(4, sc, 64);
        _tile_stored(5, sc + 256, 64);
      }
    }
  }
  const __m512i first_idx = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i second_idx = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  for (int64_t c = 0; c < columns / 32; ++c)
    for (int64_t r = 0; r < m; ++r) {
      const __m512 lo = _mm512_load_ps(sums + c * 512 + r * 16), hi = _mm512_load_ps(sums + c * 512 + 256 + r * 16);
      _mm512_storeu_ps(y + r * ldy + 32 * c, _mm512_permutex2var_ps(lo, first_idx, hi));
      _mm512_storeu_ps(y + r * ldy + 32 * c + 16, _mm512_permutex2var_ps(lo, second_idx, hi));
    }
}

}  // namespace

void Bf16TileProduct(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, bool w_rows_are_outputs,
                     int64_t ldw, float* y, int64_t ldy) {
  if (w_rows_are_outputs) RowsAsOutputs(x, m, w, k, n, ldw, y, ldy);
  else Bf16TileProductBlocks(x, m, w, k, n, ldw, /*blocks=*/1, /*block_stride=*/0, y, ldy);
}

void Bf16TileProductBlocks(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, int64_t ldw,
                           int64_t blocks, int64_t block_stride, float* y, int64_t ldy) {
  if (StagedSuits(m, n)) ColumnsAsOutputsStaged(x, m, w, k, n, ldw, blocks, block_stride, y, ldy);
  else ColumnsAsOutputs(x, m, w, k, n, ldw, blocks, block_stride, y, ldy);
}

}  // namespace neuron::kernels
