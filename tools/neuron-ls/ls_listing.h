// Where neuron-ls gets its devices: the platform to resolve the runtime
// configuration against, and the report itself, from the real driver and
// machine on an instance (real_instance.h) or from the simulated tree
// (created on first use) here.
#ifndef NEURON_TOOLS_NEURON_LS_LS_LISTING_H_
#define NEURON_TOOLS_NEURON_LS_LS_LISTING_H_

#include "absl/status/statusor.h"
#include "lib/config/config.h"
#include "lib/device/device_tree.h"
#include "tools/neuron-ls/driver_ioctl.h"
#include "tools/neuron-ls/ls_format.h"
#include "tools/neuron-ls/real_instance.h"

namespace neuron::ls {

struct ListingSource {
  device::DeviceRoot root;
  const device::InstanceType* instance = nullptr;  // the simulated instance; null on a real root
  config::PlatformFacts facts;                     // for config::Resolve
  RealInstance real;                               // on a real root: everything read there
};

// Picks the root (ListingRoot) and the platform: the instance of
// NEURON_SIM_INSTANCE_TYPE on a simulated root (an unknown name is an error
// listing the known ones), what the driver and the machine say on a real
// root (read once, here).
absl::StatusOr<ListingSource> ResolveListingSource(const config::EnvLookup& env);

// The real-root half of it, with every source given (tests pass a fake
// machine and driver).
absl::StatusOr<ListingSource> ResolveRealSource(const InstancePaths& paths, DeviceIoctl& driver);

// Creates the simulated tree if needed, reads the devices and the processes
// holding their cores, and groups cores by the LNC in effect. The report's
// notes say what a real root could not tell.
absl::StatusOr<LsReport> ListDevices(const ListingSource& source, int lnc, bool show_all_procs);

}  // namespace neuron::ls

#endif  // NEURON_TOOLS_NEURON_LS_LS_LISTING_H_
