// An HBM arena: the device memory of one (logical) NeuronCore, with a real
// allocator and the driver's per-category accounting.
//
// Allocation is best-fit over a free list kept twice (by size and by
// address), so allocate and free are O(log n) and neighbours coalesce on
// free. Offsets are 64-byte granular; alignments up to 4 KiB are honoured by
// splitting the front of a block off as its own free block. Everything is
// deterministic: the same sequence of calls gives the same offsets.
//
// Host backing: the arena reserves its whole capacity as address space
// (MAP_NORESERVE) and never touches it, so only the pages a kernel writes
// cost memory; a 96 GiB device costs nothing until used. Blocks of 4 MiB and
// more start on a 2 MiB boundary where a free block allows and ask for huge
// pages (weights stream through fewer TLB entries).
#ifndef NEURON_LIB_DEVICE_HBM_ARENA_H_
#define NEURON_LIB_DEVICE_HBM_ARENA_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/device/memory_category.h"

namespace neuron::device {

inline constexpr uint64_t kHbmGranule = 64;          // minimum size and alignment
inline constexpr uint64_t kHbmMaxAlignment = 4096;

struct HbmBlock {
  uint64_t offset = 0;  // from the start of the arena
  uint64_t size = 0;    // rounded up to kHbmGranule
  MemoryCategory category = MemoryCategory::kUncategorized;
  void* host = nullptr; // host view of the block (nullptr without backing)
};

// What was asked and what the arena held when an allocation failed; the
// runtime prints it as its OOM report.
struct OomReport {
  std::string arena;
  uint64_t requested = 0;
  uint64_t alignment = 0;
  MemoryCategory category = MemoryCategory::kUncategorized;
  uint64_t capacity = 0;
  uint64_t in_use = 0;
  uint64_t largest_free_block = 0;
  MemoryBreakdown usage{};
  // "nc0: requested 2.0 GiB for tensors, 31.0 GiB of 32.0 GiB in use, largest
  // free block 1.0 GiB"
  std::string Summary() const;
  // One line per category with bytes in use and peak.
  std::string Breakdown() const;
};

class HbmArena {
 public:
  struct Options {
    std::string name = "nc0";     // used in messages
    uint64_t capacity = 0;        // bytes (rounded down to kHbmGranule)
    bool host_backing = true;     // reserve host address space for the data
  };
  static absl::StatusOr<std::unique_ptr<HbmArena>> Create(const Options& options);
  ~HbmArena();
  HbmArena(const HbmArena&) = delete;
  HbmArena& operator=(const HbmArena&) = delete;

  // Allocates `bytes` (0 counts as one granule) aligned to `alignment` (a
  // power of two up to 4 KiB). Out of memory is ResourceExhausted with a
  // one-line summary; `oom`, when given, receives the full breakdown.
  absl::StatusOr<HbmBlock> Allocate(uint64_t bytes, MemoryCategory category,
                                    uint64_t alignment = kHbmGranule, OomReport* oom = nullptr);
  // Releases the block starting at `offset`; NotFound for anything else.
  absl::Status Free(uint64_t offset);
  // Releases every block (usage drops to zero; peaks stay).
  void FreeAll();

  // Host address of an arena offset, nullptr without backing.
  void* HostAddress(uint64_t offset) const;

  const std::string& name() const { return name_; }
  uint64_t capacity() const { return capacity_; }
  uint64_t used() const;
  uint64_t peak() const;
  uint64_t largest_free_block() const;
  size_t free_block_count() const;
  size_t allocation_count() const;
  MemoryBreakdown Usage() const;

 private:
  HbmArena(std::string name, uint64_t capacity, char* mapping, char* base, size_t mapped);
  void InsertFree(uint64_t offset, uint64_t size);
  void EraseFree(std::map<uint64_t, uint64_t>::iterator it);
  void Account(MemoryCategory category, uint64_t bytes, bool allocate);
  uint64_t LargestFreeLocked() const;
  std::set<std::pair<uint64_t, uint64_t>>::iterator BestFitLocked(uint64_t size,
                                                                  uint64_t alignment,
                                                                  bool settle);
  OomReport MakeOomLocked(uint64_t bytes, uint64_t alignment, MemoryCategory category) const;

  struct Allocation {
    uint64_t size;
    MemoryCategory category;
  };

  const std::string name_;
  const uint64_t capacity_;
  char* const mapping_;   // host reservation or nullptr
  char* const base_;      // the data in it, from its first huge page boundary
  const size_t mapped_;   // bytes reserved at mapping_

  mutable std::mutex mu_;
  std::map<uint64_t, uint64_t> free_by_offset_;            // offset -> size
  std::set<std::pair<uint64_t, uint64_t>> free_by_size_;   // (size, offset)
  std::map<uint64_t, Allocation> allocations_;             // offset -> block
  MemoryBreakdown usage_{};
  uint64_t used_ = 0;
  uint64_t peak_ = 0;
};

}  // namespace neuron::device

#endif  // NEURON_LIB_DEVICE_HBM_ARENA_H_
