// The system trace: what the runtime does on the host (model loads and
// unloads, executions, device tensor transfers, device memory), as events
// with a core and begin/end times, kept in a bounded ring per NeuronCore.
//
// Any number of SysTrace recorders may be open at once (the C API's
// nrt_sys_trace_start, an inspect session); the runtime's hooks call
// RecordSysEvent, which hands the event to every open recorder that wants
// it. Events are moved out with Take: fetched once, never again.
//
// Event types are names of lib/config/inspect_events (the words of
// NEURON_RT_INSPECT_EVENT_FILTER_TYPE), restricted to those the runtime
// really records here.
#ifndef NEURON_LIB_PROFILE_SYS_TRACE_H_
#define NEURON_LIB_PROFILE_SYS_TRACE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"

namespace neuron::profile {

// "load", "unload", "exec", "tensor", "memory", "cc_running".
const std::vector<std::string>& SysTraceEventTypes();
bool IsSysTraceEventType(std::string_view type);

struct SysEvent {
  uint64_t seq = 0;                  // process-wide order of recording
  std::string type;                  // one of SysTraceEventTypes()
  std::string name;                  // what happened: "model_load", "tensor_read", ...
  int core = 0;                      // logical NeuronCore
  int64_t begin_ns = 0, end_ns = 0;  // NowNs(); equal for an instant
  uint64_t thread_id = 0;            // the host thread (gettid)
  nlohmann::json args = nlohmann::json::object();
};

struct SysTraceOptions {
  // Ring capacity per core; beyond it the oldest events are dropped.
  // 0: unbounded.
  uint64_t max_events_per_nc = 0;
  std::set<int> disabled_cores;          // no ring, no events
  std::set<std::string> disabled_types;  // names of SysTraceEventTypes()
};

class SysTrace {
 public:
  explicit SysTrace(SysTraceOptions options);
  ~SysTrace();  // closes it
  SysTrace(const SysTrace&) = delete;
  SysTrace& operator=(const SysTrace&) = delete;

  // Starts receiving events (Open) or stops (Close; what was not taken stays).
  void Open();
  void Close();

  bool Wants(std::string_view type, int core) const;
  void Add(const SysEvent& event);

  // Moves out each selected core's oldest events, at most `max_per_core`
  // of each (0: all), merged in recording order.
  std::vector<SysEvent> Take(std::optional<int> core, uint64_t max_per_core);
  // Events dropped because a ring was full, per core.
  std::map<int, uint64_t> Dropped() const;

  const SysTraceOptions& options() const { return options_; }

 private:
  const SysTraceOptions options_;
  mutable std::mutex mu_;
  std::map<int, std::deque<SysEvent>> rings_;
  std::map<int, uint64_t> dropped_;
};

// Whether any open recorder wants events of `type` (the hooks check this
// before building an event).
bool SysTraceWanted(std::string_view type);
// Stamps `event` (seq, thread) and gives it to every open recorder that
// wants its type and core.
void RecordSysEvent(SysEvent event);

// Events as JSON: {"events":[{"seq":..,"type":..,"name":..,"nc_idx":..,
// "begin_ns":..,"end_ns":..,"thread_id":..,"args":{..}}, ...]}.
std::string SysEventsJson(const std::vector<SysEvent>& events,
                          const std::map<int, uint64_t>& dropped);

}  // namespace neuron::profile

#endif  // NEURON_LIB_PROFILE_SYS_TRACE_H_
