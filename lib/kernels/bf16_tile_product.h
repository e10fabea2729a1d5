// bf16 skinny products on AMX tiles, for Bf16PairProduct's wider cases:
// from 3 rows of x up a pair dot product per 16 sums no longer keeps up with
// the memory, where one tile instruction does 8192 multiply-adds.
#ifndef NEURON_LIB_KERNELS_BF16_TILE_PRODUCT_H_
#define NEURON_LIB_KERNELS_BF16_TILE_PRODUCT_H_

#include <cstdint>

namespace neuron::kernels {

// Whether this CPU has AMX (tiles, bf16) and the kernel lets this process
// use it (asked once: arch_prctl ARCH_REQ_XCOMP_PERM).
bool Bf16TilesAvailable();

// Bf16PairProduct's contract, for 1 <= m <= 16, k and n multiples of 32.
// Only where Bf16TilesAvailable().
void Bf16TileProduct(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, bool w_rows_are_outputs,
                     int64_t ldw, float* y, int64_t ldy);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_BF16_TILE_PRODUCT_H_
