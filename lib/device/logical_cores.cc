#include "lib/device/logical_cores.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace neuron::device {

std::vector<int> LogicalCore::PhysicalCores() const {
  std::vector<int> out;
  for (int i = 0; i < lnc; ++i) out.push_back(first_physical + i);
  return out;
}

absl::StatusOr<LogicalCoreMap> LogicalCoreMap::Create(int devices, int physical_cores_per_device,
                                                      int lnc) {
  if (devices < 1 || physical_cores_per_device < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "invalid topology: %d devices of %d cores", devices, physical_cores_per_device));
  }
  if (lnc < 1 || (lnc & (lnc - 1)) != 0 || physical_cores_per_device % lnc != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "logical NeuronCore config %d must be a power of two dividing the %d physical cores "
        "per device",
        lnc, physical_cores_per_device));
  }
  return LogicalCoreMap(devices, physical_cores_per_device, lnc);
}

absl::StatusOr<LogicalCoreMap> LogicalCoreMap::Create(const InstanceType& instance, int lnc) {
  return Create(instance.devices, instance.physical_cores_per_device, lnc);
}

LogicalCore LogicalCoreMap::Core(int id) const {
  LogicalCore core;
  core.id = id;
  core.device = id / per_device();
  core.index_in_device = id % per_device();
  core.first_physical = core.index_in_device * lnc_;
  core.lnc = lnc_;
  return core;
}

std::vector<int> LogicalCoreMap::CoresOfDevice(int device) const {
  std::vector<int> out;
  if (device < 0 || device >= devices_) return out;
  for (int i = 0; i < per_device(); ++i) out.push_back(device * per_device() + i);
  return out;
}

uint64_t HbmBytesPerLogicalCore(const InstanceType& instance, const LogicalCoreMap& map) {
  return instance.hbm_bytes_per_device / static_cast<uint64_t>(map.per_device());
}

}  // namespace neuron::device
