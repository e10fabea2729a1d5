#include "lib/dump/core_dump.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "lib/support/atomic_file.h"
#include "lib/dump/core_dump_format.h"
#include "lib/dump/files.h"

namespace neuron::dump {

std::string CoreDumpFileName(const DumpIdentity& id, int device, int core) {
  return absl::StrFormat("%s-nd%d-nc%d-pid-%d-tid-%d-lid-%d.zst", id.instance_id, device, core,
                         id.pid, id.tid, id.log_id);
}

absl::StatusOr<std::vector<std::string>> WriteCoreDump(const std::string& dir,
                                                       const FailedExecution& f,
                                                       const DumpIdentity& id,
                                                       const CoreDumpOptions& options) {
  if (absl::Status s = MakeDirs(dir); !s.ok()) return s;
  std::vector<Section> sections;
  Section info;
  info.kind = SectionKind::kInfo;
  nlohmann::json& m = info.meta;
  m["format"] = kCoreDumpFormat;
  m["model"] = f.model;
  m["neff"] = {{"name", f.neff_name}, {"uuid", f.neff_uuid}, {"path", f.neff_path},
               {"build_version", f.neff_build_version}};
  m["error"] = {{"code", static_cast<int>(f.status)},
                {"name", nrt_get_status_name(f.status)},
                {"message", f.error},
                {"location", f.error_location}};
  m["device"] = f.device;
  m["core"] = f.core;
  m["instance_id"] = id.instance_id;
  m["cluster_id"] = id.cluster_id;
  m["pid"] = id.pid;
  m["tid"] = id.tid;
  m["log_id"] = id.log_id;
  m["time"] = absl::FormatTime(absl::RFC3339_full, id.time, absl::UTCTimeZone());
  m["execution"] = f.execution_index;
  m["program"] = {{"stack", f.program_stack},
                  {"instruction", f.program_stack.empty() ? "" : f.program_stack.back()},
                  {"steps_started", f.steps_started},
                  {"completed", f.program_completed}};
  if (!f.first_nonfinite_instruction.empty())
    m["program"]["first_nonfinite_instruction"] = f.first_nonfinite_instruction;
  m["settings"] = nlohmann::json::object();
  for (const auto& [k, v] : options.settings) m["settings"][k] = v;
  sections.push_back(std::move(info));

  uint64_t budget = options.max_buffer_bytes;
  for (const DumpTensor& t : f.tensors) {
    Section b;
    b.kind = SectionKind::kBuffer;
    const uint64_t stored = t.data ? std::min(t.bytes, budget) : 0;
    budget -= stored;
    b.meta = {{"role", t.role},   {"name", t.name},   {"position", t.position},
              {"dtype", t.dtype}, {"shape", t.dims},  {"bytes", t.bytes},
              {"stored", stored}};
    if (stored) b.data.assign(reinterpret_cast<const char*>(t.data), stored);
    sections.push_back(std::move(b));
  }
  Section log;
  log.kind = SectionKind::kMemlog;
  log.meta = {{"bytes", options.memlog.size()}};
  log.data = options.memlog;
  sections.push_back(std::move(log));

  absl::StatusOr<std::string> bytes = EncodeCoreDump(sections);
  if (!bytes.ok()) return bytes.status();
  std::vector<std::string> written;
  const std::string path = dir + "/" + CoreDumpFileName(id, f.device, f.core);
  if (absl::Status s = WriteFileAtomically(path, *bytes); !s.ok()) return s;
  written.push_back(path);
  const std::string log_path = absl::StrFormat("%s/%s-nrt-pid-%d.log", dir, id.instance_id, id.pid);
  if (absl::Status s = WriteFileAtomically(log_path, options.memlog); !s.ok()) return s;
  written.push_back(log_path);
  return written;
}

}  // namespace neuron::dump
