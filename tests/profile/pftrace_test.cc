// The two profile file formats of lib/profile/trace.h: a Perfetto trace
// (.pftrace) read back through the generated protobuf classes holds the
// tracks, names, times, args and counters it was given, interns each name
// once, and carries the same events as the Trace Event JSON of the same
// calls.
#include <dirent.h>
#include <sys/stat.h>

#include <cmath>
#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "lib/profile/trace.h"
#include "nlohmann/json.hpp"
#include "tests/device/fast_temp_dir.h"
#include "tests/profile/pftrace_reader.h"

namespace neuron::profile {
namespace {

using config::ProfileFormat;
using nlohmann::json;
using testing::PfCounter;
using testing::PfSlice;
using testing::PfTrace;

const char* const kNames[] = {"fusion.1", "dot.7", "copy.2"};
const char* const kArgs[] = {R"({"hlo":"fusion.1","opcode":"fusion","bytes":4096,"flops":512})",
                             R"({"hlo":"dot.7","opcode":"dot","bytes":8192,"flops":65536})",
                             R"({"hlo":"copy.2","opcode":"copy","bytes":1024,"flops":0})"};
constexpr int kSpans = 1000;

// The same calls for either format: named and unnamed tracks on two
// processes, many spans of few names, nested spans, JSON args of every
// type, instants, a span without duration and two counter series.
void Feed(Trace& t) {
  t.NameProcess(100, "host", 1);
  t.NameThread(100, 7, "worker", 3);
  t.NameThread(100, 8, "io", 4);
  for (int i = 0; i < kSpans; ++i)
    t.SpanWithArgsText(100, 7, kNames[i % 3], "compute", 1000 + i * 100, 50 + i % 7, kArgs[i % 3]);
  t.Span(100, 8, "outer", "api", 0, 1000000, {{"model", "m"}, {"core", 1}});
  t.Span(100, 8, "inner", "exec", 10, 500,
         {{"ok", true}, {"ratio", 0.5}, {"neg", -3}, {"list", {1, 2}}, {"obj", {{"k", "v"}}}});
  t.Instant(100, 8, "mark", "tensor", 20, {{"bytes", 64}});
  t.Span(200, 5, "zero", "dma", 5, 0);
  t.Counter(100, "memory", 30, {{"bytes", 4096}, {"pct", 12.5}});
  t.Counter(100, "memory", 40, {{"bytes", 8192}, {"pct", 25.0}});
  t.other_data()["profile"] = "device";
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class PftraceTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = neuron::testing::FastTempDir(); }

  // Feeds a trace of `format`, writes it and returns the file's path.
  std::string Write(ProfileFormat format) {
    Trace t(format);
    Feed(t);
    const std::string path = dir_ + "/trace" + ProfileFileExtension(format);
    absl::Status s = t.WriteFile(path);
    EXPECT_TRUE(s.ok()) << s;
    return path;
  }

