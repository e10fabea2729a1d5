// A read-only memory mapping of a whole file: the loader reads a NEFF's
// members in place (a fast-loading NEFF's constants are page-aligned for
// exactly this), with no copy of the data.
#ifndef NEURON_LIB_NEFF_MAPPED_FILE_H_
#define NEURON_LIB_NEFF_MAPPED_FILE_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace neff {

class MappedFile {
 public:
  // Maps `path`; a file that cannot be opened or mapped gives NRT_INVALID
  // with the path and the system's reason. An empty file maps to no bytes.
  // "-" reads stdin, and a pipe is read into memory, since neither maps.
  static absl::StatusOr<std::shared_ptr<MappedFile>> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }

 private:
  MappedFile(void* data, std::size_t size) : data_(data), size_(size) {}
  static absl::StatusOr<std::shared_ptr<MappedFile>> ReadAll(int fd, const std::string& path);
  void* data_;
  std::size_t size_;
  std::unique_ptr<std::string> owned_;  // set when the bytes were read, not mapped
};

}  // namespace neff

#endif  // NEURON_LIB_NEFF_MAPPED_FILE_H_
