#include "tools/neuron-ls/ls_listing.h"

#include "absl/strings/ascii.h"
#include "lib/device/core_lock.h"
#include "lib/device/device_tree_reader.h"

namespace neuron::ls {

absl::StatusOr<ListingSource> ResolveRealSource(const InstancePaths& paths, DeviceIoctl& driver) {
  ListingSource source;
  source.root = {paths.device_root, false};
  absl::StatusOr<RealInstance> real = ReadRealInstance(paths, driver);
  if (!real.ok()) return real.status();
  source.real = *std::move(real);
  const device::DeviceRecord& first = source.real.devices.front();
  const std::string arch = absl::AsciiStrToLower(first.instance_family);  // "Trn1" -> "trn1"
  if (!arch.empty()) source.facts.arch = arch;
  source.facts.instance_type = first.instance_type.empty() ? arch : first.instance_type;
  source.facts.devices = static_cast<int>(source.real.devices.size());
  // An unknown core count (an unknown chip, no root) keeps the facts'
  // default for resolving the configuration; the table says NA.
  if (first.core_count > 0) source.facts.physical_cores_per_device = first.core_count;
  source.facts.host_cpus = device::HostCpuCount();
  return source;
}

absl::StatusOr<ListingSource> ResolveListingSource(const config::EnvLookup& env) {
  const device::DeviceRoot root = device::ListingRoot(env);
  if (!root.simulated) {
    InstancePaths paths;
    paths.device_root = root.path;
    std::unique_ptr<DeviceIoctl> driver = OpenDriverIoctl(paths.dev_dir);
    return ResolveRealSource(paths, *driver);
  }
  ListingSource source;
  source.root = root;
  absl::StatusOr<const device::InstanceType*> instance = device::SelectInstanceType(env);
  if (!instance.ok()) return instance.status();
  source.instance = *instance;
  source.facts = device::PlatformFactsFor(**instance);
  return source;
}

absl::StatusOr<LsReport> ListDevices(const ListingSource& source, int lnc, bool show_all_procs) {
  if (!source.root.simulated) {
    LsReport report = BuildLsReport(source.real.devices, source.real.holders, lnc, show_all_procs);
    report.notes = source.real.notes;
    return report;
  }
  if (source.instance != nullptr) {
    absl::StatusOr<std::unique_ptr<device::SimDeviceTree>> tree =
        device::SimDeviceTree::Open(source.root.path, *source.instance);
    if (!tree.ok()) return tree.status();
  }
  absl::StatusOr<std::vector<device::DeviceRecord>> devices = device::ReadDevices(source.root.path);
  if (!devices.ok()) return devices.status();
  return BuildLsReport(*devices, device::ReadHolders(source.root.path), lnc, show_all_procs);
}

}  // namespace neuron::ls
