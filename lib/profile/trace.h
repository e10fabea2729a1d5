// A profile document: spans, instants, counters and track names on
// pid/tid tracks, plus "otherData" for what the capture was. Times are
// nanoseconds. The file format is chosen at construction
// (NEURON_SIM_PROFILE_FORMAT): Trace Event JSON (lib/profile/
// json_trace_encoder.h) or Perfetto's protobuf trace (lib/profile/
// pftrace_encoder.h); both open in ui.perfetto.dev.
#ifndef NEURON_LIB_PROFILE_TRACE_H_
#define NEURON_LIB_PROFILE_TRACE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "lib/config/config.h"
#include "lib/profile/trace_encoder.h"
#include "nlohmann/json.hpp"

namespace neuron::profile {

class Trace {
 public:
  explicit Trace(config::ProfileFormat format = config::ProfileFormat::kJson);

  void NameProcess(int pid, std::string_view name, int sort_index);
  void NameThread(int pid, int tid, std::string_view name, int sort_index);
  void Span(int pid, int tid, std::string_view name, std::string_view category,
            int64_t begin_ns, int64_t duration_ns, const nlohmann::json& args = nullptr);
  // A span whose args are already JSON text (the per-instruction fast path:
  // millions of spans are written from text, not built as JSON values).
  void SpanWithArgsText(int pid, int tid, std::string_view name, std::string_view category,
                        int64_t begin_ns, int64_t duration_ns, std::string_view args_json);
  void Instant(int pid, int tid, std::string_view name, std::string_view category,
               int64_t at_ns, const nlohmann::json& args = nullptr);
  void Counter(int pid, std::string_view name, int64_t at_ns, const nlohmann::json& values);

  nlohmann::json& other_data() { return other_; }
  config::ProfileFormat format() const { return format_; }

  // Writes the document whole or not at all (lib/support/atomic_file.h), so
  // a viewer never opens half a trace. Creates the directory.
  absl::Status WriteFile(const std::string& path) const;

 private:
  config::ProfileFormat format_;
  std::unique_ptr<TraceEncoder> encoder_;
  nlohmann::json other_ = nlohmann::json::object();
};

// What profile file names end in: ".json" or ".pftrace".
const char* ProfileFileExtension(config::ProfileFormat format);

// Creates `dir` and its parents (mkdir -p); errors name the directory.
absl::Status MakeDirectories(const std::string& dir);

}  // namespace neuron::profile

#endif  // NEURON_LIB_PROFILE_TRACE_H_
