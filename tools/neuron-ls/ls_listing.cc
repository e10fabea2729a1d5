#include "tools/neuron-ls/ls_listing.h"

#include <cctype>

#include "lib/device/core_lock.h"
#include "lib/device/device_tree_reader.h"

namespace neuron::ls {

using device::CoreHolder;
using device::DeviceRecord;
using device::ReadDevices;
using device::ReadHolders;
using device::SimDeviceTree;

absl::StatusOr<ListingSource> ResolveListingSource(const config::EnvLookup& env) {
  ListingSource source;
  source.root = device::ListingRoot(env);
  if (source.root.simulated) {
    absl::StatusOr<const device::InstanceType*> instance = device::SelectInstanceType(env);
    if (!instance.ok()) return instance.status();
    source.instance = *instance;
    source.facts = device::PlatformFactsFor(**instance);
    return source;
  }
  absl::StatusOr<std::vector<DeviceRecord>> devices = ReadDevices(source.root.path);
  if (!devices.ok()) return devices.status();
  const DeviceRecord& first = devices->front();
  std::string arch = first.instance_family;  // "Trn1" -> "trn1"
  for (char& c : arch) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!arch.empty()) source.facts.arch = arch;
  source.facts.instance_type = first.instance_type.empty() ? arch : first.instance_type;
  source.facts.devices = static_cast<int>(devices->size());
  source.facts.physical_cores_per_device = first.core_count;
  source.facts.host_cpus = device::HostCpuCount();
  return source;
}

absl::StatusOr<LsReport> ListDevices(const ListingSource& source, int lnc, bool show_all_procs) {
  if (source.root.simulated && source.instance != nullptr) {
    absl::StatusOr<std::unique_ptr<SimDeviceTree>> tree =
        SimDeviceTree::Open(source.root.path, *source.instance);
    if (!tree.ok()) return tree.status();
  }
  absl::StatusOr<std::vector<DeviceRecord>> devices = ReadDevices(source.root.path);
  if (!devices.ok()) return devices.status();
  std::vector<CoreHolder> holders;
  if (source.root.simulated) holders = ReadHolders(source.root.path);
  return BuildLsReport(*devices, holders, lnc, show_all_procs);
}

}  // namespace neuron::ls
