#include "lib/runtime/tensor_buffer.h"

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_format.h"
#include "lib/runtime/core.h"
#include "lib/runtime/status.h"

namespace neuron::runtime {

absl::StatusOr<std::unique_ptr<TensorBuffer>> TensorBuffer::AllocateDevice(Core* core,
                                                                           uint64_t size,
                                                                           std::string name) {
  absl::StatusOr<device::HbmBlock> block =
      core->Allocate(size, device::MemoryCategory::kTensors, "tensor '" + name + "'",
                     /*host_access=*/true);
  if (!block.ok()) return block.status();
  std::unique_ptr<TensorBuffer> t(new TensorBuffer(std::move(name), size));
  t->core_ = core;
  t->block_ = *block;
  t->data_ = block->host;
  return t;
}

std::unique_ptr<TensorBuffer> TensorBuffer::AllocateHost(uint64_t size, std::string name) {
  std::unique_ptr<TensorBuffer> t(new TensorBuffer(std::move(name), size));
  const uint64_t rounded = (size + 63) / 64 * 64;
  t->data_ = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (t->data_ != nullptr) std::memset(t->data_, 0, rounded == 0 ? 64 : rounded);
  return t;
}

std::unique_ptr<TensorBuffer> TensorBuffer::View(void* data, uint64_t size, std::string name,
                                               Core* core) {
  std::unique_ptr<TensorBuffer> t(new TensorBuffer(std::move(name), size));
  t->data_ = data;
  t->core_ = core;
  t->owned_ = false;
  return t;
}

TensorBuffer::~TensorBuffer() {
  if (!owned_) return;
  if (core_ != nullptr) {
    core_->Free(block_);
  } else {
    std::free(data_);
  }
}

int TensorBuffer::core_id() const { return core_ != nullptr ? core_->id() : -1; }

absl::Status TensorBuffer::CheckRange(uint64_t offset, uint64_t size, const char* op) const {
  if (offset > size_ || size > size_ - offset) {
    return RtError(NRT_INVALID,
                   absl::StrFormat("%s of %d bytes at offset %d is outside tensor '%s' (%d bytes)",
                                   op, size, offset, name_, size_));
  }
  return absl::OkStatus();
}

absl::Status TensorBuffer::Read(void* dst, uint64_t offset, uint64_t size) const {
  if (absl::Status s = CheckRange(offset, size, "read"); !s.ok()) return s;
  if (size) std::memcpy(dst, static_cast<const char*>(data_) + offset, size);
  return absl::OkStatus();
}

absl::Status TensorBuffer::Write(const void* src, uint64_t offset, uint64_t size) {
  if (absl::Status s = CheckRange(offset, size, "write"); !s.ok()) return s;
  if (size) std::memcpy(static_cast<char*>(data_) + offset, src, size);
  return absl::OkStatus();
}

}  // namespace neuron::runtime
