#include "lib/profile/trace.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "lib/profile/json_trace_encoder.h"
#include "lib/profile/pftrace_encoder.h"
#include "lib/support/atomic_file.h"

namespace neuron::profile {

Trace::Trace(config::ProfileFormat format) : format_(format) {
  if (format == config::ProfileFormat::kPftrace) {
    encoder_ = std::make_unique<PftraceEncoder>();
  } else {
    encoder_ = std::make_unique<JsonTraceEncoder>();
  }
}

void Trace::NameProcess(int pid, std::string_view name, int sort_index) {
  encoder_->NameProcess(pid, name, sort_index);
}

void Trace::NameThread(int pid, int tid, std::string_view name, int sort_index) {
  encoder_->NameThread(pid, tid, name, sort_index);
}

void Trace::Span(int pid, int tid, std::string_view name, std::string_view category,
                 int64_t begin_ns, int64_t duration_ns, const nlohmann::json& args) {
  encoder_->Span(pid, tid, name, category, begin_ns, duration_ns, args);
}

void Trace::SpanWithArgsText(int pid, int tid, std::string_view name, std::string_view category,
                             int64_t begin_ns, int64_t duration_ns, std::string_view args_json) {
  encoder_->SpanWithArgsText(pid, tid, name, category, begin_ns, duration_ns, args_json);
}

void Trace::Instant(int pid, int tid, std::string_view name, std::string_view category,
                    int64_t at_ns, const nlohmann::json& args) {
  encoder_->Instant(pid, tid, name, category, at_ns, args);
}

void Trace::Counter(int pid, std::string_view name, int64_t at_ns, const nlohmann::json& values) {
  encoder_->Counter(pid, name, at_ns, values);
}

const char* ProfileFileExtension(config::ProfileFormat format) {
  return format == config::ProfileFormat::kPftrace ? ".pftrace" : ".json";
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
  absl::StatusOr<AtomicFile> file = AtomicFile::Create(path);
  if (!file.ok()) return file.status();
  if (absl::Status s = encoder_->WriteTo(*file, other_); !s.ok()) return s;
  return file->Commit();
}

}  // namespace neuron::profile
