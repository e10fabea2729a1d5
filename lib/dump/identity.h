// Who and when a dump is about, and the path templates of the real
// runtime's core dumps: %d date-time, %c collectives cluster id, %p pid,
// %t tid, %l log id, %i instance id (%% is a literal %). Used by the
// runtime for NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY / NEURON_RT_S3_CORE_DUMP_PREFIX
// and by neuron-dump for what it is handed.
#ifndef NEURON_LIB_DUMP_IDENTITY_H_
#define NEURON_LIB_DUMP_IDENTITY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/time/time.h"

namespace neuron::dump {

inline constexpr const char* kNoCluster = "0000000000000000";

struct DumpIdentity {
  absl::Time time;                 // of the failure
  std::string cluster_id = kNoCluster;
  int64_t pid = 0;
  int64_t tid = 0;
  uint64_t log_id = 0;             // per-process dump counter
  std::string instance_id;         // e.g. i-0a1b2c3d4e5f60718
};

// The identity of a failure now, on this thread, with the next log id.
DumpIdentity CurrentIdentity();

// This host's (simulated) instance id: "i-" and 17 hex digits, stable for
// the host.
std::string InstanceId();

// 20250917-194443: the %d of paths (UTC).
std::string PathDateTime(absl::Time time);
// 2025-09-17-19-44: the runtime's --date-time argument (UTC).
std::string FlagDateTime(absl::Time time);

// Expands the % variables of a path template.
std::string ExpandPathTemplate(std::string_view templ, const DumpIdentity& id);

}  // namespace neuron::dump

#endif  // NEURON_LIB_DUMP_IDENTITY_H_
