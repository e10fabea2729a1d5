#include "lib/profile/json_trace_encoder.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace neuron::profile {
namespace {

double Micros(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

std::string Dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string JsonString(std::string_view text) { return Dump(nlohmann::json(std::string(text))); }

void JsonTraceEncoder::Add(const std::string& event) {
  if (!empty_) events_ += ",\n";
  empty_ = false;
  events_ += event;
}

void JsonTraceEncoder::NameProcess(int pid, std::string_view name, int sort_index) {
  Add(absl::StrFormat(R"({"ph":"M","pid":%d,"name":"process_name","args":{"name":%s}})", pid,
                      JsonString(name)));
  Add(absl::StrFormat(R"({"ph":"M","pid":%d,"name":"process_sort_index","args":{"sort_index":%d}})",
                      pid, sort_index));
}

void JsonTraceEncoder::NameThread(int pid, int tid, std::string_view name, int sort_index) {
  Add(absl::StrFormat(R"({"ph":"M","pid":%d,"tid":%d,"name":"thread_name","args":{"name":%s}})",
                      pid, tid, JsonString(name)));
  Add(absl::StrFormat(
      R"({"ph":"M","pid":%d,"tid":%d,"name":"thread_sort_index","args":{"sort_index":%d}})", pid,
      tid, sort_index));
}

void JsonTraceEncoder::SpanWithArgsText(int pid, int tid, std::string_view name,
                                        std::string_view category, int64_t begin_ns,
                                        int64_t duration_ns, std::string_view args_json) {
  std::string e = absl::StrFormat(R"({"ph":"X","pid":%d,"tid":%d,"name":%s,"cat":%s,"ts":%.3f,"dur":%.3f)",
                                  pid, tid, JsonString(name), JsonString(category),
                                  Micros(begin_ns), Micros(duration_ns < 0 ? 0 : duration_ns));
  if (!args_json.empty()) absl::StrAppend(&e, R"(,"args":)", std::string(args_json));
  e += "}";
  Add(e);
}

void JsonTraceEncoder::Span(int pid, int tid, std::string_view name, std::string_view category,
                            int64_t begin_ns, int64_t duration_ns, const nlohmann::json& args) {
  SpanWithArgsText(pid, tid, name, category, begin_ns, duration_ns,
                   args.is_null() ? "" : Dump(args));
}

void JsonTraceEncoder::Instant(int pid, int tid, std::string_view name, std::string_view category,
                               int64_t at_ns, const nlohmann::json& args) {
  std::string e = absl::StrFormat(R"({"ph":"i","s":"t","pid":%d,"tid":%d,"name":%s,"cat":%s,"ts":%.3f)",
                                  pid, tid, JsonString(name), JsonString(category), Micros(at_ns));
  if (!args.is_null()) absl::StrAppend(&e, R"(,"args":)", Dump(args));
  e += "}";
  Add(e);
}

void JsonTraceEncoder::Counter(int pid, std::string_view name, int64_t at_ns,
                               const nlohmann::json& values) {
  Add(absl::StrFormat(R"({"ph":"C","pid":%d,"name":%s,"ts":%.3f,"args":%s})", pid,
                      JsonString(name), Micros(at_ns), Dump(values)));
}

absl::Status JsonTraceEncoder::WriteTo(AtomicFile& file, const nlohmann::json& other_data) const {
  if (absl::Status s = file.Append("{\"traceEvents\":[\n"); !s.ok()) return s;
  if (absl::Status s = file.Append(events_); !s.ok()) return s;
  return file.Append(absl::StrCat("\n],\"displayTimeUnit\":\"ns\",\"otherData\":", Dump(other_data),
                                  "}\n"));
}

}  // namespace neuron::profile
