#include "lib/runtime/debug_stream.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>

#include "absl/strings/str_format.h"
#include "lib/runtime/status.h"

namespace neuron::runtime {
namespace {

// Connected streams by core and by fd (a process has few).
std::mutex g_mu;
// How many are connected, readable without g_mu: every execution asks
// for its core's stream, and nearly always there is none.
std::atomic<int> g_connected{0};
std::map<int, std::shared_ptr<DebugStream>>& ByCore() {
  static auto* m = new std::map<int, std::shared_ptr<DebugStream>>;
  return *m;
}
std::map<int, std::shared_ptr<DebugStream>>& ByFd() {
  static auto* m = new std::map<int, std::shared_ptr<DebugStream>>;
  return *m;
}

std::shared_ptr<DebugStream> FindFd(int fd) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = ByFd().find(fd);
  return it == ByFd().end() ? nullptr : it->second;
}

}  // namespace

absl::StatusOr<int> DebugStream::Connect(int core, uint64_t capacity) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (ByCore().count(core)) {
    return RtError(NRT_INVALID,
                   absl::StrFormat("nc%d's debug stream already has a client", core));
  }
  // A semaphore eventfd: readable while unread events remain, and each
  // Read takes one count.
  const int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
  if (fd < 0) {
    return RtError(NRT_RESOURCE, absl::StrFormat("eventfd: %s", std::strerror(errno)));
  }
  auto stream = std::make_shared<DebugStream>(core, capacity, fd);
  ByCore()[core] = stream;
  ByFd()[fd] = stream;
  g_connected.fetch_add(1, std::memory_order_release);
  return fd;
}

std::shared_ptr<DebugStream> DebugStream::Close(int fd) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = ByFd().find(fd);
  if (it == ByFd().end()) return nullptr;
  std::shared_ptr<DebugStream> stream = it->second;
  ByFd().erase(it);
  ByCore().erase(stream->core_);
  g_connected.fetch_sub(1, std::memory_order_release);
  return stream;  // the fd closes with the last reference (a push may hold one)
}

absl::StatusOr<std::optional<DebugEvent>> DebugStream::Read(int fd) {
  std::shared_ptr<DebugStream> s = FindFd(fd);
  if (s == nullptr) {
    return RtError(NRT_INVALID, absl::StrFormat("fd %d is not a connected debug stream", fd));
  }
  std::lock_guard<std::mutex> lock(s->mu_);
  if (s->events_.empty()) return std::nullopt;
  uint64_t one;
  (void)!read(s->fd_, &one, sizeof one);  // takes one count (semaphore mode)
  DebugEvent e = std::move(s->events_.front());
  s->events_.pop_front();
  return e;
}

std::shared_ptr<DebugStream> DebugStream::Connected(int core) {
  if (g_connected.load(std::memory_order_acquire) == 0) return nullptr;
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = ByCore().find(core);
  return it == ByCore().end() ? nullptr : it->second;
}

void DebugStream::Push(DebugEvent event) {
  std::lock_guard<std::mutex> lock(mu_);
  if (events_.size() >= capacity_) {
    ++dropped_;
    return;
  }
  events_.push_back(std::move(event));
  ++pushed_;
  const uint64_t one = 1;
  (void)!write(fd_, &one, sizeof one);
}

uint64_t DebugStream::pushed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pushed_;
}

uint64_t DebugStream::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

DebugStream::~DebugStream() { close(fd_); }

}  // namespace neuron::runtime
