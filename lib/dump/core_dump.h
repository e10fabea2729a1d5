// Writes the core dump of a failing execution (layout: core_dump_format.h,
// man/neuron-core-dump.5) into a directory, under the real runtime's names:
//   <instance>-nd<dev>-nc<core>-pid-<pid>-tid-<tid>-lid-<log id>.zst
//                                   the simulated core's state
//   <instance>-nrt-pid-<pid>.log    the log ring, as text
#ifndef NEURON_LIB_DUMP_CORE_DUMP_H_
#define NEURON_LIB_DUMP_CORE_DUMP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/dump/failure.h"
#include "lib/dump/identity.h"

namespace neuron::dump {

inline constexpr const char* kCoreDumpFormat = "neuron-core-dump";

struct CoreDumpOptions {
  // Live buffers are stored up to this many bytes in all; the rest are
  // described (meta "stored" < "bytes").
  uint64_t max_buffer_bytes = 64ull << 20;
  std::string memlog;  // the log ring's text
  // Effective settings worth keeping with the dump (name -> value).
  std::vector<std::pair<std::string, std::string>> settings;
};

std::string CoreDumpFileName(const DumpIdentity& id, int device, int core);

// Returns the paths written (core state first, then the log).
absl::StatusOr<std::vector<std::string>> WriteCoreDump(const std::string& dir,
                                                       const FailedExecution& failure,
                                                       const DumpIdentity& id,
                                                       const CoreDumpOptions& options);

}  // namespace neuron::dump

#endif  // NEURON_LIB_DUMP_CORE_DUMP_H_
