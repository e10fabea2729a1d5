#include "lib/dump/memlog.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace neuron::dump {

Memlog& Memlog::Global() {
  static auto* log = new Memlog();
  return *log;
}

void Memlog::SetCapacity(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  capacity_ = bytes;
  TrimLocked();
}

void Memlog::Append(std::string_view line) {
  std::string entry = absl::StrCat(
      absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", absl::Now(), absl::UTCTimeZone()), " ", std::string(line), "\n");
  std::lock_guard<std::mutex> lock(mu_);
  if (capacity_ == 0) {
    ++dropped_;
    return;
  }
  if (entry.size() > capacity_) entry = entry.substr(entry.size() - capacity_);
  bytes_ += entry.size();
  lines_.push_back(std::move(entry));
  TrimLocked();
}

void Memlog::TrimLocked() {
  while (bytes_ > capacity_ && !lines_.empty()) {
    bytes_ -= lines_.front().size();
    lines_.pop_front();
    ++dropped_;
  }
}

std::string Memlog::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  out.reserve(bytes_);
  for (const std::string& l : lines_) out += l;
  return out;
}

uint64_t Memlog::dropped_lines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

}  // namespace neuron::dump
