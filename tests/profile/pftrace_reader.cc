#include "tests/profile/pftrace_reader.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "lib/profile/perfetto_trace.pb.h"

namespace neuron::testing {
namespace {

namespace pb = ::perfetto::protos;
using nlohmann::json;

// Interned strings of one kind: iid -> text.
using Table = std::map<uint64_t, std::string>;

struct Interned {
  Table names, categories, annotation_names, strings;
};

template <typename Entry>
absl::Status Define(const google::protobuf::RepeatedPtrField<Entry>& entries, Table& table,
                    const char* kind, size_t* definitions = nullptr) {
  for (const Entry& e : entries) {
    std::string text;
    if constexpr (std::is_same_v<Entry, pb::InternedString>) {
      text = e.str();
    } else {
      text = e.name();
    }
    if (e.iid() == 0) return absl::DataLossError(absl::StrCat(kind, " interned with iid 0"));
    auto [it, inserted] = table.emplace(e.iid(), text);
    if (!inserted && it->second != text)
      return absl::DataLossError(absl::StrCat(kind, " iid ", e.iid(), " redefined"));
    if (definitions != nullptr) ++*definitions;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Lookup(const Table& table, uint64_t iid, const char* kind) {
  auto it = table.find(iid);
  if (it == table.end())
    return absl::DataLossError(absl::StrCat(kind, " iid ", iid, " used before it was interned"));
  return it->second;
}

absl::StatusOr<json> Value(const pb::DebugAnnotation& a, const Interned& in) {
  switch (a.value_case()) {
    case pb::DebugAnnotation::kBoolValue: return json(a.bool_value());
    case pb::DebugAnnotation::kUintValue: return json(a.uint_value());
    case pb::DebugAnnotation::kIntValue: return json(a.int_value());
    case pb::DebugAnnotation::kDoubleValue: return json(a.double_value());
    case pb::DebugAnnotation::kStringValue: return json(a.string_value());
    case pb::DebugAnnotation::kStringValueIid: {
      absl::StatusOr<std::string> s = Lookup(in.strings, a.string_value_iid(), "string value");
      if (!s.ok()) return s.status();
      return json(*s);
    }
    case pb::DebugAnnotation::kLegacyJsonValue: {
      json j = json::parse(a.legacy_json_value(), nullptr, false);
      if (j.is_discarded()) return json(a.legacy_json_value());
      return j;
    }
    case pb::DebugAnnotation::VALUE_NOT_SET: break;
  }
  if (a.dict_entries_size() > 0) {
    json object = json::object();
    for (const pb::DebugAnnotation& e : a.dict_entries()) {
      absl::StatusOr<json> v = Value(e, in);
      if (!v.ok()) return v;
      object[e.name()] = *v;
    }
    return object;
  }
  if (a.array_values_size() > 0) {
    json array = json::array();
    for (const pb::DebugAnnotation& e : a.array_values()) {
      absl::StatusOr<json> v = Value(e, in);
      if (!v.ok()) return v;
      array.push_back(*v);
    }
    return array;
  }
  return json();
}

// A track event with what it refers to already resolved.
struct Event {
  int type = 0;
  int64_t at_ns = 0;
  size_t order = 0;  // position in the file
  std::string name, category;
  json args;
  double value = 0;
};

}  // namespace

absl::StatusOr<PfTrace> ParsePftrace(const std::string& bytes) {
  pb::Trace trace;
  if (!trace.ParseFromString(bytes)) return absl::DataLossError("not a Perfetto Trace message");
  PfTrace out;
  out.packets = static_cast<size_t>(trace.packet_size());
  Interned in;
  std::map<uint64_t, std::vector<Event>> events;  // per track
  bool sequence_started = false;
  for (int i = 0; i < trace.packet_size(); ++i) {
    const pb::TracePacket& p = trace.packet(i);
    const std::string where = absl::StrCat("packet ", i, ": ");
    if (p.has_trusted_packet_sequence_id()) {
      const bool cleared = p.sequence_flags() & pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED;
      if (!sequence_started && !cleared)
        return absl::DataLossError(where + "the sequence does not start by clearing its state");
      sequence_started = true;
    }
    if (p.has_interned_data()) {
      const pb::InternedData& d = p.interned_data();
      for (absl::Status s :
           {Define(d.event_names(), in.names, "event name", &out.event_name_definitions),
            Define(d.event_categories(), in.categories, "category"),
            Define(d.debug_annotation_names(), in.annotation_names, "annotation name"),
            Define(d.debug_annotation_string_values(), in.strings, "string value")}) {
        if (!s.ok()) return absl::DataLossError(where + std::string(s.message()));
      }
    }
    if (p.has_track_descriptor()) {
      const pb::TrackDescriptor& d = p.track_descriptor();
      PfTrack& t = out.tracks[d.uuid()];
      t.uuid = d.uuid();
      if (d.has_parent_uuid()) t.parent = d.parent_uuid();
      if (d.has_name()) t.name = d.name();
      if (d.has_process()) {
        t.pid = d.process().pid();
        if (d.process().has_process_name()) t.name = d.process().process_name();
        if (d.process().has_legacy_sort_index()) t.sort_index = d.process().legacy_sort_index();
      }
      if (d.has_thread()) {
        t.pid = d.thread().pid();
        t.tid = d.thread().tid();
        if (d.thread().has_thread_name()) t.name = d.thread().thread_name();
        if (d.thread().has_legacy_sort_index()) t.sort_index = d.thread().legacy_sort_index();
      }
      if (d.has_counter()) t.counter = true;
    }
    if (p.has_chrome_events()) {
      for (const pb::ChromeMetadata& m : p.chrome_events().metadata())
        if (m.name() == "otherData") out.other_data = json::parse(m.json_value(), nullptr, false);
    }
    if (!p.has_track_event()) continue;
    const pb::TrackEvent& e = p.track_event();
    if (!p.has_trusted_packet_sequence_id() || !p.has_timestamp())
      return absl::DataLossError(where + "a track event without sequence id or timestamp");
    if (!out.tracks.count(e.track_uuid()))
      return absl::DataLossError(absl::StrCat(where, "track ", e.track_uuid(), " not described"));
    const bool uses_iids = e.has_name_iid() || e.category_iids_size() > 0 ||
                           e.debug_annotations_size() > 0;
    const uint32_t flags = p.sequence_flags();
    if (uses_iids && !(flags & (pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE |
                                pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED)))
      return absl::DataLossError(where + "interned ids without SEQ_NEEDS_INCREMENTAL_STATE");
    Event ev;
    ev.type = e.type();
    ev.at_ns = static_cast<int64_t>(p.timestamp());
    ev.order = static_cast<size_t>(i);
    if (e.has_name_iid()) {
      absl::StatusOr<std::string> n = Lookup(in.names, e.name_iid(), "event name");
      if (!n.ok()) return absl::DataLossError(where + std::string(n.status().message()));
      ev.name = *n;
    } else {
      ev.name = e.name();
    }
    for (uint64_t iid : e.category_iids()) {
      absl::StatusOr<std::string> c = Lookup(in.categories, iid, "category");
      if (!c.ok()) return absl::DataLossError(where + std::string(c.status().message()));
      ev.category = *c;
    }
    for (const pb::DebugAnnotation& a : e.debug_annotations()) {
      std::string name = a.name();
      if (a.has_name_iid()) {
        absl::StatusOr<std::string> n = Lookup(in.annotation_names, a.name_iid(), "annotation");
        if (!n.ok()) return absl::DataLossError(where + std::string(n.status().message()));
        name = *n;
      }
      absl::StatusOr<json> v = Value(a, in);
      if (!v.ok()) return absl::DataLossError(where + std::string(v.status().message()));
      ev.args[name] = *v;
    }
    ev.value = e.has_double_counter_value() ? e.double_counter_value()
                                            : static_cast<double>(e.counter_value());
    events[e.track_uuid()].push_back(std::move(ev));
  }
  std::set<std::string> names;
  for (auto& [uuid, list] : events) {
    const PfTrack& track = out.tracks[uuid];
    std::stable_sort(list.begin(), list.end(),
                     [](const Event& a, const Event& b) { return a.at_ns < b.at_ns; });
    std::vector<PfSlice> open;
    for (Event& ev : list) {
      PfSlice s;
      s.pid = track.pid.value_or(0);
      s.tid = track.tid.value_or(0);
      switch (ev.type) {
        case pb::TrackEvent::TYPE_SLICE_BEGIN:
        case pb::TrackEvent::TYPE_INSTANT:
          if (!track.tid.has_value())
            return absl::DataLossError(absl::StrCat("slice on track ", uuid, ", not a thread"));
          s.name = ev.name;
          s.category = ev.category;
          s.begin_ns = ev.at_ns;
          s.args = std::move(ev.args);
          names.insert(s.name);
          if (ev.type == pb::TrackEvent::TYPE_INSTANT) {
            s.instant = true;
            out.slices.push_back(std::move(s));
          } else {
            open.push_back(std::move(s));
          }
          break;
        case pb::TrackEvent::TYPE_SLICE_END:
          if (open.empty())
            return absl::DataLossError(absl::StrCat("track ", uuid, ": SLICE_END at ", ev.at_ns,
                                                    " with no slice open"));
          open.back().duration_ns = ev.at_ns - open.back().begin_ns;
          out.slices.push_back(std::move(open.back()));
          open.pop_back();
          break;
        case pb::TrackEvent::TYPE_COUNTER:
          if (!track.counter)
            return absl::DataLossError(absl::StrCat("counter value on track ", uuid,
                                                    ", not a counter track"));
          out.counters.push_back(
              {out.tracks[track.parent].pid.value_or(0), track.name, ev.at_ns, ev.value});
          break;
        default:
          return absl::DataLossError(absl::StrCat("track event of type ", ev.type));
      }
    }
    if (!open.empty())
      return absl::DataLossError(
          absl::StrCat("track ", uuid, ": slice '", open.back().name, "' never ends"));
  }
  out.distinct_event_names = names.size();
  std::stable_sort(out.slices.begin(), out.slices.end(),
                   [](const PfSlice& a, const PfSlice& b) { return a.begin_ns < b.begin_ns; });
  return out;
}

absl::StatusOr<PfTrace> ReadPftraceFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  absl::StatusOr<PfTrace> t = ParsePftrace(ss.str());
  if (!t.ok()) return absl::DataLossError(absl::StrCat(path, ": ", t.status().message()));
  return t;
}

}  // namespace neuron::testing
