// The instance catalog: the Neuron instance types the simulator can stand in
// for, with their real topology (devices, NeuronCores per device, HBM per
// device, device interconnect) and a plausible host layout (PCI BDF and NUMA
// node per device). Every tool picks its instance from here, so a job can be
// tried against trn2.48xlarge on a laptop with NEURON_SIM_INSTANCE_TYPE.
#ifndef NEURON_LIB_DEVICE_INSTANCE_CATALOG_H_
#define NEURON_LIB_DEVICE_INSTANCE_CATALOG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/config/config.h"

namespace neuron::device {

// How the devices of an instance are wired to each other.
enum class Interconnect {
  kNone,   // a single device
  kRing,   // inf2: each device links to its two neighbours, wrapping around
  kTorus,  // trn1/trn2: a 2D torus of rows x cols devices, wrapping both ways
};

struct InstanceType {
  std::string name;            // "trn2.48xlarge"
  std::string arch;            // config::PlatformFacts::arch: trn1, trn1n, trn2, inf2
  std::string device_name;     // the chip: "Trainium", "Trainium2", "Inferentia2"
  std::string arch_type;       // device architecture as sysfs shows it: "v2", "v3"
  std::string core_arch_type;  // per-core architecture: "NCv2", "NCv3"
  int devices = 1;
  int physical_cores_per_device = 2;
  uint64_t hbm_bytes_per_device = 0;
  int vcpus = 0;               // vCPUs of the real instance (informational)
  Interconnect interconnect = Interconnect::kNone;
  int torus_rows = 0, torus_cols = 0;  // for kTorus
  // Per device: PCI bus/device/function and NUMA node of the real instance
  // where known (-1 = no NUMA information, as small instances report).
  std::vector<std::string> pci_bdf;
  std::vector<int> numa_node;
  int numa_nodes = 1;          // NUMA nodes of the host the CPUs are split over

  int TotalPhysicalCores() const { return devices * physical_cores_per_device; }
  uint64_t TotalHbmBytes() const { return hbm_bytes_per_device * devices; }
};

// The default instance when NEURON_SIM_INSTANCE_TYPE is unset: small, so
// tests and laptops simulate one device with two cores.
inline constexpr std::string_view kDefaultInstanceType = "trn1.2xlarge";
inline constexpr std::string_view kInstanceTypeVariable = "NEURON_SIM_INSTANCE_TYPE";

// Every instance of the catalog, in a stable order.
const std::vector<InstanceType>& AllInstanceTypes();

// "inf2.24xlarge, inf2.48xlarge, ..." for error messages.
std::string KnownInstanceNames();

// Looks a name up (exact, case-insensitive); an error lists the known names.
absl::StatusOr<const InstanceType*> FindInstanceType(std::string_view name);

// The instance named by NEURON_SIM_INSTANCE_TYPE, or the default when unset.
absl::StatusOr<const InstanceType*> SelectInstanceType(const config::EnvLookup& env);

// Platform facts for config::Resolve: the instance's topology with the CPU
// count of the host the simulator actually runs on.
config::PlatformFacts PlatformFactsFor(const InstanceType& instance);

// Online CPUs of this host (at least 1).
int HostCpuCount();

// NeuronCore generation of a target or instance arch (2: trn1, trn1n, inf2;
// 3: trn2; 4: trn3; 0: unknown): NEFFs run on the generation they were
// compiled for.
int CoreGeneration(std::string_view arch);

// The first catalog instance whose NeuronCores are of `target`'s generation
// (what to set NEURON_SIM_INSTANCE_TYPE to for a NEFF of that target), or
// nullptr when none is.
const InstanceType* InstanceForTarget(std::string_view target);

}  // namespace neuron::device

#endif  // NEURON_LIB_DEVICE_INSTANCE_CATALOG_H_
