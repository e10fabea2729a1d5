// The bytes of a tensor file: a regular file, read with pread (straight
// into the caller's buffer) or mapped on demand for views; or bytes held in
// memory (standard input, tests, fuzzers).
#ifndef NEURON_LIB_TENSORFILE_BYTE_SOURCE_H_
#define NEURON_LIB_TENSORFILE_BYTE_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace neuron::tensorfile {

class ByteSource {
 public:
  // A regular file ("-" is the caller's: it reads stdin into memory).
  static absl::StatusOr<std::shared_ptr<ByteSource>> OpenFile(const std::string& path);
  static std::shared_ptr<ByteSource> InMemory(std::string bytes, std::string display);
  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  uint64_t size() const { return size_; }
  const std::string& display() const { return display_; }
  // The file's path; empty for bytes in memory.
  const std::string& path() const { return path_; }

  // `n` bytes at `offset` into `out`; an error (naming the file) when they
  // are not all there (a file truncated since it was opened).
  absl::Status ReadAt(uint64_t offset, uint8_t* out, uint64_t n) const;
  // Up to `n` bytes at `offset` (fewer at the end).
  absl::StatusOr<std::string> ReadSome(uint64_t offset, uint64_t n) const;
  // All the bytes in place: the file mapped read-only, once.
  absl::StatusOr<std::string_view> Map() const;

 private:
  ByteSource() = default;

  std::string display_, path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string memory_;
  mutable absl::Mutex map_mutex_;
  mutable void* mapped_ ABSL_GUARDED_BY(map_mutex_) = nullptr;
};

}  // namespace neuron::tensorfile

#endif  // NEURON_LIB_TENSORFILE_BYTE_SOURCE_H_
