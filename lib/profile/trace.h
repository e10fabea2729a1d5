// A Trace Event Format document (the JSON that chrome://tracing and
// ui.perfetto.dev open): complete spans ("X"), instants ("i"), counters
// ("C") and track names ("M"), plus "otherData" for what the capture was.
// Times are given in nanoseconds and written in microseconds.
#ifndef NEURON_LIB_PROFILE_TRACE_H_
#define NEURON_LIB_PROFILE_TRACE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace neuron::profile {

class Trace {
 public:
  Trace();

  void NameProcess(int pid, std::string_view name, int sort_index);
  void NameThread(int pid, int tid, std::string_view name, int sort_index);
  void Span(int pid, int tid, std::string_view name, std::string_view category,
            int64_t begin_ns, int64_t duration_ns, nlohmann::json args = nullptr);
  void Instant(int pid, int tid, std::string_view name, std::string_view category,
               int64_t at_ns, nlohmann::json args = nullptr);
  void Counter(int pid, std::string_view name, int64_t at_ns, nlohmann::json values);

  nlohmann::json& other_data() { return doc_["otherData"]; }
  size_t event_count() const { return doc_["traceEvents"].size(); }
  const nlohmann::json& json() const { return doc_; }

  // Writes the document to a temporary file beside `path`, then renames it
  // over `path`, so a viewer never opens half a trace. Creates the directory.
  absl::Status WriteFile(const std::string& path) const;

 private:
  nlohmann::json doc_;
};

// Creates `dir` and its parents (mkdir -p); errors name the directory.
absl::Status MakeDirectories(const std::string& dir);

}  // namespace neuron::profile

#endif  // NEURON_LIB_PROFILE_TRACE_H_
