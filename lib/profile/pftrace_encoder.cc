#include "lib/profile/pftrace_encoder.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "lib/profile/perfetto_trace.pb.h"
#include "lib/profile/proto_wire.h"

namespace neuron::profile {
namespace {

namespace pb = ::perfetto::protos;

// Any non-zero id: every packet we write belongs to this one sequence.
constexpr uint64_t kSequenceId = 1;

// The four interned kinds share one layout: {iid = 1, name or str = 2}.
static_assert(pb::EventName::kIidFieldNumber == 1 && pb::EventName::kNameFieldNumber == 2);
static_assert(pb::EventCategory::kIidFieldNumber == 1 &&
              pb::EventCategory::kNameFieldNumber == 2);
static_assert(pb::DebugAnnotationName::kIidFieldNumber == 1 &&
              pb::DebugAnnotationName::kNameFieldNumber == 2);
static_assert(pb::InternedString::kIidFieldNumber == 1 &&
              pb::InternedString::kStrFieldNumber == 2);

absl::string_view Absl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// Perfetto timestamps are unsigned; ours start at the profiling epoch.
uint64_t Timestamp(int64_t ns) { return static_cast<uint64_t>(std::max<int64_t>(ns, 0)); }

std::string Dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

PftraceEncoder::PftraceEncoder() {
  names_.field = pb::InternedData::kEventNamesFieldNumber;
  categories_.field = pb::InternedData::kEventCategoriesFieldNumber;
  annotation_names_.field = pb::InternedData::kDebugAnnotationNamesFieldNumber;
  string_values_.field = pb::InternedData::kDebugAnnotationStringValuesFieldNumber;
}

void PftraceEncoder::Emit(std::optional<int64_t> at_ns, int field, std::string_view body,
                          bool uses_interning) {
  packet_.clear();
  if (at_ns.has_value())
    wire::Unsigned(&packet_, pb::TracePacket::kTimestampFieldNumber, Timestamp(*at_ns));
  wire::Unsigned(&packet_, pb::TracePacket::kTrustedPacketSequenceIdFieldNumber, kSequenceId);
  // The first packet starts the sequence's interning afresh; later ones
  // that use interned ids say they depend on it.
  uint32_t flags = 0;
  if (first_packet_) {
    flags = pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED;
    first_packet_ = false;
  } else if (uses_interning) {
    flags = pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE;
  }
  if (flags != 0) wire::Unsigned(&packet_, pb::TracePacket::kSequenceFlagsFieldNumber, flags);
  if (!interned_.empty()) {
    wire::Bytes(&packet_, pb::TracePacket::kInternedDataFieldNumber, interned_);
    interned_.clear();
  }
  wire::Bytes(&packet_, field, body);
  wire::Bytes(&packets_, pb::Trace::kPacketFieldNumber, packet_);
}

uint64_t PftraceEncoder::Intern(InternTable& table, std::string_view text) {
  if (auto it = table.ids.find(Absl(text)); it != table.ids.end()) return it->second;
  const uint64_t iid = table.ids.size() + 1;
  table.ids.emplace(std::string(text), iid);
  std::string entry;
  wire::Unsigned(&entry, pb::EventName::kIidFieldNumber, iid);
  wire::Bytes(&entry, pb::EventName::kNameFieldNumber, text);
  wire::Bytes(&interned_, table.field, entry);
  return iid;
}

// ---- Tracks ----

void PftraceEncoder::DescribeProcess(uint64_t uuid, int pid, std::string_view name,
                                     std::optional<int> sort_index) {
  std::string process;
  wire::Signed(&process, pb::ProcessDescriptor::kPidFieldNumber, pid);
  if (sort_index.has_value())
    wire::Signed(&process, pb::ProcessDescriptor::kLegacySortIndexFieldNumber, *sort_index);
  if (!name.empty()) wire::Bytes(&process, pb::ProcessDescriptor::kProcessNameFieldNumber, name);
  std::string track;
  wire::Unsigned(&track, pb::TrackDescriptor::kUuidFieldNumber, uuid);
  wire::Bytes(&track, pb::TrackDescriptor::kProcessFieldNumber, process);
  Emit(std::nullopt, pb::TracePacket::kTrackDescriptorFieldNumber, track, false);
}

void PftraceEncoder::DescribeThread(uint64_t uuid, int pid, int tid, std::string_view name,
                                    std::optional<int> sort_index) {
  const uint64_t parent = ProcessTrack(pid);
  std::string thread;
  wire::Signed(&thread, pb::ThreadDescriptor::kPidFieldNumber, pid);
  wire::Signed(&thread, pb::ThreadDescriptor::kTidFieldNumber, tid);
  if (sort_index.has_value())
    wire::Signed(&thread, pb::ThreadDescriptor::kLegacySortIndexFieldNumber, *sort_index);
  if (!name.empty()) wire::Bytes(&thread, pb::ThreadDescriptor::kThreadNameFieldNumber, name);
  std::string track;
  wire::Unsigned(&track, pb::TrackDescriptor::kUuidFieldNumber, uuid);
  wire::Unsigned(&track, pb::TrackDescriptor::kParentUuidFieldNumber, parent);
  wire::Bytes(&track, pb::TrackDescriptor::kThreadFieldNumber, thread);
  Emit(std::nullopt, pb::TracePacket::kTrackDescriptorFieldNumber, track, false);
}

uint64_t PftraceEncoder::ProcessTrack(int pid) {
  auto [it, inserted] = processes_.try_emplace(pid, 0);
  if (inserted) {
    it->second = next_uuid_++;
    DescribeProcess(it->second, pid, "", std::nullopt);
  }
  return it->second;
}

namespace {
uint64_t ThreadKey(int pid, int tid) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32) | static_cast<uint32_t>(tid);
}
}  // namespace

