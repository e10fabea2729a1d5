#include "lib/device/tree_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_format.h"
#include "lib/support/parse.h"

namespace neuron::device {
namespace {

absl::Status ErrnoError(const std::string& what, const std::string& path, int err) {
  return absl::InternalError(absl::StrFormat("%s '%s': %s", what, path, std::strerror(err)));
}

absl::Status WriteAll(int fd, const std::string& content, const std::string& path) {
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("cannot write", path, errno);
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFilePlain(const std::string& path, const std::string& content) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("cannot create", path, errno);
  absl::Status st = WriteAll(fd, content, path);
  close(fd);
  return st;
}

absl::StatusOr<std::string> ReadSmallFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrFormat("'%s' does not exist", path));
    // Told apart: the driver keeps some files to root (mode 0400).
    if (errno == EACCES) {
      return absl::PermissionDeniedError(
          absl::StrFormat("cannot open '%s': %s", path, std::strerror(errno)));
    }
    return ErrnoError("cannot open", path, errno);
  }
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      return ErrnoError("cannot read", path, err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > (1u << 20)) break;  // sysfs values are tiny; bound a bad file
  }
  close(fd);
  return out;
}

absl::StatusOr<std::string> ReadTrimmed(const std::string& path) {
  absl::StatusOr<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return text;
  std::string s = *std::move(text);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t' ||
                        s.back() == '\r')) {
    s.pop_back();
  }
  return s;
}

absl::StatusOr<uint64_t> ReadCounter(const std::string& path) {
  absl::StatusOr<std::string> text = ReadTrimmed(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<uint64_t> value = ParseUnsigned(*text);
  if (!value.ok()) {
    return absl::DataLossError(
        absl::StrFormat("'%s' holds '%s', not a counter", path, text->substr(0, 40)));
  }
  return value;
}

absl::Status MakeDirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrFormat("cannot create directory '%s': %s", path, ec.message()));
  }
  return absl::OkStatus();
}

}  // namespace neuron::device
