// What neuron-ls learns on a real instance, where the driver's class devices
// (/sys/devices/virtual/neuron_device/neuronN) have no PCI parent and none
// of the simulator's own files: the PCI address of each device and the
// processes on it from the driver's ioctls, NUMA node and CPU affinity from
// the PCI device's sysfs files, the instance type and id from DMI or the
// metadata service, and what the driver keeps to root (core_count,
// connected_devices, mode 0400) from the instance type's catalog entry.
// Whatever stays unknown is said, once, in a note line.
#ifndef NEURON_TOOLS_NEURON_LS_REAL_INSTANCE_H_
#define NEURON_TOOLS_NEURON_LS_REAL_INSTANCE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/device/core_lock.h"
#include "lib/device/device_tree.h"
#include "lib/device/device_tree_reader.h"
#include "lib/device/instance_catalog.h"
#include "tools/neuron-ls/driver_ioctl.h"
#include "tools/neuron-ls/instance_identity.h"

namespace neuron::ls {

// Where each source lives; tests point them at a fake machine.
struct InstancePaths {
  std::string device_root = std::string(device::kRealDeviceRoot);
  std::string dev_dir = "/dev";
  std::string pci_devices = "/sys/bus/pci/devices";
  std::string proc = "/proc";
  IdentitySources identity;
};

struct RealInstance {
  // Every device with what could be learned filled in; a field nothing
  // could tell stays unknown (device::DeviceRecord's "unknown" values).
  std::vector<device::DeviceRecord> devices;
  // One per core a process holds, or one with physical_core -1 for a
  // process attached without holding a core (neuron-ls itself, a monitor).
  std::vector<device::CoreHolder> holders;
  const device::InstanceType* catalog = nullptr;  // the instance type's entry, if any
  std::vector<std::string> notes;                 // one line each
};

absl::StatusOr<RealInstance> ReadRealInstance(const InstancePaths& paths, DeviceIoctl& driver);

// The runtime a process runs, from the libnrt it maps (/proc/PID/maps):
// the version in the library's file name ("libnrt.so.2.21.1" -> "2.21.1"),
// "unknown" when its name carries only the soname, "NA" when it maps no
// libnrt. Unreadable maps (another user's process) give "". A process
// that holds a core is listed as "unknown" rather than "NA": it runs one.
std::string RuntimeVersionOf(const std::string& proc, int pid);

}  // namespace neuron::ls

#endif  // NEURON_TOOLS_NEURON_LS_REAL_INSTANCE_H_
