#include "lib/kernels/bf16_tile_product.h"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/kernels/bf16_pair_product.h"

namespace neuron::kernels {
namespace {

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

bool Bf16TilesAvailable() {
  // The pair products' AVX-512 is needed too: the tiles' callers are in them.
  static const bool available = Bf16PairProductAvailable() && CpuAndOsAllowTiles();
  return available;
}

}  // namespace neuron::kernels
