// y = x . W for a few bf16 rows x and a bf16 matrix W on AVX512_BF16's
// pair dot product (vdpbf16ps: 16 lanes, each adding two products of bf16
// pairs to an f32 sum): 32 multiply-adds an instruction, on the weights as
// they are stored, where widening them to f32 first gives 8 (AVX2) or 16.
// The products of a prompt's rows against an LLM's bf16 weights are
// bounded by those multiply-adds on AVX2; these reach the memory's speed.
//
// The sums are f32 as in every other dot (each product of two bf16 values
// is exact in f32), except that the instruction treats bf16 denormals
// (below 2^-126 in magnitude) as zero and flushes denormal sums to zero.
#ifndef NEURON_LIB_KERNELS_BF16_PAIR_PRODUCT_H_
#define NEURON_LIB_KERNELS_BF16_PAIR_PRODUCT_H_

#include <cstdint>

namespace neuron::kernels {

// Whether this CPU (and OS) runs Bf16PairProduct: AVX-512 (F, BW, VL, DQ)
// with AVX512_BF16.
bool Bf16PairProductAvailable();

// y[r * ldy + j] = sum_i x[r * k + i] * W(i, j) for r < m, j < n, i < k,
// x and W bf16 (raw bits). W(i, j) is element j * ldw + i of `w` when
// `w_rows_are_outputs` ([n, k]) and i * ldw + j otherwise ([k, n]). One
// thread; callers split the columns. Only where Bf16PairProductAvailable().
void Bf16PairProduct(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, bool w_rows_are_outputs,
                     int64_t ldw, float* y, int64_t ldy);

// AMX tiles, which Bf16PairProduct hands its wider cases (from 3 rows of x
// on, a pair dot product per 16 sums no longer keeps up with the memory;
// one tile instruction does 8192 multiply-adds):
//
// Whether this CPU has AMX (tiles, bf16) and the kernel lets this process
// use it (asked once: arch_prctl ARCH_REQ_XCOMP_PERM).
bool Bf16TilesAvailable();
// Bf16PairProduct's contract, for 1 <= m <= 16 and k, n multiples of 32
// (bf16_tile_product_amx.cc). Only where Bf16TilesAvailable().
void Bf16TileProduct(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, bool w_rows_are_outputs,
                     int64_t ldw, float* y, int64_t ldy);
// `blocks` [k, n] matrices `block_stride` elements apart against the same
// x, as one product: y[r * ldy + p * n + j] = sum_i x[r * k + i] *
// w[p * block_stride + i * ldw + j] for p < blocks (a thread then reads a
// stream from each). Its contract otherwise as Bf16TileProduct's.
void Bf16TileProductBlocks(const uint16_t* x, int64_t m, const uint16_t* w, int64_t k, int64_t n, int64_t ldw,
                           int64_t blocks, int64_t block_stride, float* y, int64_t ldy);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_BF16_PAIR_PRODUCT_H_
