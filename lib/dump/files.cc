#include "lib/dump/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace neuron::dump {

absl::Status MakeDirs(const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("empty directory name");
  size_t pos = 0;
  while (true) {
    pos = dir.find('/', pos + 1);
    const std::string part = dir.substr(0, pos);
    if (!part.empty() && mkdir(part.c_str(), 0755) != 0 && errno != EEXIST)
      return absl::InternalError(
          absl::StrCat("cannot create directory '", part, "': ", std::strerror(errno)));
    if (pos == std::string::npos) break;
  }
  struct stat st{};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return absl::InternalError(absl::StrCat("'", dir, "' is not a directory"));
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path, uint64_t max_bytes) {
  const int fd = path == "-" ? dup(0) : open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  struct stat st{};
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory"));
  }
  std::string out;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      close(fd);
      return absl::InternalError(absl::StrCat(path, ": cannot read: ", std::strerror(e)));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      close(fd);
      return absl::InvalidArgumentError(absl::StrCat(path, ": larger than ", max_bytes, " bytes"));
    }
  }
  close(fd);
  return out;
}

std::string SafeComponent(std::string_view name) {
  std::string out;
  for (char ch : name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.';
    out.push_back(ok ? ch : '_');
  }
  if (out.empty() || out == "." || out == "..") out = "x" + out;
  return out.substr(0, 100);
}

}  // namespace neuron::dump
