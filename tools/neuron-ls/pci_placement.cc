#include "tools/neuron-ls/pci_placement.h"

#include "absl/strings/str_format.h"
#include "lib/device/tree_files.h"
#include "lib/support/parse.h"

namespace neuron::ls {

absl::StatusOr<PciPlacement> ReadPciPlacement(const std::string& pci_devices,
                                              const std::string& bdf) {
  const std::string dir = pci_devices + "/" + bdf;
  PciPlacement out;
  absl::StatusOr<std::string> numa = device::ReadTrimmed(dir + "/numa_node");
  if (!numa.ok()) return numa.status();
  absl::StatusOr<int64_t> node = ParseSigned(*numa);
  if (!node.ok() || *node < -1 || *node >= 1024) {
    return absl::DataLossError(absl::StrFormat("'%s/numa_node' holds '%s', not a NUMA node", dir,
                                               numa->substr(0, 20)));
  }
  out.numa_node = static_cast<int>(*node);
  absl::StatusOr<std::string> cpus = device::ReadTrimmed(dir + "/local_cpulist");
  if (!cpus.ok()) return cpus.status();
  // Checked, then shown as the kernel spells it.
  if (!ParseRangeList(*cpus).ok()) {
    return absl::DataLossError(absl::StrFormat("'%s/local_cpulist' holds '%s', not a CPU list",
                                               dir, cpus->substr(0, 40)));
  }
  out.cpu_affinity = *std::move(cpus);
  return out;
}

}  // namespace neuron::ls