uint64_t PftraceEncoder::ThreadTrack(int pid, int tid) {
  auto [it, inserted] = threads_.try_emplace(ThreadKey(pid, tid), 0);
  if (!inserted) return it->second;
  const uint64_t uuid = it->second = next_uuid_++;
  DescribeThread(uuid, pid, tid, "", std::nullopt);
  return uuid;
}

uint64_t PftraceEncoder::CounterTrack(int pid, std::string_view name, std::string_view key) {
  // Named as Perfetto names the series of a JSON counter event: "name key".
  const std::string track_name = absl::StrCat(Absl(name), " ", Absl(key));
  auto [it, inserted] = counters_.try_emplace(absl::StrCat(pid, "/", track_name), 0);
  if (!inserted) return it->second;
  const uint64_t uuid = it->second = next_uuid_++;
  const uint64_t parent = ProcessTrack(pid);
  std::string track;
  wire::Unsigned(&track, pb::TrackDescriptor::kUuidFieldNumber, uuid);
  wire::Unsigned(&track, pb::TrackDescriptor::kParentUuidFieldNumber, parent);
  wire::Bytes(&track, pb::TrackDescriptor::kNameFieldNumber, track_name);
  wire::Bytes(&track, pb::TrackDescriptor::kCounterFieldNumber, "");
  Emit(std::nullopt, pb::TracePacket::kTrackDescriptorFieldNumber, track, false);
  return uuid;
}

void PftraceEncoder::NameProcess(int pid, std::string_view name, int sort_index) {
  auto [it, inserted] = processes_.try_emplace(pid, 0);
  if (inserted) it->second = next_uuid_++;
  DescribeProcess(it->second, pid, name, sort_index);
}

void PftraceEncoder::NameThread(int pid, int tid, std::string_view name, int sort_index) {
  auto [it, inserted] = threads_.try_emplace(ThreadKey(pid, tid), 0);
  if (inserted) it->second = next_uuid_++;
  DescribeThread(it->second, pid, tid, name, sort_index);
}

// ---- Arguments ----

