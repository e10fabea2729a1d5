// Where a PCI device sits on the host: its NUMA node and the CPUs local to
// it, from /sys/bus/pci/devices/<BDF>/{numa_node,local_cpulist}.
#ifndef NEURON_TOOLS_NEURON_LS_PCI_PLACEMENT_H_
#define NEURON_TOOLS_NEURON_LS_PCI_PLACEMENT_H_

#include <string>

#include "absl/status/statusor.h"

namespace neuron::ls {

struct PciPlacement {
  int numa_node = -1;        // -1: the host gives none (small instances)
  std::string cpu_affinity;  // range list, "48-95,144-191"
};

// Reads the device's placement under pci_devices ("/sys/bus/pci/devices").
// An error names the file and what is wrong with it.
absl::StatusOr<PciPlacement> ReadPciPlacement(const std::string& pci_devices,
                                              const std::string& bdf);

}  // namespace neuron::ls

#endif  // NEURON_TOOLS_NEURON_LS_PCI_PLACEMENT_H_
