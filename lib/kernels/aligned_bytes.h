// Bytes that start on a cache line, owned: what tensors, kernels' own
// scratch and kept weight reorders are held in (oneDNN and the vector
// kernels read and write them with 64-byte vectors; malloc's 16-byte
// alignment made every one of those straddle two lines).
#ifndef NEURON_LIB_KERNELS_ALIGNED_BYTES_H_
#define NEURON_LIB_KERNELS_ALIGNED_BYTES_H_

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
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

// `bytes` starting on a 2 MiB boundary, its whole 2 MiB pages advised for
// huge pages (a partial last page stays on 4 KiB pages, so no huge page
// holds memory nobody asked for): buffers read whole on every call fault
// once per 2 MiB and walk fewer pages. Uninitialized; free with std::free;
// null when there is no memory.
inline void* AllocateOnHugePages(size_t bytes) {
  constexpr size_t kHuge = size_t{2} << 20;
  const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
  void* p = std::aligned_alloc(kHuge, rounded ? rounded : kHuge);
  if (p != nullptr && bytes >= kHuge) madvise(p, bytes / kHuge * kHuge, MADV_HUGEPAGE);
  return p;
}

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_ALIGNED_BYTES_H_
