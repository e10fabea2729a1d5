#include "lib/kernels/bf16_pair_product.h"

#include <cpuid.h>

#include "lib/kernels/f32_tiles.h"

namespace neuron::kernels {
namespace {

bool CpuHasAvx512Bf16() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  // Leaf 7, sub-leaf 1: EAX bit 5 is AVX512_BF16.
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d) == 0) return false;
  return (a & (1u << 5)) != 0;
}

}  // namespace

bool Bf16PairProductAvailable() {
  // F32TilesAvx512Available: AVX-512 F, DQ, VL, BW and the OS saving
  // their registers.
  static const bool available = F32TilesAvx512Available() && CpuHasAvx512Bf16();
  return available;
}

}  // namespace neuron::kernels
