#include "lib/support/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace neuron {
namespace {

std::string Reason(int err, const std::string& path) {
  struct stat st{};
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return "it is a directory";
  return std::strerror(err);
}

absl::Status WriteAllTo(int fd, std::string_view bytes, int* err) {
  while (!bytes.empty()) {
    const ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *err = n < 0 ? errno : ENOSPC;
      return absl::InternalError("write");
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// The umask, read without umask(2): setting it to read it back would race
// with other threads creating files.
mode_t ProcessUmask() {
  static const mode_t mask = [] {
    mode_t m = 022;
    if (FILE* f = std::fopen("/proc/self/status", "r")) {
      char line[256];
      while (std::fgets(line, sizeof line, f) != nullptr) {
        unsigned v = 0;
        if (std::sscanf(line, "Umask: %o", &v) == 1) {
          m = static_cast<mode_t>(v);
          break;
        }
      }
      std::fclose(f);
    }
    return m;
  }();
  return mask;
}

}  // namespace

absl::StatusOr<AtomicFile> AtomicFile::Create(const std::string& path) {
  if (path.empty() || path == "-") {
    return absl::InvalidArgumentError(absl::StrCat("cannot write '", path, "': not a file name"));
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot write '", path, "': it is a directory"));
  }
  // An existing file keeps its mode; a new one gets 0666 less the umask
  // (mkostemp makes 0600).
  struct stat st{};
  const bool exists = stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("cannot write '", path, "': it is a directory"));
  }
  std::string temp = absl::StrCat(dir, "/.", base, ".tmp.XXXXXX");
  const int fd = mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    return absl::InternalError(absl::StrCat("cannot write '", path, "': ",
                                            e == ENOENT ? "its directory does not exist" : std::strerror(e)));
  }
  fchmod(fd, exists ? (st.st_mode & 07777) : (0666 & ~ProcessUmask()));
  return AtomicFile(path, std::move(temp), fd);
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)), temp_(std::move(other.temp_)), fd_(std::exchange(other.fd_, -1)) {}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    Discard();
    path_ = std::move(other.path_);
    temp_ = std::move(other.temp_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

AtomicFile::~AtomicFile() { Discard(); }

void AtomicFile::Discard() {
  if (fd_ < 0) return;
  close(fd_);
  unlink(temp_.c_str());
  fd_ = -1;
}

absl::Status AtomicFile::Fail(std::string_view why) const {
  return absl::InternalError(absl::StrCat("cannot write '", path_, "': ", std::string(why)));
}

absl::Status AtomicFile::Append(std::string_view bytes) {
  if (fd_ < 0) return Fail("the file is already closed");
  int err = 0;
  if (!WriteAllTo(fd_, bytes, &err).ok()) return Fail(std::strerror(err));
  return absl::OkStatus();
}

absl::Status AtomicFile::Commit() {
  if (fd_ < 0) return Fail("the file is already closed");
  const int fd = std::exchange(fd_, -1);
  // Some file systems report a full disk only at close.
  if (close(fd) != 0) {
    const int e = errno;
    unlink(temp_.c_str());
    return Fail(std::strerror(e));
  }
  if (rename(temp_.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    unlink(temp_.c_str());
    return Fail(Reason(e, path_));
  }
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  if (path == "-") {
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() || std::fflush(stdout) != 0) {
      return absl::InternalError(absl::StrCat("cannot write to standard output: ", std::strerror(errno)));
    }
    return absl::OkStatus();
  }
  absl::StatusOr<AtomicFile> file = AtomicFile::Create(path);
  if (!file.ok()) return file.status();
  if (absl::Status s = file->Append(bytes); !s.ok()) return s;
  return file->Commit();
}

}  // namespace neuron
