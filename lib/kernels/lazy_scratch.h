// Kernel scratch whose size is fixed when a kernel is planned (at load)
// but whose memory is taken only when the kernel first runs, and not
// zeroed: planning a model with gigabyte operands must not commit
// gigabytes of host memory at load (zeroing touches every page), and a
// kernel that never runs never costs its scratch. Users write before they
// read, as they did with the zero-filled vectors this replaces. The
// memory starts on a cache line: oneDNN's reorders and convolutions read
// and write it with 64-byte vectors, and malloc's 16-byte alignment made
// every one of those straddle two lines (a convolution 15% slower).
#ifndef NEURON_LIB_KERNELS_LAZY_SCRATCH_H_
#define NEURON_LIB_KERNELS_LAZY_SCRATCH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace neuron::kernels {

class LazyScratch {
 public:
  // Sets the size; memory already taken is dropped.
  void resize(size_t bytes) {
    bytes_ = bytes;
    data_.reset();
  }
  size_t size() const { return bytes_; }
  bool empty() const { return bytes_ == 0; }
  // The memory, taken (uninitialized) on first use.
  uint8_t* data() {
    if (data_ == nullptr && bytes_ > 0) data_.reset(new (kAlignment) uint8_t[bytes_]);
    return data_.get();
  }

 private:
  static constexpr std::align_val_t kAlignment{64};
  struct AlignedDelete {
    void operator()(uint8_t* p) const { ::operator delete[](p, kAlignment); }
  };
  size_t bytes_ = 0;
  std::unique_ptr<uint8_t[], AlignedDelete> data_;
};

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_LAZY_SCRATCH_H_
