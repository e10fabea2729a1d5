#include "lib/profile/trace.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace neuron::profile {
namespace {

double Micros(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

}  // namespace

Trace::Trace() {
  doc_["traceEvents"] = nlohmann::json::array();
  doc_["displayTimeUnit"] = "ns";
  doc_["otherData"] = nlohmann::json::object();
}

void Trace::NameProcess(int pid, std::string_view name, int sort_index) {
  auto& ev = doc_["traceEvents"];
  ev.push_back({{"ph", "M"}, {"pid", pid}, {"name", "process_name"},
                {"args", {{"name", name}}}});
  ev.push_back({{"ph", "M"}, {"pid", pid}, {"name", "process_sort_index"},
                {"args", {{"sort_index", sort_index}}}});
}

void Trace::NameThread(int pid, int tid, std::string_view name, int sort_index) {
  auto& ev = doc_["traceEvents"];
  ev.push_back({{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_name"},
                {"args", {{"name", name}}}});
  ev.push_back({{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_sort_index"},
                {"args", {{"sort_index", sort_index}}}});
}

void Trace::Span(int pid, int tid, std::string_view name, std::string_view category,
                 int64_t begin_ns, int64_t duration_ns, nlohmann::json args) {
  nlohmann::json e = {{"ph", "X"},        {"pid", pid},
                      {"tid", tid},        {"name", name},
                      {"cat", category},   {"ts", Micros(begin_ns)},
                      {"dur", Micros(duration_ns < 0 ? 0 : duration_ns)}};
  if (!args.is_null()) e["args"] = std::move(args);
  doc_["traceEvents"].push_back(std::move(e));
}

void Trace::Instant(int pid, int tid, std::string_view name, std::string_view category,
                    int64_t at_ns, nlohmann::json args) {
  nlohmann::json e = {{"ph", "i"}, {"s", "t"},         {"pid", pid},          {"tid", tid},
                      {"name", name}, {"cat", category}, {"ts", Micros(at_ns)}};
  if (!args.is_null()) e["args"] = std::move(args);
  doc_["traceEvents"].push_back(std::move(e));
}

void Trace::Counter(int pid, std::string_view name, int64_t at_ns, nlohmann::json values) {
  doc_["traceEvents"].push_back({{"ph", "C"}, {"pid", pid}, {"name", name},
                                 {"ts", Micros(at_ns)}, {"args", std::move(values)}});
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
  const std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr)
    return absl::InternalError(absl::StrCat("cannot write '", tmp, "': ", std::strerror(errno)));
  const std::string text = doc_.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    return absl::InternalError(absl::StrCat("cannot write '", tmp, "'"));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::InternalError(
        absl::StrCat("cannot rename to '", path, "': ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace neuron::profile
