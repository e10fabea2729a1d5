// Bytes that start on a cache line, owned: what tensors, kernels' own
// scratch and kept weight reorders are held in (oneDNN and the vector
// kernels read and write them with 64-byte vectors; malloc's 16-byte
// alignment made every one of those straddle two lines).
#ifndef NEURON_LIB_KERNELS_ALIGNED_BYTES_H_
#define NEURON_LIB_KERNELS_ALIGNED_BYTES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace neuron::kernels {

inline constexpr std::align_val_t kCacheLineAlignment{64};

struct CacheLineDelete {
  void operator()(uint8_t* p) const { ::operator delete[](p, kCacheLineAlignment); }
};
using AlignedBytes = std::unique_ptr<uint8_t[], CacheLineDelete>;

// `bytes` (at least one), uninitialized.
inline AlignedBytes AllocateAlignedBytes(size_t bytes) {
  return AlignedBytes(new (kCacheLineAlignment) uint8_t[bytes ? bytes : 1]);
}

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_ALIGNED_BYTES_H_
