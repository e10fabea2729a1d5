// The in-memory log ring of NEURON_RT_DEBUG_MEMLOG_MAX_SIZE: the runtime's
// recent events (executions, failures, dumps), kept for post-mortem core
// dumps. Oldest lines are dropped first; a line longer than the ring keeps
// its tail. Process-wide and thread-safe.
#ifndef NEURON_LIB_DUMP_MEMLOG_H_
#define NEURON_LIB_DUMP_MEMLOG_H_

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>

namespace neuron::dump {

class Memlog {
 public:
  static Memlog& Global();

  // Capacity in bytes (0 keeps nothing); shrinking drops the oldest lines.
  void SetCapacity(uint64_t bytes);
  // Appends one line, stamped with the UTC time.
  void Append(std::string_view line);
  // The retained lines, oldest first, each ending in '\n'.
  std::string Snapshot() const;
  uint64_t dropped_lines() const;

 private:
  void TrimLocked();
  mutable std::mutex mu_;
  std::deque<std::string> lines_;
  uint64_t bytes_ = 0, capacity_ = 1u << 20, dropped_ = 0;
};

}  // namespace neuron::dump

#endif  // NEURON_LIB_DUMP_MEMLOG_H_
