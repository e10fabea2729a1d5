// Perfetto's native trace (.pftrace): a stream of TracePackets
// (lib/profile/perfetto_trace.proto) on one packet sequence. Each pid is a
// process track, each pid/tid a thread track under it, each counter key a
// counter track; a span is a SLICE_BEGIN and a SLICE_END packet on its
// track, an instant (or a span without duration) an INSTANT packet. Event
// names, categories, argument names and top-level string arguments are
// interned: the packet that first uses one carries it in interned_data,
// later packets only its id, so millions of spans of few distinct names
// stay small. Packets are encoded
// straight into their framed bytes as events arrive; writing appends those
// bytes to the file as they are.
#ifndef NEURON_LIB_PROFILE_PFTRACE_ENCODER_H_
#define NEURON_LIB_PROFILE_PFTRACE_ENCODER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "lib/profile/trace_encoder.h"

namespace neuron::profile {

class PftraceEncoder : public TraceEncoder {
 public:
  PftraceEncoder();

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
  // Ids of one kind of interned string (1, 2, ...) and the InternedData
  // field that defines them.
  struct InternTable {
    int field;
    absl::flat_hash_map<std::string, uint64_t> ids;
  };

  // Track uuids, each described by a TrackDescriptor packet when first used.
  uint64_t ProcessTrack(int pid);
  uint64_t ThreadTrack(int pid, int tid);
  uint64_t CounterTrack(int pid, std::string_view name, std::string_view key);
  void DescribeProcess(uint64_t uuid, int pid, std::string_view name,
                       std::optional<int> sort_index);
  void DescribeThread(uint64_t uuid, int pid, int tid, std::string_view name,
                      std::optional<int> sort_index);

  // The id of `text`, queuing its definition for the next packet when new.
  uint64_t Intern(InternTable& table, std::string_view text);
  // `args` (a JSON object) as repeated TrackEvent.debug_annotations.
  void AppendAnnotations(const nlohmann::json& args, std::string* out);
  void AppendValue(const nlohmann::json& value, bool intern_strings, std::string* annotation);
  // Encoded annotations of an args text, built once per distinct text.
  const std::string& CachedAnnotations(std::string_view args_json);

  // A BEGIN (or INSTANT) event with name, category and annotations.
  void NamedEvent(int type, uint64_t track, std::string_view name, std::string_view category,
                  int64_t at_ns, std::string_view annotations);
  // Closes the track's innermost open slice at `at_ns`.
  void EndSlice(uint64_t track, int64_t at_ns);
  // Frames one TracePacket holding `body` as field `field`, with what was
  // interned since the previous packet.
  void Emit(std::optional<int64_t> at_ns, int field, std::string_view body, bool uses_interning);

  std::string packets_;  // every framed packet so far
  bool first_packet_ = true;
  uint64_t next_uuid_ = 1;
  absl::flat_hash_map<int, uint64_t> processes_;
  absl::flat_hash_map<uint64_t, uint64_t> threads_;       // pid:tid -> uuid
  absl::flat_hash_map<std::string, uint64_t> counters_;   // pid, name, key -> uuid
  InternTable names_, categories_, annotation_names_, string_values_;
  absl::flat_hash_map<std::string, std::string> args_cache_;
  // Reused buffers: the pending InternedData, the event, the packet.
  std::string interned_, event_, packet_, annotations_;
};

}  // namespace neuron::profile

#endif  // NEURON_LIB_PROFILE_PFTRACE_ENCODER_H_
