// Bf16PairProduct's AMX kernels (tdpbf16ps: a 16x16 f32 tile += a 16x32
// bf16 tile times a 32x16 one, 8192 multiply-adds an instruction), built
// with AMX enabled (only this file); called where Bf16TilesAvailable().
//
// W stored [n, k]: Y^T = W . X^T, W's rows loaded as tiles where they lie
// (16 outputs x 32 of k), X^T laid out once per call in the pair-interleaved
// form the instruction takes for its second operand.
// W stored [k, n]: Y = X . W, X's m rows the first operand, W's pairs of
// rows interleaved into a 1 KB tile in registers on the way, the sums
// accumulated in y, a pass of 32 rows of W at a time.
//
// Both fetch W's lines a few steps ahead of the tile loads.
#include <immintrin.h>

#include <algorithm>
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

// Tiles of 64-byte rows, 16 of them but for those `rows` names (the sums
// and x's tile in the [k, n] products: x's m rows where they lie);
// released when the product is done, so the thread does not carry AMX
// state into context switches.
class Tiles {
 public:
  explicit Tiles(int rows_of_0_to_2 = 16) {
    TileConfig config;
    for (int t = 0; t < 8; ++t) {
      config.rows[t] = static_cast<uint8_t>(t <= 2 ? rows_of_0_to_2 : 16);
      config.bytes_per_row[t] = 64;
    }
    _tile_loadconfig(&config);
  }
  ~Tiles() { _tile_release(); }
  Tiles(const Tiles&) = delete;
  Tiles& operator=(const Tiles&) = delete;
};

// Tile registers, written as numbers (GCC's tile intrinsics paste their
// argument's text into the instruction): sums in 0 and 1, first operands
// in 2 and 3, second operands in 4 and 5.

// y[r, j + t] = c[t * 16 + r] for r < m, t < cols: a [16 outputs][16 rows]
// block of sums back into y.
void StoreTransposed(const float* c, int64_t m, int64_t cols, float* y, int64_t ldy) {
  for (int64_t r = 0; r < m; ++r)
    for (int64_t t = 0; t < cols; ++t) y[r * ldy + t] = c[t * 16 + r];
}

// How far ahead along W's rows the kernels fetch (elements: 4 lines, 4
// steps of 32): left to the hardware, the tile loads wait on every line
// they read and one thread read 12.5 GB/s of the 14.7 its core can take;
// fetched, two threads read 25-26 GB/s of 28 (6912 x 1152 bf16, 11 rows).
constexpr int64_t kFetchAhead = 128;

// Starts loading the line at `p` in each of 32 rows `ld` elements apart;
// null for none.
inline void FetchRows(const uint16_t* p, int64_t ld) {
  if (p == nullptr) return;
  for (int r = 0; r < 32; ++r) _mm_prefetch(reinterpret_cast<const char*>(p + r * ld), _MM_HINT_T0);
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
  Tiles tiles;
  for (int64_t j = 0; j < n; j += 32) {
    _tile_zero(0);
    _tile_zero(1);
    const uint16_t* w0 = w + j * ldw;
    const uint16_t* w1 = w0 + 16 * ldw;
    const bool more = j + 32 < n;
    for (int64_t i = 0; i < k; i += 32) {
      // These 32 rows further on, or the next block's at its start.
      FetchRows(i + kFetchAhead < k ? w0 + i + kFetchAhead : more ? w0 + 32 * ldw + (i + kFetchAhead - k) : nullptr,
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

// The 16 x 32 tile of pairs (w[i + 2p, j + c], w[i + 2p + 1, j + c]) for
// p, c < 16, from 32 rows of a [k, n] matrix.
inline void InterleaveRows(const uint16_t* w, int64_t ldw, uint16_t* tile) {
  const __m512i idx = _mm512_setr_epi32(0x00200000, 0x00210001, 0x00220002, 0x00230003, 0x00240004, 0x00250005,
                                        0x00260006, 0x00270007, 0x00280008, 0x00290009, 0x002A000A, 0x002B000B,
                                        0x002C000C, 0x002D000D, 0x002E000E, 0x002F000F);
  for (int p = 0; p < 16; ++p) {
    const __m512i a = _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 2 * p * ldw)));
    const __m512i b =
        _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + (2 * p + 1) * ldw)));
    _mm512_store_si512(tile + p * 32, _mm512_permutex2var_epi16(a, idx, b));
  }
}

// y[0:m, 0:n] = x . W, a pass of 32 rows of W at a time across all n
// columns. The sums are y itself, m rows a tile (no padding to 16), x's tile its m
// rows where they lie.
void ColumnsAsOutputs(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, int64_t ldw, float* y,
                      int64_t ldy) {
  for (int64_t r = 0; r < m; ++r) std::fill(y + r * ldy, y + r * ldy + n, 0.0f);
  alignas(64) uint16_t b[2][16 * 32];
  const int64_t y_stride = ldy * 4;
  Tiles tiles(static_cast<int>(m));
  for (int64_t i = 0; i < k; i += 32) {
    _tile_loadd(2, x + i, k * 2);
    const uint16_t* wi = w + i * ldw;
    for (int64_t j = 0; j < n; j += 32) {
      // These rows' columns further on, or the next pass's first ones.
      FetchRows(j + kFetchAhead < n       ? wi + j + kFetchAhead
                : i + 32 < k ? wi + 32 * ldw + (j + kFetchAhead - n)
                             : nullptr,
                ldw);
      _tile_loadd(0, y + j, y_stride);
      _tile_loadd(1, y + j + 16, y_stride);
      InterleaveRows(wi + j, ldw, b[0]);
      InterleaveRows(wi + j + 16, ldw, b[1]);
      _tile_loadd(4, b[0], 64);
      _tile_loadd(5, b[1], 64);
      _tile_dpbf16ps(0, 2, 4);
      _tile_dpbf16ps(1, 2, 5);
      _tile_stored(0, y + j, y_stride);
      _tile_stored(1, y + j + 16, y_stride);
    }
  }
}

}  // namespace

void Bf16TileProduct(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, bool w_rows_are_outputs,
                     int64_t ldw, float* y, int64_t ldy) {
  if (w_rows_are_outputs) RowsAsOutputs(x, m, w, k, n, ldw, y, ldy);
  else ColumnsAsOutputs(x, m, w, k, n, ldw, y, ldy);
}

}  // namespace neuron::kernels
