#include "lib/dump/input_dump.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "lib/support/atomic_file.h"
#include "lib/dump/files.h"
#include "nlohmann/json.hpp"

namespace neuron::dump {

bool WantsInputDump(int64_t setting, NRT_STATUS status, bool failed) {
  if (setting == 0) return false;
  if (setting == -1) return failed;
  return static_cast<int64_t>(status) == setting;
}

std::string ShellQuote(const std::string& word) {
  bool plain = !word.empty();
  for (char ch : word) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || std::string_view("-_./=:,+@%").find(ch) !=
                                                    std::string_view::npos;
    if (!ok) plain = false;
  }
  if (plain) return word;
  std::string out = "'";
  for (char ch : word) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

absl::StatusOr<std::string> WriteInputDump(const std::string& base_dir,
                                           const FailedExecution& failure,
                                           const DumpIdentity& id) {
  const std::string dir =
      absl::StrFormat("%s/%s-%s-pid%d-lid%d", base_dir, SafeComponent(failure.model),
                      PathDateTime(id.time), id.pid, id.log_id);
  if (absl::Status s = MakeDirs(dir); !s.ok()) return s;
  nlohmann::json m;
  m["format"] = kInputDumpFormat;
  m["version"] = 1;
  m["model"] = failure.model;
  m["neff"] = {{"name", failure.neff_name}, {"uuid", failure.neff_uuid},
               {"path", failure.neff_path}, {"build_version", failure.neff_build_version}};
  m["status"] = {{"code", static_cast<int>(failure.status)},
                 {"name", nrt_get_status_name(failure.status)}};
  m["error"] = failure.error;
  m["error_location"] = failure.error_location;
  m["device"] = failure.device;
  m["core"] = failure.core;
  m["time"] = absl::FormatTime(absl::RFC3339_sec, id.time, absl::UTCTimeZone());
  m["pid"] = id.pid;
  m["execution"] = failure.execution_index;
  m["inputs"] = nlohmann::json::array();
  std::string replay;
  for (const std::string& var : failure.replay_env) absl::StrAppend(&replay, ShellQuote(var), " ");
  absl::StrAppend(&replay, "neuron-exec ",
                  ShellQuote(failure.neff_path.empty() ? "MODEL.neff" : failure.neff_path));
  for (const DumpTensor& t : failure.tensors) {
    if (t.role != "input") continue;
    const std::string file =
        absl::StrFormat("input%d-%s.npy", t.position, SafeComponent(t.name).substr(0, 60));
    if (absl::Status s = WriteFileAtomically(dir + "/" + file, t.npy); !s.ok()) return s;
    m["inputs"].push_back({{"position", t.position}, {"name", t.name}, {"file", file},
                           {"dtype", t.dtype}, {"shape", t.dims}, {"bytes", t.bytes}});
    absl::StrAppend(&replay, " --input ", ShellQuote(absl::StrCat("#", t.position, "=", dir, "/", file)));
  }
  m["replay_env"] = failure.replay_env;
  m["replay"] = replay;
  if (absl::Status s = WriteFileAtomically(dir + "/manifest.json", m.dump(2) + "\n"); !s.ok()) return s;
  return dir;
}

}  // namespace neuron::dump
