// Reads a .pftrace back the way a Perfetto reader would, for tests: packets
// parsed with the classes generated from lib/profile/perfetto_trace.proto,
// interned names resolved (an id used before its definition is an error),
// and each track's events ordered by timestamp (stable, as trace_processor
// sorts them) before SLICE_BEGIN and SLICE_END are paired. Whatever a
// reader would reject or silently misread is returned as an error.
#ifndef NEURON_TESTS_PROFILE_PFTRACE_READER_H_
#define NEURON_TESTS_PROFILE_PFTRACE_READER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace neuron::testing {

struct PfTrack {
  uint64_t uuid = 0, parent = 0;
  std::string name;  // the process, thread or track name
  std::optional<int> pid;
  std::optional<int64_t> tid;
  std::optional<int> sort_index;
  bool counter = false;
};

// A span, or an instant (duration 0).
struct PfSlice {
  int pid = 0;
  int64_t tid = 0;
  std::string name, category;
  int64_t begin_ns = 0, duration_ns = 0;
  bool instant = false;
  nlohmann::json args;  // null when none
};

struct PfCounter {
  int pid = 0;
  std::string track;
  int64_t at_ns = 0;
  double value = 0;
};

struct PfTrace {
  std::map<uint64_t, PfTrack> tracks;
  std::vector<PfSlice> slices;  // by begin time (file order among equals)
  std::vector<PfCounter> counters;
  nlohmann::json other_data;
  size_t packets = 0;
  size_t event_name_definitions = 0;  // InternedData.event_names entries
  size_t distinct_event_names = 0;
};

absl::StatusOr<PfTrace> ParsePftrace(const std::string& bytes);
absl::StatusOr<PfTrace> ReadPftraceFile(const std::string& path);

}  // namespace neuron::testing

#endif  // NEURON_TESTS_PROFILE_PFTRACE_READER_H_
