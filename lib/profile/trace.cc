#include "lib/profile/trace.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/support/atomic_file.h"

namespace neuron::profile {
namespace {

double Micros(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

}  // namespace

std::string JsonString(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void Trace::Add(const std::string& event) {
  if (count_++ > 0) events_ += ",\n";
  events_ += event;
}

void Trace::NameProcess(int pid, std::string_view name, int sort_index) {
  Add(absl::StrFormat(R"({"ph":"M","pid":%d,"name":"process_name","args":{"name":%s}})", pid,
                      JsonString(name)));
  Add(absl::StrFormat(R"({"ph":"M","pid":%d,"name":"process_sort_index","args":{"sort_index":%d}})",
                      pid, sort_index));
}

void Trace::NameThread(int pid, int tid, std::string_view name, int sort_index) {
  Add(absl::StrFormat(R"({"ph":"M","pid":%d,"tid":%d,"name":"thread_name","args":{"name":%s}})",
                      pid, tid, JsonString(name)));
  Add(absl::StrFormat(
      R"({"ph":"M","pid":%d,"tid":%d,"name":"thread_sort_index","args":{"sort_index":%d}})", pid,
      tid, sort_index));
}

void Trace::SpanWithArgsText(int pid, int tid, std::string_view name, std::string_view category,
                             int64_t begin_ns, int64_t duration_ns, std::string_view args_json) {
  std::string e = absl::StrFormat(R"({"ph":"X","pid":%d,"tid":%d,"name":%s,"cat":%s,"ts":%.3f,"dur":%.3f)",
                                  pid, tid, JsonString(name), JsonString(category),
                                  Micros(begin_ns), Micros(duration_ns < 0 ? 0 : duration_ns));
  if (!args_json.empty()) absl::StrAppend(&e, R"(,"args":)", std::string(args_json));
  e += "}";
  Add(e);
}

void Trace::Span(int pid, int tid, std::string_view name, std::string_view category,
                 int64_t begin_ns, int64_t duration_ns, const nlohmann::json& args) {
  SpanWithArgsText(pid, tid, name, category, begin_ns, duration_ns,
                   args.is_null() ? "" : args.dump(-1, ' ', false,
                                                   nlohmann::json::error_handler_t::replace));
}

void Trace::Instant(int pid, int tid, std::string_view name, std::string_view category,
                    int64_t at_ns, const nlohmann::json& args) {
  std::string e = absl::StrFormat(R"({"ph":"i","s":"t","pid":%d,"tid":%d,"name":%s,"cat":%s,"ts":%.3f)",
                                  pid, tid, JsonString(name), JsonString(category), Micros(at_ns));
  if (!args.is_null())
    absl::StrAppend(&e, R"(,"args":)",
                    args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  e += "}";
  Add(e);
}

void Trace::Counter(int pid, std::string_view name, int64_t at_ns, const nlohmann::json& values) {
  Add(absl::StrFormat(R"({"ph":"C","pid":%d,"name":%s,"ts":%.3f,"args":%s})", pid,
                      JsonString(name), Micros(at_ns),
                      values.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
}

absl::Status MakeDirectories(const std::string& dir) {
  if (dir.empty()) return absl::OkStatus();
  std::string path;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    path = dir.substr(0, pos);
    if (path.empty()) continue;
    if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::InternalError(
          absl::StrCat("cannot create directory '", path, "': ", std::strerror(errno)));
    }
  }
  struct stat st{};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return absl::InternalError(absl::StrCat("'", dir, "' is not a directory"));
  return absl::OkStatus();
}

absl::Status Trace::WriteFile(const std::string& path) const {
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    if (absl::Status s = MakeDirectories(path.substr(0, slash)); !s.ok()) return s;
  }
  const std::string text = absl::StrCat(
      "{\"traceEvents\":[\n", events_, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":",
      other_.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "}\n");
  // Whole or not at all, and a directory in the way is named as one.
  return WriteFileAtomically(path, text);
}

}  // namespace neuron::profile
