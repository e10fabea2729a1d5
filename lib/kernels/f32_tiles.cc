#include "lib/kernels/f32_tiles.h"

namespace neuron::kernels {

bool F32TilesAvailable() {
  // Everything x86-64-v4 promises that the runner uses.
  static const bool available = __builtin_cpu_supports("avx512f") &&
                                __builtin_cpu_supports("avx512dq") &&
                                __builtin_cpu_supports("avx512vl") &&
                                __builtin_cpu_supports("avx512bw");
  return available;
}

}  // namespace neuron::kernels
