// Small file helpers for the sysfs-like device tree: values are short text
// files, written so that a concurrent reader sees either the old or the new
// content, never a torn one.
#ifndef NEURON_LIB_DEVICE_TREE_FILES_H_
#define NEURON_LIB_DEVICE_TREE_FILES_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neuron::device {

// Plain create/truncate/write (for files nobody else can see yet; others go
// through WriteFileAtomically of lib/support/atomic_file.h).
absl::Status WriteFilePlain(const std::string& path, const std::string& content);
// Whole file; NotFound when missing, PermissionDenied when not ours to read.
absl::StatusOr<std::string> ReadSmallFile(const std::string& path);
// The file's text with trailing whitespace removed.
absl::StatusOr<std::string> ReadTrimmed(const std::string& path);
// A decimal counter file ("0\n"); an error names the file and the content.
absl::StatusOr<uint64_t> ReadCounter(const std::string& path);
// mkdir -p; an error names the directory.
absl::Status MakeDirs(const std::string& path);

}  // namespace neuron::device

#endif  // NEURON_LIB_DEVICE_TREE_FILES_H_