void PftraceEncoder::AppendValue(const nlohmann::json& value, bool intern_strings,
                                 std::string* a) {
  using DA = pb::DebugAnnotation;
  switch (value.type()) {
    case nlohmann::json::value_t::string: {
      const std::string& s = value.get_ref<const std::string&>();
      if (intern_strings) {
        wire::Unsigned(a, DA::kStringValueIidFieldNumber, Intern(string_values_, s));
      } else {
        wire::Bytes(a, DA::kStringValueFieldNumber, s);
      }
      break;
    }
    case nlohmann::json::value_t::boolean:
      wire::Unsigned(a, DA::kBoolValueFieldNumber, value.get<bool>() ? 1 : 0);
      break;
    case nlohmann::json::value_t::number_unsigned:
      wire::Unsigned(a, DA::kUintValueFieldNumber, value.get<uint64_t>());
      break;
    case nlohmann::json::value_t::number_integer:
      wire::Signed(a, DA::kIntValueFieldNumber, value.get<int64_t>());
      break;
    case nlohmann::json::value_t::number_float:
      wire::Double(a, DA::kDoubleValueFieldNumber, value.get<double>());
      break;
    case nlohmann::json::value_t::object:
      for (const auto& [key, child] : value.items()) {
        std::string entry;
        wire::Bytes(&entry, DA::kNameFieldNumber, key);
        AppendValue(child, false, &entry);
        wire::Bytes(a, DA::kDictEntriesFieldNumber, entry);
      }
      break;
    case nlohmann::json::value_t::array:
      for (const nlohmann::json& child : value) {
        std::string entry;
        AppendValue(child, false, &entry);
        wire::Bytes(a, DA::kArrayValuesFieldNumber, entry);
      }
      break;
    default:  // null (and what JSON text cannot hold)
      wire::Bytes(a, DA::kLegacyJsonValueFieldNumber, "null");
      break;
  }
}

void PftraceEncoder::AppendAnnotations(const nlohmann::json& args, std::string* out) {
  if (args.is_null()) return;
  std::string one;
  auto add = [&](std::string_view name, const nlohmann::json& value) {
    one.clear();
    wire::Unsigned(&one, pb::DebugAnnotation::kNameIidFieldNumber,
                   Intern(annotation_names_, name));
    AppendValue(value, true, &one);
    wire::Bytes(out, pb::TrackEvent::kDebugAnnotationsFieldNumber, one);
  };
  if (!args.is_object()) {
    add("args", args);
    return;
  }
  for (const auto& [key, value] : args.items()) add(key, value);
}

const std::string& PftraceEncoder::CachedAnnotations(std::string_view args_json) {
  auto it = args_cache_.find(Absl(args_json));
  if (it != args_cache_.end()) return it->second;
  std::string encoded;
  const nlohmann::json parsed = nlohmann::json::parse(args_json, nullptr, false);
  if (parsed.is_discarded()) {
    // Not JSON after all: kept as the text it is.
    std::string one;
    wire::Unsigned(&one, pb::DebugAnnotation::kNameIidFieldNumber,
                   Intern(annotation_names_, "args"));
    wire::Bytes(&one, pb::DebugAnnotation::kLegacyJsonValueFieldNumber, args_json);
    wire::Bytes(&encoded, pb::TrackEvent::kDebugAnnotationsFieldNumber, one);
  } else {
    AppendAnnotations(parsed, &encoded);
  }
  return args_cache_.emplace(std::string(args_json), std::move(encoded)).first->second;
}

// ---- Events ----

void PftraceEncoder::NamedEvent(int type, uint64_t track, std::string_view name,
                                std::string_view category, int64_t at_ns,
                                std::string_view annotations) {
  using TE = pb::TrackEvent;
  const uint64_t name_iid = Intern(names_, name);
  const uint64_t category_iid = category.empty() ? 0 : Intern(categories_, category);
  event_.clear();
  wire::Unsigned(&event_, TE::kTypeFieldNumber, static_cast<uint64_t>(type));
  wire::Unsigned(&event_, TE::kTrackUuidFieldNumber, track);
  if (category_iid != 0) wire::Unsigned(&event_, TE::kCategoryIidsFieldNumber, category_iid);
  wire::Unsigned(&event_, TE::kNameIidFieldNumber, name_iid);
  event_.append(annotations.data(), annotations.size());
  Emit(at_ns, pb::TracePacket::kTrackEventFieldNumber, event_, true);
}

void PftraceEncoder::EndSlice(uint64_t track, int64_t at_ns) {
  using TE = pb::TrackEvent;
  event_.clear();
  wire::Unsigned(&event_, TE::kTypeFieldNumber, TE::TYPE_SLICE_END);
  wire::Unsigned(&event_, TE::kTrackUuidFieldNumber, track);
  Emit(at_ns, pb::TracePacket::kTrackEventFieldNumber, event_, false);
}

