// Files that appear whole or not at all. Every file the tools write
// (outputs, NEFFs, dumps, traces, reports, pictures) goes through here: the
// bytes go to a temporary file in the destination's directory (same file
// system, so the final step is atomic) that becomes the destination only
// once all of them were written. Where the file system has O_TMPFILE the
// temporary has no name until linkat gives it the destination's (or, over
// an existing file, a named temporary renamed over it at once), so even
// kill -9 leaves nothing behind. Elsewhere it is a hidden named file,
// ".<name>.tmp.<host>.<pid>.XXXXXX" (lib/support/writer_tag.h), renamed
// once closed; the first write into a directory in a process removes
// those whose writer on this host is gone. A full disk, a missing directory or a crash leaves the
// destination as it was. Errors name the destination and the reason.
#ifndef NEURON_LIB_SUPPORT_ATOMIC_FILE_H_
#define NEURON_LIB_SUPPORT_ATOMIC_FILE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neuron {

// A file being written; nothing is visible at `path` until Commit().
// Destroying it uncommitted removes the temporary file.
class AtomicFile {
 public:
  // Opens the temporary file. `path` "-" is refused (callers handle stdout).
  static absl::StatusOr<AtomicFile> Create(const std::string& path);

  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  absl::Status Append(std::string_view bytes);
  // For writers that stream into a descriptor themselves (errors they meet
  // should then be reported with Fail()).
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // An error naming the destination: "cannot write 'PATH': <why>".
  absl::Status Fail(std::string_view why) const;

  // Closes and renames over the destination (whose mode it keeps unless
  // new). After an error the destination is untouched.
  absl::Status Commit();

 private:
  AtomicFile(std::string path, std::string temp, int fd) : path_(std::move(path)), temp_(std::move(temp)), fd_(fd) {}
  void Discard();
  absl::Status LinkUnnamed(int fd);

  std::string path_;
  std::string temp_;  // the named temporary; empty for an O_TMPFILE one
  int fd_ = -1;
};

// For tests: every later Create uses named temporaries, as on a file
// system without O_TMPFILE.
void UseNamedTemporariesForTesting();

// Writes `bytes` to `path` whole or not at all; "-" writes to stdout.
absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace neuron

#endif  // NEURON_LIB_SUPPORT_ATOMIC_FILE_H_
