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
  void NameProcess(int pid, std::string_view name, int sort_index);
  void NameThread(int pid, int tid, std::string_view name, int sort_index);
  void Span(int pid, int tid, std::string_view name, std::string_view category,
            int64_t begin_ns, int64_t duration_ns, const nlohmann::json& args = nullptr);
  // A span whose args are already JSON text (the per-instruction fast path:
  // millions of spans are written as text, not built as JSON values).
  void SpanWithArgsText(int pid, int tid, std::string_view name, std::string_view category,
                        int64_t begin_ns, int64_t duration_ns, std::string_view args_json);
  void Instant(int pid, int tid, std::string_view name, std::string_view category,
               int64_t at_ns, const nlohmann::json& args = nullptr);
  void Counter(int pid, std::string_view name, int64_t at_ns, const nlohmann::json& values);

  nlohmann::json& other_data() { return other_; }
  size_t event_count() const { return count_; }

  // Writes the document to a temporary file beside `path`, then renames it
  // over `path`, so a viewer never opens half a trace. Creates the directory.
  absl::Status WriteFile(const std::string& path) const;

 private:
  void Add(const std::string& event);
  std::string events_;  // serialized events, comma-separated
  size_t count_ = 0;
  nlohmann::json other_ = nlohmann::json::object();
};

// A string as a JSON string literal (quoted, escaped).
std::string JsonString(std::string_view text);

// Creates `dir` and its parents (mkdir -p); errors name the directory.
absl::Status MakeDirectories(const std::string& dir);

}  // namespace neuron::profile

#endif  // NEURON_LIB_PROFILE_TRACE_H_
