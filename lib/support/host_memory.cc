#include "lib/support/host_memory.h"

#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/support/parse.h"

namespace neuron {
namespace {

// The files read here are a few KiB; the cap only bounds a bad path.
constexpr size_t kMaxFileBytes = size_t{1} << 20;

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text;
  char chunk[4096];
  while (text.size() < kMaxFileBytes && in.read(chunk, sizeof chunk).gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
  }
  return text;
}

std::optional<uint64_t> ParseNumber(std::string_view text) {
  auto value = ParseUnsigned(text);
  if (!value.ok()) return std::nullopt;
  return *value;
}

// A file holding one number, as cgroup files do ("max" and the like fail).
std::optional<uint64_t> ReadNumberFile(const std::string& path) {
  std::optional<std::string> text = ReadSmallFile(path);
  if (!text) return std::nullopt;
  absl::string_view trimmed = absl::StripAsciiWhitespace(*text);
  return ParseNumber(std::string_view(trimmed.data(), trimmed.size()));
}

// The value of a "key value [kB]" line, as in memory.stat ("inactive_file
// 4096"), meminfo and status ("VmSize:\t 1024 kB"); key must match a whole
// first field, so "inactive_file" does not find "total_inactive_file".
std::optional<uint64_t> KeyedValue(std::string_view text, std::string_view key) {
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (fields.size() < 2 || fields[0] != absl::string_view(key.data(), key.size())) continue;
    std::optional<uint64_t> value =
        ParseNumber(std::string_view(fields[1].data(), fields[1].size()));
    if (!value || fields.size() == 2) return value;
    if (fields.size() != 3 || fields[2] != "kB" || *value > UINT64_MAX / 1024) return std::nullopt;
    return *value * 1024;
  }
  return std::nullopt;
}

void AddMemAvailable(const HostMemoryPaths& paths, HostMemoryReport* report) {
  std::optional<std::string> meminfo = ReadSmallFile(paths.proc + "/meminfo");
  if (!meminfo) return;
  std::optional<uint64_t> available = KeyedValue(*meminfo, "MemAvailable:");
  if (!available) return;
  report->limits.push_back({*available, "MemAvailable",
                            KeyedValue(*meminfo, "MemTotal:").value_or(0)});
}

// The files one cgroup version keeps its memory limit in.
struct CgroupFiles {
  const char* version;      // "cgroup v2"
  const char* limit;        // memory.max
  const char* usage;        // memory.current
  const char* reclaimable;  // memory.stat key of page cache dropped before an OOM kill
  uint64_t unlimited_from;  // limits at or above this mean none
};

// cgroup v2's memory.high only throttles; the OOM killer acts at memory.max.
constexpr CgroupFiles kCgroupV2 = {"cgroup v2", "memory.max", "memory.current",
                                   "inactive_file", UINT64_MAX};
// v1 writes "no limit" as PAGE_COUNTER_MAX pages, just under 2^63; its
// memory.stat has the hierarchical counters under total_.
constexpr CgroupFiles kCgroupV1 = {"cgroup v1", "memory.limit_in_bytes",
                                   "memory.usage_in_bytes", "total_inactive_file",
                                   uint64_t{1} << 62};

// What one cgroup directory's limit leaves, if it has one.
std::optional<HostMemoryLimit> CgroupLevel(const std::string& dir, const CgroupFiles& files) {
  std::optional<uint64_t> limit = ReadNumberFile(dir + "/" + files.limit);
  if (!limit || *limit >= files.unlimited_from) return std::nullopt;
  std::optional<uint64_t> usage = ReadNumberFile(dir + "/" + files.usage);
  if (!usage) return std::nullopt;
  uint64_t reclaimable = 0;
  if (std::optional<std::string> stat = ReadSmallFile(dir + "/memory.stat")) {
    reclaimable = KeyedValue(*stat, files.reclaimable).value_or(0);
  }
  const uint64_t in_use = *usage - std::min(*usage, reclaimable);
  return HostMemoryLimit{*limit - std::min(*limit, in_use),
                         absl::StrCat(files.version, " ", files.limit, " (", dir, ")"), *limit};
}

