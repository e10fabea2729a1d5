#include "lib/kernels/bf16_pair_product.h"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/kernels/f32_tiles.h"

namespace neuron::kernels {
namespace {

bool CpuHasAvx512Bf16() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  // Leaf 7, sub-leaf 1: EAX bit 5 is AVX512_BF16.
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d) == 0) return false;
  return (a & (1u << 5)) != 0;
}

constexpr int kArchReqXcompPerm = 0x1023;  // arch_prctl: ask for an XSAVE feature
constexpr int kXfeatureXtileData = 18;     // AMX's tile data

bool CpuAndOsAllowTiles() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  // Leaf 7, sub-leaf 0: EDX bit 24 is AMX-TILE, bit 22 AMX-BF16.
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
  if ((d & (1u << 24)) == 0 || (d & (1u << 22)) == 0) return false;
  // Linux hands the tile state to a process that asks (5.16 and later).
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtileData) == 0;
}

}  // namespace

bool Bf16PairProductAvailable() {
  // F32TilesAvx512Available: AVX-512 F, DQ, VL, BW and the OS saving
  // their registers.
  static const bool available = F32TilesAvx512Available() && CpuHasAvx512Bf16();
  return available;
}

bool Bf16TilesAvailable() {
  // The pair products' AVX-512 too: the tiles are called from them.
  static const bool available = Bf16PairProductAvailable() && CpuAndOsAllowTiles();
  return available;
}

}  // namespace neuron::kernels
