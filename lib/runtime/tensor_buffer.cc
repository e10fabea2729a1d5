#include "lib/runtime/tensor_buffer.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "absl/strings/str_format.h"
#include "lib/runtime/core.h"
#include "lib/runtime/memory_check.h"
#include "lib/runtime/status.h"
#include "lib/support/checked_size.h"
#include "lib/support/parse.h"

namespace neuron::runtime {
namespace {

// Host tensors from this size up are checked against what the host can
// still give (reading /proc costs far less than zeroing this much).
constexpr uint64_t kHostCheckBytes = uint64_t{16} << 20;

// Versions for every tensor's contents, never reused (0 is "unknown").
uint64_t NextVersion() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

TensorBuffer::TensorBuffer(std::string name, uint64_t size)
    : name_(std::move(name)), size_(size), contents_(std::make_shared<Contents>()) {
  contents_->version.store(NextVersion() << 1, std::memory_order_relaxed);
}

uint64_t TensorBuffer::version() const {
  if (contents_->untracked.load(std::memory_order_acquire)) return 0;
  // A write marked the word odd: the first reader after it draws the new
  // version (even), so writes on the execute path never touch the
  // process-wide counter that two cores would share.
  uint64_t v = contents_->version.load(std::memory_order_acquire);
  while (v & 1) {
    const uint64_t fresh = NextVersion() << 1;
    if (contents_->version.compare_exchange_weak(v, fresh, std::memory_order_acq_rel)) return fresh;
  }
  return v;
}

void TensorBuffer::Touch() const {
  contents_->version.fetch_or(1, std::memory_order_acq_rel);
}

void TensorBuffer::MarkUntracked() const {
  contents_->untracked.store(true, std::memory_order_release);
}

void TensorBuffer::MarkTracked() const {
  Touch();
  contents_->untracked.store(false, std::memory_order_release);
}

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

absl::StatusOr<std::unique_ptr<TensorBuffer>> TensorBuffer::AllocateHost(uint64_t size,
                                                                         std::string name) {
  // aligned_alloc wants a multiple of the alignment; a size within 63 of
  // 2^64 has none, and must not wrap to a small buffer.
  const std::optional<uint64_t> rounded = CheckedRoundUp(std::max<uint64_t>(size, 1), 64);
  if (!rounded) {
    return RtError(NRT_RESOURCE, absl::StrFormat("cannot allocate %d bytes of host memory for "
                                                 "tensor '%s': larger than any address space",
                                                 size, name));
  }
  // The zeroing below touches every page: a size the host cannot back must
  // fail here, not bring the OOM killer. Small ones skip reading /proc.
  if (*rounded >= kHostCheckBytes) {
    if (absl::Status s = CheckHostMemory(*rounded, "tensor '" + name + "'"); !s.ok()) return s;
  }
  void* data = std::aligned_alloc(64, *rounded);
  if (data == nullptr) {
    return RtError(NRT_RESOURCE, absl::StrFormat("cannot allocate %s of host memory for tensor '%s'",
                                                 FormatBytes(*rounded), name));
  }
  std::memset(data, 0, *rounded);
  std::unique_ptr<TensorBuffer> t(new TensorBuffer(std::move(name), size));
  t->data_ = data;
  return t;
}

std::unique_ptr<TensorBuffer> TensorBuffer::View(void* data, uint64_t size, std::string name,
                                               Core* core, const TensorBuffer* slice_of) {
  std::unique_ptr<TensorBuffer> t(new TensorBuffer(std::move(name), size));
  t->data_ = data;
  t->core_ = core;
  t->owned_ = false;
  if (slice_of != nullptr) {
    t->contents_ = slice_of->contents_;
  } else {
    t->MarkUntracked();
  }
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
  if (!RangeWithin(offset, size, size_)) {
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
  Touch();
  return absl::OkStatus();
}

}  // namespace neuron::runtime