// The tightest limit from the process's cgroup (path as in /proc/self/cgroup)
// up to the hierarchy's root. A path not under root, as in a container whose
// own cgroup is mounted as the root, or one leaving it ("/.." from outside a
// cgroup namespace), is read as root itself.
void AddCgroup(const std::string& root, std::string_view path, const CgroupFiles& files,
               HostMemoryReport* report) {
  std::vector<std::string> parts;
  for (absl::string_view part : absl::StrSplit(absl::string_view(path.data(), path.size()), '/',
                                               absl::SkipEmpty())) {
    if (part == "..") {
      parts.clear();
      break;
    }
    if (part != ".") parts.emplace_back(part);
  }
  std::string leaf = root;
  for (const std::string& part : parts) leaf += "/" + part;
  std::error_code ec;
  if (!std::filesystem::is_directory(leaf, ec)) parts.clear();

  std::optional<HostMemoryLimit> tightest;
  for (size_t depth = parts.size() + 1; depth-- > 0;) {
    std::string dir = root;
    for (size_t i = 0; i < depth; ++i) dir += "/" + parts[i];
    std::optional<HostMemoryLimit> level = CgroupLevel(dir, files);
    if (level && (!tightest || level->bytes < tightest->bytes)) tightest = std::move(level);
  }
  if (tightest) report->limits.push_back(std::move(*tightest));
}

// /proc/self/cgroup lines are "id:controllers:path": "0::/path" for v2, and
// for v1 a comma-separated controller list, "memory" among them.
void AddCgroups(const HostMemoryPaths& paths, HostMemoryReport* report) {
  std::optional<std::string> text = ReadSmallFile(paths.proc + "/self/cgroup");
  if (!text) return;
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (fields.size() != 3) continue;
    const std::string_view path(fields[2].data(), fields[2].size());
    if (fields[0] == "0" && fields[1].empty()) {
      AddCgroup(paths.cgroup, path, kCgroupV2, report);
      continue;
    }
    for (absl::string_view controller : absl::StrSplit(fields[1], ',')) {
      if (controller == "memory") AddCgroup(paths.cgroup + "/memory", path, kCgroupV1, report);
    }
  }
}

// RLIMIT_AS counts address space, so what is left is the limit less VmSize.
void AddAddressSpaceLimit(const HostMemoryPaths& paths, HostMemoryReport* report) {
  uint64_t limit = UINT64_MAX;
  if (paths.rlimit_as) {
    limit = *paths.rlimit_as;
  } else if (struct rlimit rl; getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    limit = rl.rlim_cur;
  }
  if (limit == UINT64_MAX) return;
  std::optional<std::string> status = ReadSmallFile(paths.proc + "/self/status");
  if (!status) return;
  std::optional<uint64_t> vm_size = KeyedValue(*status, "VmSize:");
  if (!vm_size) return;
  report->limits.push_back({limit - std::min(limit, *vm_size), "RLIMIT_AS", limit});
}

}  // namespace

const HostMemoryLimit* HostMemoryReport::Binding() const {
  const HostMemoryLimit* binding = nullptr;
  for (const HostMemoryLimit& l : limits) {
    if (binding == nullptr || l.bytes < binding->bytes) binding = &l;
  }
  return binding;
}

uint64_t HostMemoryReport::Available() const {
  const HostMemoryLimit* binding = Binding();
  return binding == nullptr ? UINT64_MAX : binding->bytes;
}

HostMemoryReport ReadHostMemoryAt(const HostMemoryPaths& paths) {
  HostMemoryReport report;
  AddMemAvailable(paths, &report);
  AddCgroups(paths, &report);
  AddAddressSpaceLimit(paths, &report);
  return report;
}

HostMemoryReport ReadHostMemory() { return ReadHostMemoryAt(HostMemoryPaths{}); }

std::string DescribeShortfall(uint64_t need, const HostMemoryReport& report) {
  const HostMemoryLimit* binding = report.Binding();
  if (binding == nullptr) {
    return absl::StrCat("needs ", FormatBytes(need), ", and no host memory limit could be read");
  }
  return absl::StrCat("needs ", FormatBytes(need), ", and ", DescribeLimit(*binding));
}

std::string DescribeLimit(const HostMemoryLimit& limit) {
  std::string out = absl::StrCat(limit.what, " leaves ", FormatBytes(limit.bytes));
  if (limit.limit != 0) absl::StrAppend(&out, " of ", FormatBytes(limit.limit));
  return out;
}

uint64_t HostMemoryAvailable() {
  const HostMemoryReport report = ReadHostMemory();
  if (report.limits.empty()) return 0;
  return std::max<uint64_t>(report.Available(), 1);
}

}  // namespace neuron
