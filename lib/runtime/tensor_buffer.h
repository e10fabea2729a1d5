// A tensor's storage: a block of a core's HBM (category "tensors"), or host
// memory. What nrt_tensor_allocate hands out and what Model::Execute reads
// inputs from and writes outputs to, in place (no staging copies).
// A TensorBuffer must be freed before the Runtime that made it closes.
#ifndef NEURON_LIB_RUNTIME_TENSOR_BUFFER_H_
#define NEURON_LIB_RUNTIME_TENSOR_BUFFER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/device/hbm_arena.h"

namespace neuron::runtime {

class Core;

class TensorBuffer {
 public:
  // `size` bytes of the core's HBM; NRT_RESOURCE with the OOM report when
  // it does not fit.
  static absl::StatusOr<std::unique_ptr<TensorBuffer>> AllocateDevice(Core* core, uint64_t size,
                                                                      std::string name);
  // `size` bytes of host memory (64-byte aligned, zeroed); NRT_RESOURCE
  // when the host cannot back them.
  static absl::StatusOr<std::unique_ptr<TensorBuffer>> AllocateHost(uint64_t size,
                                                                    std::string name);
  // A tensor over memory someone else owns (a caller's buffer, or part of
  // another tensor; `core` is that tensor's core or null for host memory).
  // The memory must outlive the view; it is never freed by it.
  // A view of part of another tensor (`slice_of`) shares its contents'
  // version; any other view is of memory written behind the runtime's back
  // (version 0).
  static std::unique_ptr<TensorBuffer> View(void* data, uint64_t size, std::string name,
                                            Core* core = nullptr,
                                            const TensorBuffer* slice_of = nullptr);
  ~TensorBuffer();
  TensorBuffer(const TensorBuffer&) = delete;
  TensorBuffer& operator=(const TensorBuffer&) = delete;

  const std::string& name() const { return name_; }
  uint64_t size() const { return size_; }
  // The logical core whose HBM holds it; -1 for host memory.
  int core_id() const;
  bool on_device() const { return core_ != nullptr; }
  Core* core() const { return core_; }  // null for host memory
  // The HBM block of a device tensor that owns its memory (nullptr for
  // host memory and views).
  const device::HbmBlock* block() const { return core_ != nullptr && owned_ ? &block_ : nullptr; }
  // Mutable access counts as a write (a new version): only a const tensor
  // is read without changing it.
  void* data() {
    Touch();
    return data_;
  }
  const void* data() const { return data_; }
  // The address alone, for a writer that reports what it wrote itself
  // (Touch, once done): taking it is not a write.
  void* address() const { return data_; }

  // The contents' version: drawn from one process-wide counter after the
  // bytes may have changed, so an address and a version never name two
  // different contents; kernels keep work derived from the bytes under it (oneDNN's
  // reordered weights). 0 where the runtime cannot see the writes: a
  // caller's buffer, or once nrt_tensor_get_va handed the address out.
  uint64_t version() const;
  // The bytes may have changed: a new version (for this tensor and every
  // slice sharing its memory).
  void Touch() const;
  // Written behind the runtime's back from now on: version 0 until
  // MarkTracked.
  void MarkUntracked() const;
  // The writer behind the runtime's back is done: tracked again, with a
  // new version.
  void MarkTracked() const;

  // Copies bytes out of / into the tensor; a range past the end is
  // NRT_INVALID naming the tensor.
  absl::Status Read(void* dst, uint64_t offset, uint64_t size) const;
  absl::Status Write(const void* src, uint64_t offset, uint64_t size);

 private:
  TensorBuffer(std::string name, uint64_t size);
  absl::Status CheckRange(uint64_t offset, uint64_t size, const char* op) const;

  std::string name_;
  uint64_t size_;
  void* data_ = nullptr;
  Core* core_ = nullptr;          // set for device tensors
  device::HbmBlock block_{};      // the HBM block of a device tensor
  bool owned_ = true;             // false for views: nothing to free
  struct Contents {
    std::atomic<uint64_t> version{0};  // even; odd: changed since last read
    std::atomic<bool> untracked{false};
  };
  std::shared_ptr<Contents> contents_;  // shared by a tensor and its slices
};

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_TENSOR_BUFFER_H_
