#include "lib/nrt/runtime_lock.h"

#include <atomic>

namespace neuron::nrt_api {

int RuntimeLock::ThreadSlot() {
  // Threads take slots in turn, so the first kSlots threads share none.
  static std::atomic<unsigned> threads_seen{0};
  thread_local const int slot =
      static_cast<int>(threads_seen.fetch_add(1, std::memory_order_relaxed) % kSlots);
  return slot;
}

}  // namespace neuron::nrt_api
