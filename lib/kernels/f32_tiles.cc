#include "lib/kernels/f32_tiles.h"

#include <cpuid.h>

#include <cstdint>

namespace neuron::kernels {
namespace {

// Asked with cpuid on first use rather than with __builtin_cpu_supports:
// that links libgcc's CPU probe, a constructor running a dozen cpuid
// instructions (each a trap to the hypervisor in a VM) at every start of
// every tool with lib/kernels in it, about a sixth of neuron-exec's start.
bool CpuAndOsSupportAvx512() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0 || (c & bit_OSXSAVE) == 0) return false;
  // The OS must save what AVX-512 uses: SSE and AVX state (XCR0 bits 1, 2),
  // the opmask registers and both halves of the 512-bit ones (bits 5-7).
  uint32_t xcr0 = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0), "=d"(xcr0_high) : "c"(0));
  constexpr uint32_t kAvx512State = 0xE6;
  if ((xcr0 & kAvx512State) != kAvx512State) return false;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
  constexpr unsigned kWanted = bit_AVX512F | bit_AVX512DQ | bit_AVX512VL | bit_AVX512BW;
  return (b & kWanted) == kWanted;
}

}  // namespace

bool F32TilesAvx512Available() {
  // Everything x86-64-v4 promises that the runner uses.
  static const bool available = CpuAndOsSupportAvx512();
  return available;
}

F32TilesIsa BestF32TilesIsa() {
  return F32TilesAvx512Available() ? F32TilesIsa::kAvx512 : F32TilesIsa::kAvx2;
}

void RunF32Tiles(F32TilesIsa isa, const F32TileJob& job) {
  if (isa == F32TilesIsa::kAvx512) RunF32TilesAvx512(job);
  else RunF32TilesAvx2(job);
}

}  // namespace neuron::kernels
