#include "tools/neuron-ls/real_instance.h"

#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/device/topology.h"
#include "lib/device/tree_files.h"
#include "tools/neuron-ls/pci_placement.h"

namespace neuron::ls {
namespace {

using device::DeviceRecord;

// The first failure of a kind, and on how many devices it happened, so a
// 16-device instance without /dev nodes says so in one line, not sixteen.
class FailureTally {
 public:
  void Add(const absl::Status& status) {
    if (count_++ == 0) first_ = std::string(status.message());
  }
  void Report(const char* consequence, std::vector<std::string>* notes) const {
    if (count_ == 0) return;
    std::string line = first_;
    if (count_ > 1) line += absl::StrFormat(" (and %d more devices)", count_ - 1);
    notes->push_back(line + ": " + consequence);
  }

 private:
  int count_ = 0;
  std::string first_;
};

void Drop(std::vector<std::string>* list, const std::string& item) {
  list->erase(std::remove(list->begin(), list->end(), item), list->end());
}

// A catalog instance with this device's chip ("Trn1" -> a trn1 instance):
// cores and memory per device are the chip's, whatever the instance size.
const device::InstanceType* ChipEntry(const std::string& instance_family) {
  const std::string arch = absl::AsciiStrToLower(instance_family);
  for (const device::InstanceType& t : device::AllInstanceTypes()) {
    if (!arch.empty() && t.arch == arch) return &t;
  }
  return nullptr;
}

// What the catalog knows for what the driver did not tell: cores and memory
// from the chip, links only from the exact instance type and only where
// every device is seen (a container's renumbered subset would get another
// device's neighbours).
void FillFromCatalog(const device::InstanceType* instance, int device_count, DeviceRecord* r) {
  const device::InstanceType* chip = instance != nullptr ? instance : ChipEntry(r->instance_family);
  if (chip == nullptr) return;
  if (!r->Readable("core_count")) {
    r->core_count = chip->physical_cores_per_device;
    Drop(&r->unreadable, "core_count");
  }
  if (!r->Readable("connected_devices") && instance != nullptr &&
      device_count == instance->devices) {
    r->connected = device::ConnectedDevices(*instance, r->index);
    Drop(&r->unreadable, "connected_devices");
  }
  if (r->memory_size == 0) r->memory_size = chip->hbm_bytes_per_device;
}

// The one line for what needs root: which files, and what the table shows
// in their place.
std::string RootNote(const std::vector<std::string>& files, bool filled, bool still_unknown,
                     bool runtimes_hidden) {
  std::vector<std::string> parts;
  if (!files.empty()) {
    std::string what = absl::StrFormat("the driver's %s %s readable by root only (mode 0400): ",
                                       absl::StrJoin(files, " and "),
                                       files.size() > 1 ? "are" : "is");
    if (filled && still_unknown) {
      what += "the instance catalog's values shown, NA where it cannot tell";
    } else if (filled) {
      what += "the instance catalog's values shown";
    } else {
      what += "shown as NA";
    }
    parts.push_back(what);
  }
  if (runtimes_hidden) {
    parts.push_back("other users' processes are readable by root only: their runtime unknown");
  }
  return absl::StrJoin(parts, "; ") + "; run neuron-ls as root for the driver's own values";
}

}  // namespace

std::string RuntimeVersionOf(const std::string& proc, int pid) {
  absl::StatusOr<std::string> maps =
      device::ReadSmallFile(absl::StrFormat("%s/%d/maps", proc, pid));
  if (!maps.ok()) return "";
  constexpr std::string_view kLibrary = "/libnrt.so";
  const size_t at = maps->find(kLibrary);
  if (at == std::string::npos) return "NA";
  size_t end = maps->find('\n', at);
  if (end == std::string::npos) end = maps->size();
  std::string suffix = maps->substr(at + kLibrary.size(), end - at - kLibrary.size());
  suffix = suffix.substr(0, suffix.find(' '));  // " (deleted)" after an upgrade
  // ".1" is the soname; ".2.21.1" names a release.
  if (suffix.size() > 1 && suffix[0] == '.' && std::count(suffix.begin(), suffix.end(), '.') >= 2) {
    return suffix.substr(1);
  }
  return "unknown";
}

absl::StatusOr<RealInstance> ReadRealInstance(const InstancePaths& paths, DeviceIoctl& driver) {
  absl::StatusOr<std::vector<DeviceRecord>> devices = device::ReadDevices(paths.device_root);
  if (!devices.ok()) return devices.status();
  RealInstance out;
  out.devices = *std::move(devices);

  const InstanceIdentity identity = ReadInstanceIdentity(paths.identity);
  if (!identity.note.empty()) out.notes.push_back(identity.note + ": instance type and id unknown");
  if (absl::StatusOr<const device::InstanceType*> t = device::FindInstanceType(identity.type);
      !identity.type.empty() && t.ok()) {
    out.catalog = *t;
  }

  std::vector<std::string> root_only;  // files some device kept from us
  bool runtimes_hidden = false;
  bool filled_from_catalog = false;
  FailureTally node_failures, bdf_failures, placement_failures, process_failures;
  const int device_count = static_cast<int>(out.devices.size());
  for (DeviceRecord& r : out.devices) {
    for (const std::string& f : r.unreadable) {
      if (std::find(root_only.begin(), root_only.end(), f) == root_only.end()) {
        root_only.push_back(f);
      }
    }
    if (r.instance_type.empty()) r.instance_type = identity.type;
    if (r.instance_id.empty()) r.instance_id = identity.id;
    const size_t unreadable_before = r.unreadable.size();
    FillFromCatalog(out.catalog, device_count, &r);
    filled_from_catalog |= r.unreadable.size() < unreadable_before;

    absl::Status bdf_failure;
    if (r.pci_bdf.empty()) {
      absl::StatusOr<std::string> bdf = driver.PciBdf(r.index);
      if (bdf.ok()) {
        r.pci_bdf = *bdf;
      } else {
        bdf_failure = bdf.status();
      }
    }
    if (!r.pci_bdf.empty() && !r.has_numa_node) {
      absl::StatusOr<PciPlacement> placement = ReadPciPlacement(paths.pci_devices, r.pci_bdf);
      if (placement.ok()) {
        r.numa_node = placement->numa_node;
        r.has_numa_node = true;
        r.cpu_affinity = placement->cpu_affinity;
      } else {
        placement_failures.Add(placement.status());
      }
    }

    absl::StatusOr<std::vector<DriverApp>> apps = driver.Apps(r.index);
    // A device node that will not open fails both calls alike: one line.
    if (!apps.ok() && !bdf_failure.ok() && apps.status().message() == bdf_failure.message()) {
      node_failures.Add(bdf_failure);
      continue;
    }
    if (!bdf_failure.ok()) bdf_failures.Add(bdf_failure);
    if (!apps.ok()) {
      process_failures.Add(apps.status());
      continue;
    }
    for (const DriverApp& app : *apps) {
      device::CoreHolder h;
      h.pid = app.pid;
      h.device = r.index;
      h.command = device::ReadCommandLine(absl::StrFormat("%s/%d/cmdline", paths.proc, app.pid));
      h.runtime_version = RuntimeVersionOf(paths.proc, app.pid);
      if (h.runtime_version.empty()) runtimes_hidden = true;
      // A process holding a core runs a runtime, whichever it is (linked
      // in statically, say), so it is listed without -a.
      if (!app.locked_cores.empty() && (h.runtime_version.empty() || h.runtime_version == "NA")) {
        h.runtime_version = "unknown";
      } else if (h.runtime_version.empty()) {
        h.runtime_version = "NA";
      }
      if (app.locked_cores.empty()) {
        h.physical_core = -1;
        out.holders.push_back(h);
      }
      for (int core : app.locked_cores) {
        h.physical_core = core;
        out.holders.push_back(h);
      }
    }
  }

  if (!root_only.empty() || runtimes_hidden) {
    bool still_unknown = false;
    for (const DeviceRecord& r : out.devices) still_unknown |= !r.unreadable.empty();
    out.notes.push_back(
        RootNote(root_only, filled_from_catalog, still_unknown, runtimes_hidden));
  }
  node_failures.Report("PCI BDF, NUMA node, CPU affinity and processes unknown", &out.notes);
  bdf_failures.Report("PCI BDF, NUMA node and CPU affinity unknown", &out.notes);
  placement_failures.Report("NUMA node and CPU affinity unknown", &out.notes);
  process_failures.Report("processes unknown", &out.notes);
  return out;
}

}  // namespace neuron::ls
