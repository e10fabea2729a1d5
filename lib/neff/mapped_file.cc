#include "lib/neff/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "lib/neff/error.h"

namespace neff {

absl::StatusOr<std::shared_ptr<MappedFile>> MappedFile::ReadAll(int fd, const std::string& path) {
  std::unique_ptr<std::string> owned = std::make_unique<std::string>();
  char chunk[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return NeffError(NRT_INVALID, absl::StrFormat("%s: read failed: %s", path, std::strerror(errno)));
    }
    owned->append(chunk, static_cast<std::size_t>(n));
  }
  std::shared_ptr<MappedFile> file(new MappedFile(owned->data(), owned->size()));
  file->owned_ = std::move(owned);
  return file;
}

absl::StatusOr<std::shared_ptr<MappedFile>> MappedFile::Open(const std::string& path) {
  if (path == "-") return ReadAll(STDIN_FILENO, "<stdin>");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return NeffError(NRT_INVALID, absl::StrFormat("%s: cannot open: %s", path, std::strerror(errno)));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int saved = errno;
    ::close(fd);
    return NeffError(NRT_INVALID, absl::StrFormat("%s: cannot stat: %s", path, std::strerror(saved)));
  }
  if (!S_ISREG(st.st_mode)) {
    // A pipe or terminal cannot be mapped: read it instead.
    auto result = ReadAll(fd, path);
    ::close(fd);
    return result;
  }
  std::size_t size = static_cast<std::size_t>(st.st_size);
  void* data = nullptr;
  if (size > 0) {
    data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      int saved = errno;
      ::close(fd);
      return NeffError(NRT_INVALID, absl::StrFormat("%s: cannot map: %s", path, std::strerror(saved)));
    }
  }
  ::close(fd);  // the mapping keeps the file alive
  return std::shared_ptr<MappedFile>(new MappedFile(data, size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr && owned_ == nullptr) ::munmap(data_, size_);
}

}  // namespace neff
