#include "lib/tensorfile/byte_source.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"

namespace neuron::tensorfile {

absl::StatusOr<std::shared_ptr<ByteSource>> ByteSource::OpenFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrFormat("%s: cannot open: %s", path, std::strerror(errno)));
  struct stat st{};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const bool dir = S_ISDIR(st.st_mode);
    ::close(fd);
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: %s", path, dir ? "is a directory" : "not a regular file"));
  }
  std::shared_ptr<ByteSource> source(new ByteSource());
  source->display_ = path;
  source->path_ = path;
  source->fd_ = fd;
  source->size_ = static_cast<uint64_t>(st.st_size);
  return source;
}

std::shared_ptr<ByteSource> ByteSource::InMemory(std::string bytes, std::string display) {
  std::shared_ptr<ByteSource> source(new ByteSource());
  source->display_ = std::move(display);
  source->size_ = bytes.size();
  source->memory_ = std::move(bytes);
  return source;
}

ByteSource::~ByteSource() {
  absl::MutexLock lock(&map_mutex_);
  if (mapped_ != nullptr) munmap(mapped_, size_);
  if (fd_ >= 0) ::close(fd_);
}

absl::Status ByteSource::ReadAt(uint64_t offset, uint8_t* out, uint64_t n) const {
  if (offset > size_ || n > size_ - offset) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: ends before byte %d (it has %d)", display_, offset + std::min(n, UINT64_MAX - offset), size_));
  }
  if (fd_ < 0) {
    if (n != 0) std::memcpy(out, memory_.data() + offset, n);
    return absl::OkStatus();
  }
  uint64_t done = 0;
  while (done < n) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(n - done, uint64_t{1} << 30));
    const ssize_t got = ::pread(fd_, out + done, want, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      return absl::InternalError(absl::StrFormat(
          "%s: %s", display_, got == 0 ? "ends early (truncated while being read)" : std::strerror(errno)));
    }
    done += static_cast<uint64_t>(got);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ByteSource::ReadSome(uint64_t offset, uint64_t n) const {
  if (offset >= size_) return std::string();
  std::string out(static_cast<size_t>(std::min(n, size_ - offset)), '\0');
  if (absl::Status s = ReadAt(offset, reinterpret_cast<uint8_t*>(out.data()), out.size()); !s.ok()) return s;
  return out;
}

absl::StatusOr<std::string_view> ByteSource::Map() const {
  if (fd_ < 0) return std::string_view(memory_);
  if (size_ == 0) return std::string_view();
  absl::MutexLock lock(&map_mutex_);
  if (mapped_ == nullptr) {
    void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED) {
      return absl::ResourceExhaustedError(absl::StrFormat("%s: cannot map: %s", display_, std::strerror(errno)));
    }
    mapped_ = p;
  }
  return std::string_view(static_cast<const char*>(mapped_), size_);
}

}  // namespace neuron::tensorfile
