// AVX512_BF16's pair products against a double-precision reference: both
// layouts, 1 to 16 rows (every row group and tile width), odd and even
// lengths around the 32-value vectors and the 16-row passes, column tails
// around the 32-column chunks, and matrices with rows wider than the
// product (a thread's part of W). Where the CPU has AMX, the cases of 3 rows
// and more with k a multiple of 32 run on its tiles (their 512-column
// blocks crossed by n = 1056; wide ones on both [k, n] tile kernels), the
// pair products taking the tails. Skipped,
// with a notice, where the CPU lacks the instructions.
#include "lib/kernels/bf16_pair_product.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace neuron::kernels {
namespace {

uint16_t Bf16Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return static_cast<uint16_t>(u >> 16);  // exact: the values below have 8 significant bits
}

TEST(Bf16PairProductTest, BothLayoutsMatchTheReference) {
  if (!Bf16PairProductAvailable()) GTEST_SKIP() << "NOTICE: this CPU has no AVX512_BF16; pair products not tested";
  for (int64_t m : {1, 2, 3, 5, 11, 16}) {
    for (int64_t k : {1, 2, 15, 16, 17, 31, 32, 33, 64, 301}) {
      for (int64_t n : {1, 7, 8, 9, 31, 33, 64, 65, 129, 300, 1056}) {
        // W stored with wider rows than the product reads (ldw > k, > n).
        const int64_t ld_nk = k + 3, ld_kn = n + 5;
        std::vector<uint16_t> x(m * k), w_kn(k * ld_kn, 0x7FC0), w_nk(n * ld_nk, 0x7FC0);  // NaN outside
        std::vector<double> want(m * n, 0.0);
        for (int64_t i = 0; i < m * k; ++i) x[i] = Bf16Bits(static_cast<float>((i % 9) - 4) * 0.5f);
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = 0; j < n; ++j) {
            // Multiples of 1/4 up to 1.5; every sum a multiple of 1/8,
            // exact in f32 in any order.
            const float v = static_cast<float>(((i * 31 + j * 7) % 13) - 6) * 0.25f;
            w_kn[i * ld_kn + j] = Bf16Bits(v);
            w_nk[j * ld_nk + i] = Bf16Bits(v);
            for (int64_t r = 0; r < m; ++r) want[r * n + j] += (static_cast<double>((r * k + i) % 9) - 4) * 0.5 * v;
          }
        // Outputs into a wider y too, whose other columns stay untouched.
        const int64_t ldy = n + 2;
        std::vector<float> y_kn(m * ldy, -7.0f), y_nk(m * ldy, -7.0f);
        Bf16PairProduct(x.data(), m, w_kn.data(), k, n, false, ld_kn, y_kn.data(), ldy);
        Bf16PairProduct(x.data(), m, w_nk.data(), k, n, true, ld_nk, y_nk.data(), ldy);
        const std::string where = " m=" + std::to_string(m) + " k=" + std::to_string(k) + " n=" + std::to_string(n);
        for (int64_t r = 0; r < m; ++r) {
          for (int64_t j = 0; j < n; ++j) {
            ASSERT_EQ(y_kn[r * ldy + j], want[r * n + j]) << "[k, n] at " << r << "," << j << where;
            ASSERT_EQ(y_nk[r * ldy + j], want[r * n + j]) << "[n, k] at " << r << "," << j << where;
          }
          for (int64_t j = n; j < ldy; ++j) {
            ASSERT_EQ(y_kn[r * ldy + j], -7.0f) << "[k, n] wrote past its columns" << where;
            ASSERT_EQ(y_nk[r * ldy + j], -7.0f) << "[n, k] wrote past its columns" << where;
          }
        }
      }
    }
  }
}

TEST(Bf16PairProductTest, LargeSumsKeepF32Precision) {
  if (!Bf16PairProductAvailable()) GTEST_SKIP() << "NOTICE: this CPU has no AVX512_BF16; pair products not tested";
  // 4096 products of values near 1: an f32 sum is within 4096 * 2^-24 of
  // exact relative to the magnitude, where bf16 accumulation would be off
  // by far more (2^-8 per step).
  const int64_t m = 3, k = 4096, n = 40;
  std::vector<uint16_t> x(m * k), w(n * k);
  std::vector<double> want(m * n, 0.0);
  for (int64_t i = 0; i < m * k; ++i) x[i] = Bf16Bits(1.0f + static_cast<float>(i % 7) / 128.0f);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < k; ++i) {
      const float v = 1.0f - static_cast<float>((i + j) % 5) / 256.0f;
      w[j * k + i] = Bf16Bits(v);
      for (int64_t r = 0; r < m; ++r) want[r * n + j] += (1.0 + static_cast<double>((r * k + i) % 7) / 128.0) * v;
    }
  std::vector<float> y(m * n);
  Bf16PairProduct(x.data(), m, w.data(), k, n, true, k, y.data(), n);
  for (int64_t j = 0; j < m * n; ++j) EXPECT_NEAR(y[j], want[j], want[j] * 4096 * 0x1p-24) << j;
}