void PftraceEncoder::SpanWithArgsText(int pid, int tid, std::string_view name,
                                      std::string_view category, int64_t begin_ns,
                                      int64_t duration_ns, std::string_view args_json) {
  using TE = pb::TrackEvent;
  // Tracks first: their descriptor packets must not take the interned
  // names this event queues.
  const uint64_t track = ThreadTrack(pid, tid);
  const std::string_view annotations =
      args_json.empty() ? std::string_view() : CachedAnnotations(args_json);
  if (duration_ns <= 0) {
    // An instant is a slice without duration to Perfetto, and cannot be
    // paired wrongly with a neighbour ending at the same time.
    NamedEvent(TE::TYPE_INSTANT, track, name, category, begin_ns, annotations);
    return;
  }
  NamedEvent(TE::TYPE_SLICE_BEGIN, track, name, category, begin_ns, annotations);
  EndSlice(track, begin_ns + duration_ns);
}

void PftraceEncoder::Span(int pid, int tid, std::string_view name, std::string_view category,
                          int64_t begin_ns, int64_t duration_ns, const nlohmann::json& args) {
  using TE = pb::TrackEvent;
  const uint64_t track = ThreadTrack(pid, tid);
  annotations_.clear();
  AppendAnnotations(args, &annotations_);
  if (duration_ns <= 0) {
    NamedEvent(TE::TYPE_INSTANT, track, name, category, begin_ns, annotations_);
    return;
  }
  NamedEvent(TE::TYPE_SLICE_BEGIN, track, name, category, begin_ns, annotations_);
  EndSlice(track, begin_ns + duration_ns);
}

void PftraceEncoder::Instant(int pid, int tid, std::string_view name, std::string_view category,
                             int64_t at_ns, const nlohmann::json& args) {
  const uint64_t track = ThreadTrack(pid, tid);
  annotations_.clear();
  AppendAnnotations(args, &annotations_);
  NamedEvent(pb::TrackEvent::TYPE_INSTANT, track, name, category, at_ns, annotations_);
}

void PftraceEncoder::Counter(int pid, std::string_view name, int64_t at_ns,
                             const nlohmann::json& values) {
  using TE = pb::TrackEvent;
  if (!values.is_object()) return;
  for (const auto& [key, value] : values.items()) {
    if (!value.is_number() && !value.is_boolean()) continue;  // not a counter value
    const uint64_t track = CounterTrack(pid, name, key);
    event_.clear();
    wire::Unsigned(&event_, TE::kTypeFieldNumber, TE::TYPE_COUNTER);
    wire::Unsigned(&event_, TE::kTrackUuidFieldNumber, track);
    if (value.is_number_float()) {
      wire::Double(&event_, TE::kDoubleCounterValueFieldNumber, value.get<double>());
    } else if (value.is_number_unsigned()) {
      wire::Signed(&event_, TE::kCounterValueFieldNumber,
                   static_cast<int64_t>(value.get<uint64_t>()));
    } else {
      wire::Signed(&event_, TE::kCounterValueFieldNumber,
                   value.is_boolean() ? (value.get<bool>() ? 1 : 0) : value.get<int64_t>());
    }
    Emit(at_ns, pb::TracePacket::kTrackEventFieldNumber, event_, false);
  }
}

absl::Status PftraceEncoder::WriteTo(AtomicFile& file, const nlohmann::json& other_data) const {
  if (absl::Status s = file.Append(packets_); !s.ok()) return s;
  // Last, what the capture was (our JSON's otherData), as one metadata entry.
  std::string metadata, bundle, packet, framed;
  wire::Bytes(&metadata, pb::ChromeMetadata::kNameFieldNumber, "otherData");
  wire::Bytes(&metadata, pb::ChromeMetadata::kJsonValueFieldNumber, Dump(other_data));
  wire::Bytes(&bundle, pb::ChromeEventBundle::kMetadataFieldNumber, metadata);
  wire::Bytes(&packet, pb::TracePacket::kChromeEventsFieldNumber, bundle);
  wire::Bytes(&framed, pb::Trace::kPacketFieldNumber, packet);
  return file.Append(framed);
}

}  // namespace neuron::profile
