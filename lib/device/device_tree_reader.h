// Reads a device tree with the driver's layout from either root: the real
// /sys/devices/virtual/neuron_device on an instance, or the simulator's root.
// Files only the simulator writes (neuronN/sim/...) are optional: on a real
// root those fields stay empty for the caller to learn elsewhere. The
// driver's core_count and connected_devices are root's alone (mode 0400):
// for anyone else they are listed as unreadable, never read as zero.
#ifndef NEURON_LIB_DEVICE_DEVICE_TREE_READER_H_
#define NEURON_LIB_DEVICE_DEVICE_TREE_READER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/device/memory_category.h"

namespace neuron::device {

struct DeviceRecord {
  int index = 0;                // N of neuronN
  int core_count = 0;           // physical cores; 0 when unreadable
  std::vector<int> connected;   // connected_devices
  std::string arch_type;        // info/architecture/arch_type ("" when absent)
  std::string device_name;      // info/architecture/device_name
  std::string instance_family;  // info/architecture/instance_type ("Trn1")
  // From neuronN/sim/ (simulated roots only).
  std::string instance_type;    // "trn1.2xlarge"
  std::string instance_id;
  std::string pci_bdf;
  std::string cpu_affinity;     // range list text
  int numa_node = -1;
  bool has_numa_node = false;
  uint64_t memory_size = 0;     // bytes, 0 when unknown
  // Files of the device this process may not read ("core_count",
  // "connected_devices"): their fields are unknown, not empty.
  std::vector<std::string> unreadable;

  bool Readable(const std::string& file) const;
};

struct StatusCounter {
  uint64_t total = 0;
  uint64_t present = 0;
};

struct CoreCounters {
  std::map<std::string, StatusCounter> status;   // by counter name
  MemoryBreakdown memory{};
  std::map<std::string, uint64_t> other_info;    // by name
};

// Every neuronN directory under root, by index. A missing root, a root with
// no devices, or a malformed core_count/connected_devices is an error naming
// the file and what is wrong; one this process may not read is not.
absl::StatusOr<std::vector<DeviceRecord>> ReadDevices(const std::string& root);

// The counters of one physical core (absent counters read as zero).
absl::StatusOr<CoreCounters> ReadCoreCounters(const std::string& root, int device,
                                              int physical_core);

}  // namespace neuron::device

#endif  // NEURON_LIB_DEVICE_DEVICE_TREE_READER_H_
