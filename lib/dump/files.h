// Small file helpers of lib/dump: mkdir -p and whole-file reads (writes go
// through lib/support/atomic_file.h). Errors name the path.
#ifndef NEURON_LIB_DUMP_FILES_H_
#define NEURON_LIB_DUMP_FILES_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace neuron::dump {

absl::Status MakeDirs(const std::string& dir);
// Reads a file ("-" = stdin) of at most `max_bytes`.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path,
                                          uint64_t max_bytes = 8ull << 30);
// A name safe as one path component (letters, digits, - _ .).
std::string SafeComponent(std::string_view name);

}  // namespace neuron::dump

#endif  // NEURON_LIB_DUMP_FILES_H_
