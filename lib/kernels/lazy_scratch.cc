#include "lib/kernels/lazy_scratch.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>

namespace neuron::kernels {
namespace {

constexpr size_t kAlign = 64;
// Chunks are at least this big, so small scratch does not make many.
constexpr size_t kMinChunk = size_t{16} << 20;

thread_local ScratchArena* current_arena = nullptr;
thread_local uint64_t current_scope = 0;
// Scope ids are unique across threads: a kernel run on another thread
// later must not take a scope of the same number for its own. Each thread
// takes them from a block of its own, so cores executing at once do not
// share a counter's cache line on every step.
constexpr uint64_t kScopeIdBlock = uint64_t{1} << 16;
std::atomic<uint64_t> scope_blocks_taken{0};
thread_local uint64_t next_scope_id = 0, scope_id_end = 0;

uint64_t NewScopeId() {
  if (next_scope_id == scope_id_end) {
    next_scope_id = scope_blocks_taken.fetch_add(1, std::memory_order_relaxed) * kScopeIdBlock + 1;
    scope_id_end = next_scope_id + kScopeIdBlock - 1;
  }
  return next_scope_id++;
}

}  // namespace

ScratchArena::~ScratchArena() {
  for (Chunk& c : chunks_) std::free(c.data);
}

ScratchArena* ScratchArena::Current() { return current_arena; }

uint8_t* ScratchArena::Take(size_t bytes) {
  bytes = (std::max<size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
  if (bytes == 0) return nullptr;  // wrapped: far past any memory
  // The current chunk, else a later one (those hold nothing live).
  for (; current_ < chunks_.size(); ++current_) {
    Chunk& c = chunks_[current_];
    if (c.size - c.used >= bytes) {
      uint8_t* p = c.data + c.used;
      c.used += bytes;
      return p;
    }
  }
  // Nothing live: the chunks are given back and one takes their place,
  // as big as they were together (and as planned), so the workspace stays
  // one block as large as the most a step needs.
  bool live = false;
  for (const Chunk& c : chunks_) live = live || c.used > 0;
  size_t size = std::max({bytes, kMinChunk, planned_});
  if (!live && !chunks_.empty()) {
    size = std::max(size, reserved_ + bytes);
    for (Chunk& c : chunks_) std::free(c.data);
    chunks_.clear();
    reserved_ = 0;
  }
  size = (size + kAlign - 1) / kAlign * kAlign;
  void* data = std::aligned_alloc(kAlign, size);
  if (data == nullptr) return nullptr;
  chunks_.push_back({static_cast<uint8_t*>(data), size, bytes});
  current_ = chunks_.size() - 1;
  reserved_ += size;
  return chunks_.back().data;
}

ScratchArena::Mark ScratchArena::Top() const {
  if (chunks_.empty()) return {};
  return {current_, chunks_[current_].used};
}

void ScratchArena::Release(Mark mark) {
  if (chunks_.empty()) return;
  for (size_t i = mark.chunk + 1; i < chunks_.size(); ++i) chunks_[i].used = 0;
  current_ = std::min(mark.chunk, chunks_.size() - 1);
  chunks_[current_].used = mark.used;
}

ScratchScope::ScratchScope(ScratchArena* arena)
    : arena_(arena), outer_arena_(current_arena), outer_id_(current_scope) {
  if (arena_ == nullptr) return;
  mark_ = arena_->Top();
  current_arena = arena_;
  current_scope = NewScopeId();
}

ScratchScope::~ScratchScope() {
  if (arena_ == nullptr) return;
  arena_->Release(mark_);
  current_arena = outer_arena_;
  current_scope = outer_id_;
}

uint64_t ScratchScope::CurrentId() { return current_scope; }

namespace {
thread_local uint64_t declared_bytes = 0;
}  // namespace

uint64_t LazyScratch::Declared() { return declared_bytes; }

// A resize replaces what the object declared before.
void LazyScratch::CountDeclared(size_t old_bytes, size_t new_bytes) {
  auto aligned = [](size_t n) { return (static_cast<uint64_t>(n) + kAlign - 1) / kAlign * kAlign; };
  declared_bytes -= std::min(declared_bytes, aligned(old_bytes));
  declared_bytes += aligned(new_bytes);
}

uint8_t* LazyScratch::data() {
  if (bytes_ == 0) return nullptr;
  if (ScratchArena* arena = ScratchArena::Current()) {
    const uint64_t scope = ScratchScope::CurrentId();
    if (taken_ == nullptr || scope_ != scope) {
      taken_ = arena->Take(bytes_);
      scope_ = scope;
    }
    if (taken_ != nullptr) return taken_;
  }
  if (owned_ == nullptr) owned_ = AllocateAlignedBytes(bytes_);
  return owned_.get();
}

}  // namespace neuron::kernels
