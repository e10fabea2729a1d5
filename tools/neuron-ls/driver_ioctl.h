// What neuron-ls asks the Neuron driver through ioctls on /dev/neuronN: the
// device's PCI address and the processes attached to it. Behind an
// interface so tests can stand in a fake for the driver.
#ifndef NEURON_TOOLS_NEURON_LS_DRIVER_IOCTL_H_
#define NEURON_TOOLS_NEURON_LS_DRIVER_IOCTL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace neuron::ls {

// A process attached to a device, as the driver reports it.
struct DriverApp {
  int pid = 0;
  std::vector<int> locked_cores;  // physical cores (within the device) it holds
};

class DeviceIoctl {
 public:
  virtual ~DeviceIoctl() = default;
  // "0000:cc:00.0" for device N; an error names /dev/neuronN and the cause.
  virtual absl::StatusOr<std::string> PciBdf(int device) = 0;
  // Every process attached to device N.
  virtual absl::StatusOr<std::vector<DriverApp>> Apps(int device) = 0;
};

// The real driver, through the device nodes under dev_dir ("/dev").
std::unique_ptr<DeviceIoctl> OpenDriverIoctl(const std::string& dev_dir);

// "dddd:bb:ss.f" from the parts the driver returns.
std::string FormatPciBdf(uint32_t domain, uint32_t bus, uint32_t slot, uint32_t function);

}  // namespace neuron::ls

#endif  // NEURON_TOOLS_NEURON_LS_DRIVER_IOCTL_H_
