// POSIX ustar archives, written and read here (the NEFF payload is a tar).
// Only regular files and directories are members; pax extended headers are
// read (path, size) and written only to pad member data to an alignment;
// GNU long names are read so archives made by other tools can be listed.
// Every name is checked so that extracting an archive can never write
// outside the target directory.
#ifndef NEURON_LIB_NEFF_TAR_H_
#define NEURON_LIB_NEFF_TAR_H_

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/neff/byte_sink.h"

namespace neff {

inline constexpr uint64_t kTarBlockSize = 512;

// A member name the writer accepts: relative, '/'-separated, no empty, '.'
// or '..' components, no NUL, at most 255 bytes and splittable into the
// ustar prefix (155) and name (100) fields. Errors are NRT_INVALID and name
// the member.
absl::Status CheckMemberName(std::string_view name);

struct TarEntry {
  std::string name;  // normalized: no leading "./", no trailing '/'
  bool is_directory = false;
  uint64_t size = 0;
  uint64_t data_offset = 0;  // offset of the data within the archive
};

struct TarWriterOptions {
  // When non-zero, the data of every non-empty file starts at an offset that
  // is a multiple of `align` counted from `base_offset` bytes before the
  // archive (the NEFF header), padded with pax comment headers.
  uint64_t align = 0;
  uint64_t base_offset = 0;
};

class TarWriter {
 public:
  TarWriter(ByteSink* sink, TarWriterOptions options) : sink_(sink), options_(options) {}

  absl::Status AddFile(std::string_view name, std::string_view data);
  absl::Status AddDirectory(std::string_view name);
  // Writes the end-of-archive marker (two zero blocks).
  absl::Status Finish();

  // Bytes written so far, and the entries written (data_offset included).
  uint64_t offset() const { return offset_; }
  const std::vector<TarEntry>& entries() const { return entries_; }

 private:
  absl::Status AddMember(std::string_view name, char type, std::string_view data);
  absl::Status PadForAlignment();
  absl::Status Emit(std::string_view bytes);

  ByteSink* sink_;
  TarWriterOptions options_;
  uint64_t offset_ = 0;
  std::set<std::string, std::less<>> names_;
  std::vector<TarEntry> entries_;
};

// Parses a whole archive held in memory. Checks every header checksum, that
// sizes fit the archive, member names (absolute, '..', empty, NUL,
// duplicates), member types, and that the end-of-archive marker is present
// with only zeros after it. Errors are NRT_INVALID and name the member or
// the offset of the bad header.
absl::StatusOr<std::vector<TarEntry>> ParseTar(std::string_view archive);

// Numeric header fields, exposed for tests: octal with a NUL when the value
// fits width-1 digits, else the base-256 form GNU tar and libarchive read.
std::string EncodeTarNumber(uint64_t value, std::size_t width);
absl::StatusOr<uint64_t> DecodeTarNumber(std::string_view field);

}  // namespace neff

#endif  // NEURON_LIB_NEFF_TAR_H_
