#include "lib/device/device_tree_reader.h"

#include <dirent.h>

#include <algorithm>
#include <filesystem>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "lib/device/device_tree.h"
#include "lib/device/tree_files.h"
#include "lib/support/parse.h"

namespace neuron::device {
namespace {

std::string Optional(const std::string& path) {
  absl::StatusOr<std::string> v = ReadTrimmed(path);
  return v.ok() ? *v : std::string();
}

// "12, 3, 4, 1" (also tolerates no spaces and an empty list).
absl::StatusOr<std::vector<int>> ParseDeviceList(const std::string& text,
                                                 const std::string& path) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(pos, end - pos);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    pos = end + 1;
    if (item.empty()) continue;
    absl::StatusOr<uint64_t> v = ParseUnsigned(item, 1 << 20);
    if (!v.ok()) {
      return absl::DataLossError(
          absl::StrFormat("'%s': '%s' is not a device number", path, item.substr(0, 20)));
    }
    out.push_back(static_cast<int>(*v));
  }
  return out;
}

}  // namespace

bool DeviceRecord::Readable(const std::string& file) const {
  return std::find(unreadable.begin(), unreadable.end(), file) == unreadable.end();
}

absl::StatusOr<std::vector<DeviceRecord>> ReadDevices(const std::string& root) {
  DIR* dir = opendir(root.c_str());
  if (dir == nullptr) {
    return absl::NotFoundError(
        absl::StrFormat("no Neuron devices: cannot read '%s': %s", root, std::strerror(errno)));
  }
  std::vector<int> indices;
  while (dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    if (name.rfind("neuron", 0) != 0 || name.size() == 6) continue;
    absl::StatusOr<uint64_t> n = ParseUnsigned(name.substr(6), 1 << 20);
    if (n.ok()) indices.push_back(static_cast<int>(*n));
  }
  closedir(dir);
  std::sort(indices.begin(), indices.end());
  if (indices.empty()) {
    return absl::NotFoundError(absl::StrFormat("no Neuron devices under '%s'", root));
  }
  std::vector<DeviceRecord> out;
  for (int d : indices) {
    DeviceRecord r;
    r.index = d;
    const std::string dev = DeviceDir(root, d);
    absl::StatusOr<uint64_t> cores = ReadCounter(dev + "/core_count");
    if (absl::IsPermissionDenied(cores.status())) {
      r.unreadable.push_back("core_count");
    } else if (!cores.ok()) {
      return cores.status();
    } else if (*cores == 0 || *cores > 64) {
      return absl::DataLossError(
          absl::StrFormat("'%s/core_count': %d is not a core count", dev, *cores));
    } else {
      r.core_count = static_cast<int>(*cores);
    }
    absl::StatusOr<std::string> links = ReadTrimmed(dev + "/connected_devices");
    if (absl::IsPermissionDenied(links.status())) r.unreadable.push_back("connected_devices");
    if (links.ok()) {
      absl::StatusOr<std::vector<int>> list =
          ParseDeviceList(*links, dev + "/connected_devices");
      if (!list.ok()) return list.status();
      r.connected = *std::move(list);
    }
    r.arch_type = Optional(dev + "/info/architecture/arch_type");
    r.device_name = Optional(dev + "/info/architecture/device_name");
    r.instance_family = Optional(dev + "/info/architecture/instance_type");
    const std::string sim = SimDir(root, d);
    r.instance_type = Optional(sim + "/instance_type");
    r.instance_id = Optional(sim + "/instance_id");
    r.pci_bdf = Optional(sim + "/pci_bdf");
    r.cpu_affinity = Optional(sim + "/cpu_affinity");
    if (std::string numa = Optional(sim + "/numa_node"); !numa.empty()) {
      absl::StatusOr<int64_t> v = ParseSigned(numa);
      if (v.ok() && *v >= -1 && *v < 1024) {
        r.numa_node = static_cast<int>(*v);
        r.has_numa_node = true;
      }
    }
    if (std::string mem = Optional(sim + "/memory_size"); !mem.empty()) {
      absl::StatusOr<uint64_t> v = ParseUnsigned(mem);
      if (v.ok()) r.memory_size = *v;
    }
    out.push_back(std::move(r));
  }
  return out;
}

absl::StatusOr<CoreCounters> ReadCoreCounters(const std::string& root, int device,
                                              int physical_core) {
  const std::string core = CoreDir(root, device, physical_core);
  std::error_code ec;
  if (!std::filesystem::is_directory(core, ec)) {
    return absl::NotFoundError(absl::StrFormat("no core directory '%s'", core));
  }
  CoreCounters out;
  auto counter = [](const std::string& path) -> absl::StatusOr<uint64_t> {
    absl::StatusOr<uint64_t> v = ReadCounter(path);
    if (absl::IsNotFound(v.status())) return 0;
    return v;
  };
  for (const std::string& s : StatusCounterNames()) {
    const std::string dir = core + "/stats/status/" + s;
    absl::StatusOr<uint64_t> total = counter(dir + "/total");
    if (!total.ok()) return total.status();
    absl::StatusOr<uint64_t> present = counter(dir + "/present");
    if (!present.ok()) return present.status();
    out.status[s] = {*total, *present};
  }
  for (MemoryCategory c : AllMemoryCategories()) {
    const std::string dir =
        core + "/stats/memory_usage/device_mem/" + MemoryCategoryName(c);
    MemoryUsage& u = out.memory[static_cast<int>(c)];
    for (auto [name, field] : {std::pair{"/total", &u.total}, std::pair{"/present", &u.present},
                               std::pair{"/peak", &u.peak}}) {
      absl::StatusOr<uint64_t> v = counter(dir + name);
      if (!v.ok()) return v.status();
      *field = *v;
    }
  }
  for (const std::string& o : OtherInfoNames()) {
    absl::StatusOr<uint64_t> v = counter(core + "/stats/other_info/" + o);
    if (!v.ok()) return v.status();
    out.other_info[o] = *v;
  }
  return out;
}

}  // namespace neuron::device
