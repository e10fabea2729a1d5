#include "lib/neff/byte_sink.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "lib/neff/error.h"

namespace neff {
namespace {
constexpr std::size_t kFdBufferSize = 1 << 20;
}

absl::Status ByteSink::AppendZeros(uint64_t count) {
  static const char kZeros[4096] = {};
  while (count > 0) {
    uint64_t n = std::min<uint64_t>(count, sizeof(kZeros));
    absl::Status status = Append(std::string_view(kZeros, n));
    if (!status.ok()) return status;
    count -= n;
  }
  return absl::OkStatus();
}

absl::Status StringSink::Append(std::string_view bytes) {
  out_->append(bytes);
  return absl::OkStatus();
}

absl::Status FdSink::Append(std::string_view bytes) {
  if (buffer_.size() + bytes.size() <= kFdBufferSize) {
    buffer_.append(bytes);
    return absl::OkStatus();
  }
  absl::Status status = Flush();
  if (!status.ok()) return status;
  if (bytes.size() >= kFdBufferSize) return WriteAll(bytes);
  buffer_.append(bytes);
  return absl::OkStatus();
}

absl::Status FdSink::Flush() {
  absl::Status status = WriteAll(buffer_);
  buffer_.clear();
  return status;
}

absl::Status FdSink::WriteAll(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return NeffError(NRT_FAILURE, absl::StrFormat("%s: write failed: %s", name_, std::strerror(errno)));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return absl::OkStatus();
}

}  // namespace neff
