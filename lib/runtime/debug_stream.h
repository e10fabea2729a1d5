// The debug-event streams behind nrt/ndebug_stream.h: one per logical
// core, existing only while a client is connected (events emitted before
// are not kept). A stream holds at most NEURON_RT_DEBUG_STREAM_BUFFER_SIZE
// unread events; further ones are dropped and counted. Its handle is an
// eventfd whose counter is the number of unread events, so clients can
// poll it; events themselves are taken with Read, never read(2).
#ifndef NEURON_LIB_RUNTIME_DEBUG_STREAM_H_
#define NEURON_LIB_RUNTIME_DEBUG_STREAM_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace neuron::runtime {

struct DebugEvent {
  uint32_t type = 0;     // ndebug_stream_event_type_t
  std::string payload;   // the type's payload bytes
};

class DebugStream {
 public:
  // Connects a client to `core`'s stream; returns its fd. NRT_INVALID when
  // the core already has one.
  static absl::StatusOr<int> Connect(int core, uint64_t capacity);
  // Disconnects `fd` and returns the stream (for its counts); nullptr when
  // fd is not a connected stream.
  static std::shared_ptr<DebugStream> Close(int fd);
  // The oldest unread event of `fd`'s stream; nullopt when none waits.
  // NRT_INVALID when fd is not a connected stream.
  static absl::StatusOr<std::optional<DebugEvent>> Read(int fd);
  // `core`'s stream while a client is connected, else nullptr.
  static std::shared_ptr<DebugStream> Connected(int core);

  // Queues an event for the client, or drops and counts it when
  // `capacity` events are unread.
  void Push(DebugEvent event);

  int core() const { return core_; }
  uint64_t capacity() const { return capacity_; }
  uint64_t pushed() const;
  uint64_t dropped() const;

  DebugStream(int core, uint64_t capacity, int fd) : core_(core), capacity_(capacity), fd_(fd) {}
  ~DebugStream();

 private:
  const int core_;
  const uint64_t capacity_;
  const int fd_;
  mutable std::mutex mu_;
  std::deque<DebugEvent> events_;  // guarded by mu_
  uint64_t pushed_ = 0, dropped_ = 0;
};

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_DEBUG_STREAM_H_
