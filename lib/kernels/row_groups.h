// The rows of a skinny product's x, taken in groups whose tiles of sums fit
// in registers: shared by the AVX2 products (skinny_product.cc) and the
// AVX-512 bf16 pair products (bf16_pair_product_avx512.cc).
#ifndef NEURON_LIB_KERNELS_ROW_GROUPS_H_
#define NEURON_LIB_KERNELS_ROW_GROUPS_H_

#include <cstdint>

namespace neuron::kernels {

// Calls tile.template operator()<R>(r0) for R = min(rows, kMaxRows) (a
// compile-time row count for a run-time one).
template <int kMaxRows, typename Tile>
void CallWithRows(int64_t rows, int64_t r0, const Tile& tile) {
  if constexpr (kMaxRows > 1) {
    if (rows < kMaxRows) return CallWithRows<kMaxRows - 1>(rows, r0, tile);
  }
  tile.template operator()<kMaxRows>(r0);
}

// The m rows of x in groups of at most kMaxRows, each group's tile of sums
// held in registers while the weights it needs are read; later groups find
// those weights in cache, so W comes from memory once however many rows
// there are. Calls tile.template operator()<R>(r0) for each group of rows
// [r0, r0 + R), the groups as even as possible (11 rows, at most 6 a
// group: 5 and 6).
template <int kMaxRows, typename Tile>
void ForRowGroups(int64_t m, const Tile& tile) {
  const int64_t groups = (m + kMaxRows - 1) / kMaxRows;
  int64_t r0 = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t rows = (m - r0) / (groups - g);
    CallWithRows<kMaxRows>(rows, r0, tile);
    r0 += rows;
  }
}

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_ROW_GROUPS_H_
