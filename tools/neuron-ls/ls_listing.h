// Where neuron-ls gets its devices: the platform to resolve the runtime
// configuration against, and the report itself, from the real driver's tree
// on an instance or from the simulated tree (created on first use) here.
#ifndef NEURON_TOOLS_NEURON_LS_LS_LISTING_H_
#define NEURON_TOOLS_NEURON_LS_LS_LISTING_H_

#include "absl/status/statusor.h"
#include "lib/config/config.h"
#include "lib/device/device_tree.h"
#include "tools/neuron-ls/ls_format.h"

namespace neuron::ls {

struct ListingSource {
  device::DeviceRoot root;
  const device::InstanceType* instance = nullptr;  // the simulated instance; null on a real root
  config::PlatformFacts facts;             // for config::Resolve
};

// Picks the root (ListingRoot) and the platform: the instance of
// NEURON_SIM_INSTANCE_TYPE on a simulated root (an unknown name is an error
// listing the known ones), the devices found on a real root.
absl::StatusOr<ListingSource> ResolveListingSource(const config::EnvLookup& env);

// Creates the simulated tree if needed, reads the devices and the processes
// holding their cores, and groups cores by the LNC in effect.
absl::StatusOr<LsReport> ListDevices(const ListingSource& source, int lnc, bool show_all_procs);

}  // namespace neuron::ls

#endif  // NEURON_TOOLS_NEURON_LS_LS_LISTING_H_
