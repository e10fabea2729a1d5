// The simulated device's state as a sysfs-like tree, with the real driver's
// layout (/sys/devices/virtual/neuron_device/neuronN/...), so that one reader
// (device_tree_reader.h) lists either the real devices or the simulated ones.
//
//   <root>/neuronN/core_count                      "2" (no newline)
//   <root>/neuronN/connected_devices               "12, 3, 4, 1\n"
//   <root>/neuronN/info/{serial_number,notify_delay}
//   <root>/neuronN/info/architecture/{arch_type,device_name,instance_type}
//   <root>/neuronN/stats/hardware/{mem_ecc_uncorrected,...}
//   <root>/neuronN/neuron_coreK/info/architecture/arch_type
//   <root>/neuronN/neuron_coreK/stats/status/<status>/{total,present}
//   <root>/neuronN/neuron_coreK/stats/memory_usage/device_mem/<category>/{total,present,peak}
//   <root>/neuronN/neuron_coreK/stats/other_info/{flop_count,inference_count,...}
//
// What the real tools learn through ioctls and the instance metadata service
// lives apart, in files of the simulator's own, one value per file:
//
//   <root>/neuronN/sim/{instance_type,instance_id,pci_bdf,cpu_affinity,numa_node,memory_size}
//   <root>/neuronN/sim/coreK.lock, coreK.owner     core ownership (core_lock.h)
//
// K is the physical core index within the device. The tree is created on
// first use, under an exclusive lock on <root>/.tree.lock, and rebuilt when
// another instance type is asked for (refused while a process holds a core).
#ifndef NEURON_LIB_DEVICE_DEVICE_TREE_H_
#define NEURON_LIB_DEVICE_DEVICE_TREE_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/config/config.h"
#include "lib/device/instance_catalog.h"
#include "lib/device/memory_category.h"
#include "neuron/nrt_status.h"

namespace neuron::device {

inline constexpr std::string_view kSimRootVariable = "NEURON_SIM_ROOT";
inline constexpr std::string_view kRealDeviceRoot = "/sys/devices/virtual/neuron_device";

// Where device state is read from.
struct DeviceRoot {
  std::string path;
  bool simulated = true;
};

// NEURON_SIM_ROOT when set; otherwise the simulator's default,
// $XDG_RUNTIME_DIR/neuron-sim or /tmp/neuron-sim-<uid>.
std::string SimulatedRootPath(const config::EnvLookup& env);

// For listing: the real driver's tree when it exists and NEURON_SIM_ROOT is
// unset, the simulated root otherwise.
DeviceRoot ListingRoot(const config::EnvLookup& env);

// The per-core status counter directories of the driver, one per NRT status
// group, in sysfs order ("success", "failure", "timeout", ...).
const std::vector<std::string>& StatusCounterNames();
// The counter an NRT status is counted under (e.g. NRT_EXEC_OOB -> "oob_error").
const char* StatusCounterName(NRT_STATUS status);

// Per-core counters that are plain values, not counters with total/present.
enum class OtherInfo {
  kFlopCount,
  kInferenceCount,
  kModelLoadCount,
  kResetFailCount,
  kResetReqCount,
  kNcTimeInUse,
};
const char* OtherInfoName(OtherInfo info);
const std::vector<std::string>& OtherInfoNames();

// Paths inside a root.
std::string DeviceDir(const std::string& root, int device);
std::string CoreDir(const std::string& root, int device, int physical_core);
std::string SimDir(const std::string& root, int device);

// The simulated tree of one instance: created on Open, then updated by the
// runtime as it loads and executes. Updates of one core come from the
// process that owns it, so a mutex per tree suffices.
class SimDeviceTree {
 public:
  // Creates the tree under root for the instance, or reuses it when it is
  // already there for the same instance type.
  static absl::StatusOr<std::unique_ptr<SimDeviceTree>> Open(const std::string& root,
                                                             const InstanceType& instance);

  const std::string& root() const { return root_; }
  const InstanceType& instance() const { return *instance_; }
  // The instance id recorded when the tree was created ("i-0123...").
  const std::string& instance_id() const { return instance_id_; }

  // Adds n to the status counter the status falls under (total and present).
  absl::Status CountStatus(int device, int physical_core, NRT_STATUS status, uint64_t n = 1);
  // Zeroes the present values of a core's status counters (a new owner).
  absl::Status ResetPresentCounters(int device, int physical_core);
  // Sets one category's memory counter, or all of them.
  absl::Status SetMemoryUsage(int device, int physical_core, MemoryCategory category,
                              const MemoryUsage& usage);
  absl::Status SetMemoryUsage(int device, int physical_core, const MemoryBreakdown& usage);
  // Adds to, or sets, an other_info value.
  absl::Status AddOtherInfo(int device, int physical_core, OtherInfo info, uint64_t delta);
  absl::Status SetOtherInfo(int device, int physical_core, OtherInfo info, uint64_t value);

 private:
  SimDeviceTree(std::string root, const InstanceType* instance, std::string instance_id)
      : root_(std::move(root)), instance_(instance), instance_id_(std::move(instance_id)) {}
  absl::Status CheckCore(int device, int physical_core) const;

  const std::string root_;
  const InstanceType* const instance_;
  const std::string instance_id_;
  std::mutex mu_;
};

}  // namespace neuron::device

#endif  // NEURON_LIB_DEVICE_DEVICE_TREE_H_
