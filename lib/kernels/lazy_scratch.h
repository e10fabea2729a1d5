// Kernel scratch whose size is fixed when a kernel is planned (at load)
// but whose memory is taken only while the kernel runs, and not zeroed.
//
// While a plan runs, each step runs inside a ScratchScope over the
// executable's ScratchArena: a kernel's scratch is taken from the arena
// when it first asks in that step and handed back when the step ends, so
// a model's kernels share one workspace as large as the most any single
// step needs at once (a train step's hundreds of convolutions no longer
// keep a buffer each: mobilenet_v2's took 17 GB). Outside a scope (a kernel
// run on its own, in tests) the scratch is the kernel's own, taken on
// first use and kept.
//
// Users write before they read: nothing survives from one step to the
// next. The memory starts on a cache line: oneDNN's reorders and
// convolutions read and write it with 64-byte vectors, and malloc's 16-byte
// alignment made every one of those straddle two lines.
#ifndef NEURON_LIB_KERNELS_LAZY_SCRATCH_H_
#define NEURON_LIB_KERNELS_LAZY_SCRATCH_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lib/kernels/aligned_bytes.h"

namespace neuron::kernels {

// A stack of scratch memory, reused step after step: its chunks stay
// taken, so its size is the high-water mark of what one step held.
class ScratchArena {
 public:
  ScratchArena() = default;
  ~ScratchArena();
  ScratchArena(const ScratchArena&) = delete;
  ScratchArena& operator=(const ScratchArena&) = delete;

  // The most one step takes at once, from the kernels' declared scratch:
  // the first chunk is that big, so every step fits it (its pages are
  // touched only as far as a step has reached).
  void Plan(size_t bytes) { planned_ = bytes; }
  // `bytes` (64-byte aligned) until the innermost open scope ends.
  uint8_t* Take(size_t bytes);
  // Bytes of memory the arena holds.
  size_t reserved() const { return reserved_; }

  // The arena whose scope is open on this thread, or null.
  static ScratchArena* Current();

 private:
  friend class ScratchScope;
  struct Chunk {
    uint8_t* data = nullptr;
    size_t size = 0;
    size_t used = 0;
  };
  struct Mark {
    size_t chunk = 0;
    size_t used = 0;
  };
  Mark Top() const;
  void Release(Mark mark);

  std::vector<Chunk> chunks_;
  size_t current_ = 0;  // the chunk Take takes from
  size_t reserved_ = 0;
  size_t planned_ = 0;
};

// One step's use of an arena: memory taken inside is handed back at its
// end. Scopes nest (a loop step runs its body's steps in scopes of their
// own). A null arena opens nothing.
class ScratchScope {
 public:
  explicit ScratchScope(ScratchArena* arena);
  ~ScratchScope();
  ScratchScope(const ScratchScope&) = delete;
  ScratchScope& operator=(const ScratchScope&) = delete;

  // Identifies the innermost open scope on this thread (0: none).
  static uint64_t CurrentId();

 private:
  ScratchArena* arena_;
  ScratchArena::Mark mark_;
  ScratchArena* outer_arena_;
  uint64_t outer_id_;
};

class LazyScratch {
 public:
  // Sets the size; memory already taken is dropped.
  void resize(size_t bytes) {
    CountDeclared(bytes_, bytes);
    bytes_ = bytes;
    owned_.reset();
    taken_ = nullptr;
    scope_ = 0;
  }
  // Bytes every LazyScratch sized on this thread has asked for so far (as
  // the arena takes them): the planner's measure of a step's workspace.
  static uint64_t Declared();
  size_t size() const { return bytes_; }
  bool empty() const { return bytes_ == 0; }
  // The memory (uninitialized): the open scope's, the same all through it,
  // or this object's own outside any scope.
  uint8_t* data();

 private:
  static void CountDeclared(size_t old_bytes, size_t new_bytes);
  size_t bytes_ = 0;
  AlignedBytes owned_;
  uint8_t* taken_ = nullptr;  // from the arena of scope `scope_`
  uint64_t scope_ = 0;
};

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_LAZY_SCRATCH_H_