  std::string dir_;
};

const PfSlice* Find(const PfTrace& t, const std::string& name) {
  for (const PfSlice& s : t.slices)
    if (s.name == name) return &s;
  return nullptr;
}

TEST_F(PftraceTest, RoundTripKeepsTracksNamesTimesArgsAndCounters) {
  absl::StatusOr<PfTrace> t = testing::ReadPftraceFile(Write(ProfileFormat::kPftrace));
  ASSERT_TRUE(t.ok()) << t.status();

  // Tracks: named process and threads, and those only used.
  std::map<std::tuple<int, int64_t>, std::string> thread_names;
  std::map<int, std::string> process_names;
  for (const auto& [uuid, track] : t->tracks) {
    if (track.tid) {
      thread_names[{*track.pid, *track.tid}] = track.name;
      EXPECT_NE(track.parent, 0u) << "thread track without its process";
    } else if (track.pid) {
      process_names[*track.pid] = track.name;
    }
  }
  EXPECT_EQ(process_names, (std::map<int, std::string>{{100, "host"}, {200, ""}}));
  EXPECT_EQ(thread_names[std::make_tuple(100, int64_t{7})], "worker");
  EXPECT_EQ(thread_names[std::make_tuple(100, int64_t{8})], "io");
  EXPECT_TRUE(thread_names.count({200, 5}));

  // Every span, with its time, duration and args.
  ASSERT_EQ(t->slices.size(), static_cast<size_t>(kSpans + 4));
  std::vector<const PfSlice*> worker;
  for (const PfSlice& s : t->slices)
    if (s.pid == 100 && s.tid == 7) worker.push_back(&s);
  ASSERT_EQ(worker.size(), static_cast<size_t>(kSpans));
  for (int i = 0; i < kSpans; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(worker[i]->name, kNames[i % 3]);
    EXPECT_EQ(worker[i]->category, "compute");
    EXPECT_EQ(worker[i]->begin_ns, 1000 + i * 100);
    EXPECT_EQ(worker[i]->duration_ns, 50 + i % 7);
    EXPECT_EQ(worker[i]->args, json::parse(kArgs[i % 3]));
  }
  const PfSlice* outer = Find(*t, "outer");
  const PfSlice* inner = Find(*t, "inner");
  ASSERT_TRUE(outer && inner);
  EXPECT_EQ(outer->begin_ns, 0);
  EXPECT_EQ(outer->duration_ns, 1000000);
  EXPECT_EQ(outer->args, (json{{"model", "m"}, {"core", 1}}));
  EXPECT_EQ(inner->begin_ns, 10);
  EXPECT_EQ(inner->duration_ns, 500);
  EXPECT_EQ(inner->args, (json{{"ok", true}, {"ratio", 0.5}, {"neg", -3}, {"list", {1, 2}},
                               {"obj", {{"k", "v"}}}}));
  const PfSlice* mark = Find(*t, "mark");
  ASSERT_NE(mark, nullptr);
  EXPECT_TRUE(mark->instant);
  EXPECT_EQ(mark->begin_ns, 20);
  EXPECT_EQ(mark->args, (json{{"bytes", 64}}));
  const PfSlice* zero = Find(*t, "zero");
  ASSERT_NE(zero, nullptr);
  EXPECT_EQ(zero->duration_ns, 0);
  EXPECT_EQ(zero->category, "dma");

  // Counters: one series per key.
  std::map<std::string, std::vector<std::pair<int64_t, double>>> series;
  for (const PfCounter& c : t->counters) {
    EXPECT_EQ(c.pid, 100);
    series[c.track].emplace_back(c.at_ns, c.value);
  }
  using Points = std::vector<std::pair<int64_t, double>>;
  EXPECT_EQ(series["memory bytes"], (Points{{30, 4096}, {40, 8192}}));
  EXPECT_EQ(series["memory pct"], (Points{{30, 12.5}, {40, 25.0}}));

  // Each name is interned once, however many spans use it.
  EXPECT_EQ(t->distinct_event_names, 7u);
  EXPECT_EQ(t->event_name_definitions, t->distinct_event_names);
  EXPECT_EQ(t->other_data["profile"], "device");
}

// The JSON's events in the reader's terms: "X" and "i" events as slices
// (times back in nanoseconds), "C" events as one series per key.
struct Events {
  std::vector<std::tuple<int, int64_t, std::string, std::string, int64_t, int64_t, std::string>>
      slices;
  std::vector<std::tuple<int, std::string, int64_t, double>> counters;
  std::map<std::pair<int, int64_t>, std::string> thread_names;
};

int64_t Nanos(const json& micros) { return std::llround(micros.get<double>() * 1000); }

Events FromJson(const json& doc) {
  Events out;
  for (const json& e : doc["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "X" || ph == "i") {
      out.slices.emplace_back(e["pid"].get<int>(), e["tid"].get<int64_t>(),
                              e["name"].get<std::string>(), e["cat"].get<std::string>(),
                              Nanos(e["ts"]), ph == "X" ? Nanos(e["dur"]) : 0,
                              e.contains("args") ? e["args"].dump() : "null");
    } else if (ph == "C") {
      for (const auto& [key, value] : e["args"].items())
        out.counters.emplace_back(e["pid"].get<int>(), e["name"].get<std::string>() + " " + key,
                                  Nanos(e["ts"]), value.get<double>());
    } else if (ph == "M" && e["name"] == "thread_name") {
      out.thread_names[{e["pid"].get<int>(), e["tid"].get<int64_t>()}] =
          e["args"]["name"].get<std::string>();
    }
  }
  std::sort(out.slices.begin(), out.slices.end());
  std::sort(out.counters.begin(), out.counters.end());
  return out;
}

Events FromPftrace(const PfTrace& t) {
  Events out;
  for (const PfSlice& s : t.slices)
    out.slices.emplace_back(s.pid, s.tid, s.name, s.category, s.begin_ns, s.duration_ns,
                            s.args.dump());
  for (const PfCounter& c : t.counters) out.counters.emplace_back(c.pid, c.track, c.at_ns, c.value);
  for (const auto& [uuid, track] : t.tracks)
    if (track.tid && !track.name.empty()) out.thread_names[{*track.pid, *track.tid}] = track.name;
  std::sort(out.slices.begin(), out.slices.end());
  std::sort(out.counters.begin(), out.counters.end());
  return out;
}

TEST_F(PftraceTest, JsonAndPftraceOfTheSameEventsCarryTheSameSpans) {
  const std::string json_path = Write(ProfileFormat::kJson);
  const std::string pf_path = Write(ProfileFormat::kPftrace);
  const json doc = json::parse(ReadAll(json_path));
  absl::StatusOr<PfTrace> pf = testing::ReadPftraceFile(pf_path);
  ASSERT_TRUE(pf.ok()) << pf.status();
  const Events a = FromJson(doc), b = FromPftrace(*pf);
  ASSERT_EQ(a.slices.size(), static_cast<size_t>(kSpans + 4));
  EXPECT_EQ(a.slices, b.slices);
  EXPECT_EQ(a.counters.size(), 4u);
  EXPECT_EQ(a.counters, b.counters);
  EXPECT_EQ(a.thread_names, b.thread_names);
  EXPECT_EQ(doc["otherData"], pf->other_data);
  // Interned names and binary numbers: the same events in a fraction of
  // the bytes.
  struct stat js{}, ps{};
  ASSERT_EQ(stat(json_path.c_str(), &js), 0);
  ASSERT_EQ(stat(pf_path.c_str(), &ps), 0);
  EXPECT_LT(ps.st_size * 2, js.st_size) << "pftrace " << ps.st_size << " B, json " << js.st_size;
}

TEST_F(PftraceTest, WriteFileIsWholeOrNothing) {
  // The destination is a directory: an error naming it, nothing left behind.
  const std::string blocked = dir_ + "/blocked.pftrace";
  ASSERT_EQ(mkdir(blocked.c_str(), 0755), 0);
  Trace t(ProfileFormat::kPftrace);
  Feed(t);
  absl::Status s = t.WriteFile(blocked);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(blocked), std::string::npos) << s;
  // A good write replaces an earlier file and leaves no temporary beside it.
  const std::string path = dir_ + "/t.pftrace";
  ASSERT_TRUE(Trace(ProfileFormat::kPftrace).WriteFile(path).ok());
  ASSERT_TRUE(t.WriteFile(path).ok());
  absl::StatusOr<PfTrace> back = testing::ReadPftraceFile(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->slices.size(), static_cast<size_t>(kSpans + 4));
  std::set<std::string> names;
  if (DIR* d = opendir(dir_.c_str())) {
    while (dirent* e = readdir(d)) names.insert(e->d_name);
    closedir(d);
  }
  EXPECT_EQ(names, (std::set<std::string>{".", "..", "blocked.pftrace", "t.pftrace"}));
}

TEST_F(PftraceTest, ReaderRejectsWhatAViewerWouldMisread) {
  // Guards the reader itself: a stream cut inside a packet, and one that
  // lost its first packets (the sequence start, the descriptors and the
  // interned names), are errors.
  const std::string path = Write(ProfileFormat::kPftrace);
  const std::string bytes = ReadAll(path);
  EXPECT_FALSE(testing::ParsePftrace(bytes.substr(0, bytes.size() / 2)).ok());
  absl::StatusOr<PfTrace> whole = testing::ParsePftrace(bytes);
  ASSERT_TRUE(whole.ok()) << whole.status();
  std::string tail;
  size_t pos = 0, packets = 0;
  while (pos < bytes.size()) {
    // Each packet: tag 0x0A, varint length, bytes.
    size_t p = pos + 1, len = 0;
    for (int shift = 0;; shift += 7) {
      const unsigned char b = static_cast<unsigned char>(bytes[p++]);
      len |= static_cast<size_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    if (++packets > 8) tail += bytes.substr(pos, p + len - pos);
    pos = p + len;
  }
  EXPECT_EQ(packets, whole->packets);
  EXPECT_FALSE(testing::ParsePftrace(tail).ok());
}

}  // namespace
}  // namespace neuron::profile
