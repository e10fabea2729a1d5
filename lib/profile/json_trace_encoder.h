// Trace Event JSON (what chrome://tracing and ui.perfetto.dev open):
// complete spans ("X"), instants ("i"), counters ("C") and track names
// ("M"), then "otherData". Times are given in nanoseconds and written in
// microseconds with three decimals, so nothing is rounded away.
#ifndef NEURON_LIB_PROFILE_JSON_TRACE_ENCODER_H_
#define NEURON_LIB_PROFILE_JSON_TRACE_ENCODER_H_

#include <string>

#include "lib/profile/trace_encoder.h"

namespace neuron::profile {

class JsonTraceEncoder : public TraceEncoder {
 public:
  void NameProcess(int pid, std::string_view name, int sort_index) override;
  void NameThread(int pid, int tid, std::string_view name, int sort_index) override;
  void Span(int pid, int tid, std::string_view name, std::string_view category, int64_t begin_ns,
            int64_t duration_ns, const nlohmann::json& args) override;
  void SpanWithArgsText(int pid, int tid, std::string_view name, std::string_view category,
                        int64_t begin_ns, int64_t duration_ns,
                        std::string_view args_json) override;
  void Instant(int pid, int tid, std::string_view name, std::string_view category, int64_t at_ns,
               const nlohmann::json& args) override;
  void Counter(int pid, std::string_view name, int64_t at_ns,
               const nlohmann::json& values) override;
  absl::Status WriteTo(AtomicFile& file, const nlohmann::json& other_data) const override;

 private:
  void Add(const std::string& event);
  std::string events_;  // serialized events, comma-separated
  bool empty_ = true;
};

// A string as a JSON string literal (quoted, escaped).
std::string JsonString(std::string_view text);

}  // namespace neuron::profile

#endif  // NEURON_LIB_PROFILE_JSON_TRACE_ENCODER_H_
