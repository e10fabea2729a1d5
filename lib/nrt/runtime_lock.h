// The lock every C API call shares and nrt_init/nrt_close take alone. A
// plain std::shared_mutex keeps its reader count in one word, so two
// cores executing at once (a call each, microseconds apart) bounced that
// cache line on every call. Here readers lock one of many padded slots,
// the one their thread was given, and the rare writer locks them all.
#ifndef NEURON_LIB_NRT_RUNTIME_LOCK_H_
#define NEURON_LIB_NRT_RUNTIME_LOCK_H_

#include <array>
#include <shared_mutex>

namespace neuron::nrt_api {

class RuntimeLock {
 public:
  // SharedMutex requirements (std::shared_lock, std::unique_lock). A thread
  // unlocks the slot it locked: its slot never changes.
  void lock_shared() { slots_[ThreadSlot()].mu.lock_shared(); }
  void unlock_shared() { slots_[ThreadSlot()].mu.unlock_shared(); }
  void lock() {
    for (Slot& s : slots_) s.mu.lock();
  }
  void unlock() {
    for (auto it = slots_.rbegin(); it != slots_.rend(); ++it) it->mu.unlock();
  }

 private:
  static constexpr int kSlots = 16;
  struct alignas(64) Slot {
    std::shared_mutex mu;
  };
  static int ThreadSlot();
  std::array<Slot, kSlots> slots_;
};

}  // namespace neuron::nrt_api

#endif  // NEURON_LIB_NRT_RUNTIME_LOCK_H_
