// Logical NeuronCores: NEURON_LOGICAL_NC_CONFIG (the LNC size) fuses
// consecutive physical cores of one device into one logical core. Logical
// core k of device d covers physical cores k*LNC .. k*LNC+LNC-1 of d, and
// logical ids are numbered globally across devices (device 1's first logical
// core follows device 0's last). Logical ids are what NEURON_RT_VISIBLE_CORES
// names and what neuron-ls shows as NEURON CORE IDS.
#ifndef NEURON_LIB_DEVICE_LOGICAL_CORES_H_
#define NEURON_LIB_DEVICE_LOGICAL_CORES_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/device/instance_catalog.h"

namespace neuron::device {

struct LogicalCore {
  int id = 0;              // global logical id
  int device = 0;          // the device it lives on
  int index_in_device = 0; // logical index within the device
  // Physical cores within the device (first .. first+lnc-1).
  int first_physical = 0;
  int lnc = 1;
  // Physical core ids within the device.
  std::vector<int> PhysicalCores() const;
};

class LogicalCoreMap {
 public:
  // Fails when lnc is not a power of two dividing the cores per device.
  static absl::StatusOr<LogicalCoreMap> Create(int devices, int physical_cores_per_device,
                                               int lnc);
  static absl::StatusOr<LogicalCoreMap> Create(const InstanceType& instance, int lnc);

  int lnc() const { return lnc_; }
  int devices() const { return devices_; }
  int per_device() const { return physical_per_device_ / lnc_; }
  int count() const { return devices_ * per_device(); }
  bool Contains(int id) const { return id >= 0 && id < count(); }

  // Requires Contains(id).
  LogicalCore Core(int id) const;
  // Logical ids of one device, ascending.
  std::vector<int> CoresOfDevice(int device) const;

 private:
  LogicalCoreMap(int devices, int per_device, int lnc)
      : devices_(devices), physical_per_device_(per_device), lnc_(lnc) {}
  int devices_;
  int physical_per_device_;
  int lnc_;
};

// The HBM of one logical core: its device's HBM split evenly over the
// device's logical cores (the size of that core's HbmArena).
uint64_t HbmBytesPerLogicalCore(const InstanceType& instance, const LogicalCoreMap& map);

}  // namespace neuron::device

#endif  // NEURON_LIB_DEVICE_LOGICAL_CORES_H_
