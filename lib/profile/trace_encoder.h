// How a Trace's events become the bytes of one file format. A Trace
// (lib/profile/trace.h) holds one encoder, which keeps the encoded events
// in memory (a session trace is rewritten at every flush) and writes them
// with the trace's otherData when asked.
#ifndef NEURON_LIB_PROFILE_TRACE_ENCODER_H_
#define NEURON_LIB_PROFILE_TRACE_ENCODER_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "lib/support/atomic_file.h"
#include "nlohmann/json.hpp"

namespace neuron::profile {

class TraceEncoder {
 public:
  virtual ~TraceEncoder() = default;

  virtual void NameProcess(int pid, std::string_view name, int sort_index) = 0;
  virtual void NameThread(int pid, int tid, std::string_view name, int sort_index) = 0;
  // `args` is a JSON object or null (no args).
  virtual void Span(int pid, int tid, std::string_view name, std::string_view category,
                    int64_t begin_ns, int64_t duration_ns, const nlohmann::json& args) = 0;
  // `args_json` is a JSON object as text, or empty (no args). The same text
  // recurs for every execution of an instruction, so encoders may cache
  // what they make of it.
  virtual void SpanWithArgsText(int pid, int tid, std::string_view name,
                                std::string_view category, int64_t begin_ns,
                                int64_t duration_ns, std::string_view args_json) = 0;
  virtual void Instant(int pid, int tid, std::string_view name, std::string_view category,
                       int64_t at_ns, const nlohmann::json& args) = 0;
  // One value per key of `values` (numbers), each its own counter series.
  virtual void Counter(int pid, std::string_view name, int64_t at_ns,
                       const nlohmann::json& values) = 0;

  // Appends the whole document to `file`, in pieces (never a second copy
  // of the events in memory).
  virtual absl::Status WriteTo(AtomicFile& file, const nlohmann::json& other_data) const = 0;
};

}  // namespace neuron::profile

#endif  // NEURON_LIB_PROFILE_TRACE_ENCODER_H_