TEST(Bf16PairProductTest, InfiniteAndNanWeightsStayInTheirColumns) {
  if (!Bf16PairProductAvailable()) GTEST_SKIP() << "NOTICE: this CPU has no AVX512_BF16; pair products not tested";
  // Every row count (1-2 pair products, 3 and more AMX tiles where the CPU
  // has them) and both layouts: an infinite weight makes only its own
  // column infinite, a NaN weight only its own column NaN; the neighbouring
  // columns keep their sums. A NaN in a row of x makes its row NaN.
  const int64_t k = 64, n = 64;
  const int64_t inf_col = 6, nan_col = 33;
  for (int64_t m : {1, 2, 3, 11, 16}) {
    std::vector<uint16_t> x(m * k), w_kn(k * n), w_nk(n * k);
    for (int64_t i = 0; i < m * k; ++i) x[i] = Bf16Bits(0.5f + static_cast<float>(i % 3) * 0.25f);  // all > 0
    // A NaN in x's last row (from 3 rows on) makes that whole row NaN.
    const int64_t nan_row = m >= 3 ? m - 1 : -1;
    if (nan_row >= 0) x[nan_row * k + 5] = Bf16Bits(std::numeric_limits<float>::quiet_NaN());
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float v = static_cast<float>(((i + j) % 5) - 2) * 0.5f;
        if (j == inf_col && i == 10) v = std::numeric_limits<float>::infinity();
        if (j == nan_col && i == 20) v = std::numeric_limits<float>::quiet_NaN();
        w_kn[i * n + j] = w_nk[j * k + i] = Bf16Bits(v);
      }
    for (bool rows_are_outputs : {false, true}) {
      std::vector<float> y(m * n);
      Bf16PairProduct(x.data(), m, rows_are_outputs ? w_nk.data() : w_kn.data(), k, n, rows_are_outputs,
                      rows_are_outputs ? k : n, y.data(), n);
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < n; ++j) {
          const float got = y[r * n + j];
          const std::string where = "m=" + std::to_string(m) + (rows_are_outputs ? " [n, k]" : " [k, n]") +
                                    " at " + std::to_string(r) + "," + std::to_string(j);
          if (r == nan_row) EXPECT_TRUE(std::isnan(got)) << where;
          else if (j == inf_col) EXPECT_EQ(got, std::numeric_limits<float>::infinity()) << where;
          else if (j == nan_col) EXPECT_TRUE(std::isnan(got)) << where;
          else EXPECT_TRUE(std::isfinite(got)) << where << ": " << got;
        }
    }
  }
}

// `blocks` [k, n] matrices of exact bf16 values `block_stride` elements
// apart (rows `ldw` apart, NaN between and after them) against m rows of
// x, through the tile kernels (Bf16TileProduct for one block): every sum
// exact, nothing written past the product's columns.
void ExpectTileBlocksMatchTheReference(int64_t m, int64_t k, int64_t n, int64_t ldw, int64_t blocks,
                                       int64_t block_stride) {
  std::vector<uint16_t> x(m * k), w(blocks * block_stride, 0x7FC0);
  std::vector<double> want(m * blocks * n, 0.0);
  for (int64_t i = 0; i < m * k; ++i) x[i] = Bf16Bits(static_cast<float>((i % 9) - 4) * 0.5f);
  for (int64_t p = 0; p < blocks; ++p)
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const float v = static_cast<float>(((p * 5 + i * 31 + j * 7) % 13) - 6) * 0.25f;
        w[p * block_stride + i * ldw + j] = Bf16Bits(v);
        for (int64_t r = 0; r < m; ++r)
          want[r * blocks * n + p * n + j] += (static_cast<double>((r * k + i) % 9) - 4) * 0.5 * v;
      }
  const int64_t ldy = blocks * n + 5;
  std::vector<float> y(m * ldy, -7.0f);
  if (blocks == 1) Bf16TileProduct(x.data(), m, w.data(), k, n, false, ldw, y.data(), ldy);
  else Bf16TileProductBlocks(x.data(), m, w.data(), k, n, ldw, blocks, block_stride, y.data(), ldy);
  const std::string where = " m=" + std::to_string(m) + " k=" + std::to_string(k) + " n=" + std::to_string(n) +
                            " blocks=" + std::to_string(blocks);
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t c = 0; c < blocks * n; ++c)
      ASSERT_EQ(y[r * ldy + c], want[r * blocks * n + c]) << "at " << r << "," << c << where;
    for (int64_t c = blocks * n; c < ldy; ++c) ASSERT_EQ(y[r * ldy + c], -7.0f) << "wrote past its columns" << where;
  }
}

TEST(Bf16PairProductTest, TileBlocksMatchTheReference) {
  if (!Bf16TilesAvailable()) GTEST_SKIP() << "NOTICE: this CPU has no AMX; tile blocks not tested";
  // Three [k, n] blocks apart in memory (a gap between them), rows of W
  // wider than n, every row count the tiles take.
  for (int64_t m : {3, 7, 16}) ExpectTileBlocksMatchTheReference(m, 96, 96, 96 + 32, 3, 96 * (96 + 32) + 48);
}

TEST(Bf16PairProductTest, WideKnProductsMatchTheReferenceOnEitherTileKernel) {
  if (!Bf16TilesAvailable()) GTEST_SKIP() << "NOTICE: this CPU has no AMX; tile kernels not tested";
  // [k, n] past the staged kernel's 2048-column panel: few rows of x go to
  // the spread-x kernel, more to the staged one in panels (4160 columns:
  // two whole panels and a narrow one). k of 1, 3 and 5 tiles of 32 rows:
  // fewer tiles than the staged kernel's four streams, and an uneven share.
  for (int64_t n : {2080, 4160})
    for (int64_t k : {32, 96, 160})
      for (int64_t m : {3, 6, 7, 16})
        for (int64_t blocks : {1, 2}) ExpectTileBlocksMatchTheReference(m, k, n, n + 32, blocks, k * (n + 32) + 64);
}

}  // namespace
}  // namespace neuron::kernels
