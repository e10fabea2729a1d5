#include "lib/support/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/support/writer_tag.h"

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

std::atomic<bool> g_named_only{false};

// O_TMPFILE files get their name through /proc/self/fd (linkat with
// AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH).
bool UnnamedUsable() {
  static const bool proc = access("/proc/self/fd", X_OK) == 0;
  return proc && !g_named_only.load(std::memory_order_relaxed);
}

struct PathParts {
  std::string dir, base;
};

PathParts Split(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

// ".<base>.tmp.<writer tag>." in `dir`; six random characters follow.
std::string TempStem(const PathParts& p) {
  return absl::StrCat(p.dir, "/.", p.base, ".tmp.", WriterTag(), ".");
}

// Whether `name` is a named temporary whose writer is gone.
bool LeftBehind(std::string_view name) {
  if (name.size() < 8 || name[0] != '.' || name[name.size() - 7] != '.') return false;
  const std::string_view head = name.substr(0, name.size() - 7);  // drops ".XXXXXX"
  const size_t tmp = head.rfind(".tmp.");
  return tmp != std::string_view::npos && WriterGone(head.substr(tmp + 5));
}

// Removes, once per directory and process, the named temporaries of
// writers that were killed before they could commit or discard them.
void SweepOnce(const std::string& dir) {
  static std::mutex mu;
  static std::set<std::string>* swept = new std::set<std::string>;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!swept->insert(dir).second) return;
  }
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (const dirent* e = readdir(d)) {
    if (LeftBehind(e->d_name)) unlinkat(dirfd(d), e->d_name, 0);
  }
  closedir(d);
}

std::string RandomSuffix() {
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::minstd_rand rng(std::random_device{}());
  std::string out(6, 'a');
  for (char& c : out) c = kChars[rng() % (sizeof kChars - 1)];
  return out;
}

}  // namespace

void UseNamedTemporariesForTesting() { g_named_only = true; }

absl::StatusOr<AtomicFile> AtomicFile::Create(const std::string& path) {
  if (path.empty() || path == "-") {
    return absl::InvalidArgumentError(absl::StrCat("cannot write '", path, "': not a file name"));
  }
  const PathParts parts = Split(path);
  const std::string& dir = parts.dir;
  const std::string& base = parts.base;
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
  const mode_t mode = exists ? (st.st_mode & 07777) : (0666 & ~ProcessUmask());
  SweepOnce(dir);
  if (UnnamedUsable()) {
    // Any failure here (no O_TMPFILE on this file system, or a real error)
    // falls to the named temporary, which reports real errors as before.
    const int fd = open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0) {
      fchmod(fd, mode);
      return AtomicFile(path, "", fd);
    }
  }
  std::string temp = TempStem(parts) + "XXXXXX";
  const int fd = mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    return absl::InternalError(absl::StrCat("cannot write '", path, "': ",
                                            e == ENOENT ? "its directory does not exist" : std::strerror(e)));
  }
  fchmod(fd, mode);
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
  if (!temp_.empty()) unlink(temp_.c_str());
  fd_ = -1;
}

absl::Status AtomicFile::LinkUnnamed(int fd) {
  const std::string proc = absl::StrCat("/proc/self/fd/", fd);
  // A new destination gets its name directly: nothing is ever named before
  // it is whole.
  if (linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, path_.c_str(), AT_SYMLINK_FOLLOW) == 0) {
    return absl::OkStatus();
  }
  if (errno != EEXIST) return Fail(Reason(errno, path_));
  // linkat does not replace: over an existing file, a named temporary lives
  // for the instant between link and rename (a sweep removes it should the
  // writer die just then).
  const std::string stem = TempStem(Split(path_));
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string temp = stem + RandomSuffix();
    if (linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, temp.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      if (errno == EEXIST) continue;
      return Fail(std::strerror(errno));
    }
    if (rename(temp.c_str(), path_.c_str()) != 0) {
      const int e = errno;
      unlink(temp.c_str());
      return Fail(Reason(e, path_));
    }
    return absl::OkStatus();
  }
  return Fail("no free temporary name");
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
  if (temp_.empty()) {
    // The link needs the descriptor open; file systems with O_TMPFILE
    // report a full disk at write, not at close.
    absl::Status linked = LinkUnnamed(fd);
    close(fd);
    return linked;
  }
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
