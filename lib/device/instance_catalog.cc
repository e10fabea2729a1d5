#include "lib/device/instance_catalog.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace neuron::device {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

// Short PCI bus ids in the real instance's order (neuron-ls output of the
// real instance); the domain and function are the same for every device.
std::vector<std::string> Bdfs(const std::vector<const char*>& bus_device) {
  std::vector<std::string> out;
  for (const char* b : bus_device) out.push_back(absl::StrFormat("0000:%s", b));
  return out;
}

// Inferentia-style layout where every device sits on bus 0 with the last
// device numbers (0000:00:1f.0 for the last), as inf1/inf2 report.
std::vector<std::string> BusZeroBdfs(int devices) {
  std::vector<std::string> out;
  for (int i = 0; i < devices; ++i) {
    out.push_back(absl::StrFormat("0000:00:%02x.0", 0x20 - devices + i));
  }
  return out;
}

InstanceType Trn1_32(const char* name, const char* arch) {
  InstanceType t;
  t.name = name;
  t.arch = arch;
  t.device_name = "Trainium";
  t.arch_type = "v2";
  t.core_arch_type = "NCv2";
  t.devices = 16;
  t.physical_cores_per_device = 2;
  t.hbm_bytes_per_device = 32 * kGiB;
  t.vcpus = 128;
  t.interconnect = Interconnect::kTorus;
  t.torus_rows = 4;
  t.torus_cols = 4;
  // As neuron-ls prints them on a trn1.32xlarge.
  t.pci_bdf = Bdfs({"10:1b.0", "10:1e.0", "a0:1b.0", "a0:1e.0", "20:1e.0", "20:1c.0",
                    "90:1e.0", "90:1c.0", "20:1d.0", "20:1b.0", "90:1d.0", "90:1b.0",
                    "10:1c.0", "10:1d.0", "a0:1c.0", "a0:1d.0"});
  t.numa_node = {0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1};
  t.numa_nodes = 2;
  return t;
}

InstanceType SingleDevice(const char* name, const char* arch, int vcpus, int numa) {
  InstanceType t;
  t.name = name;
  t.arch = arch;
  bool trn2 = std::string_view(arch) == "trn2";
  bool inf2 = std::string_view(arch) == "inf2";
  t.device_name = trn2 ? "Trainium2" : inf2 ? "Inferentia2" : "Trainium";
  t.arch_type = trn2 ? "v3" : "v2";
  t.core_arch_type = trn2 ? "NCv3" : "NCv2";
  t.devices = 1;
  t.physical_cores_per_device = trn2 ? 8 : 2;
  t.hbm_bytes_per_device = (trn2 ? 96 : 32) * kGiB;
  t.vcpus = vcpus;
  t.interconnect = Interconnect::kNone;
  t.pci_bdf = inf2 ? BusZeroBdfs(1) : std::vector<std::string>{"0000:00:1e.0"};
  t.numa_node = {numa};
  t.numa_nodes = 1;
  return t;
}

InstanceType Inf2Ring(const char* name, int devices, int vcpus, int numa_nodes) {
  InstanceType t;
  t.name = name;
  t.arch = "inf2";
  t.device_name = "Inferentia2";
  t.arch_type = "v2";
  t.core_arch_type = "NCv2";
  t.devices = devices;
  t.physical_cores_per_device = 2;
  t.hbm_bytes_per_device = 32 * kGiB;
  t.vcpus = vcpus;
  t.interconnect = Interconnect::kRing;
  t.pci_bdf = BusZeroBdfs(devices);
  for (int i = 0; i < devices; ++i) t.numa_node.push_back(i * numa_nodes / devices);
  t.numa_nodes = numa_nodes;
  return t;
}

InstanceType Trn2_48() {
  InstanceType t;
  t.name = "trn2.48xlarge";
  t.arch = "trn2";
  t.device_name = "Trainium2";
  t.arch_type = "v3";
  t.core_arch_type = "NCv3";
  t.devices = 16;
  t.physical_cores_per_device = 8;
  t.hbm_bytes_per_device = 96 * kGiB;
  t.vcpus = 192;
  t.interconnect = Interconnect::kTorus;
  t.torus_rows = 4;
  t.torus_cols = 4;
  // As neuron-ls prints them on a trn2.48xlarge (the neuron-ls user guide).
  t.pci_bdf = Bdfs({"cc:00.0", "b5:00.0", "b6:00.0", "cb:00.0", "6f:00.0", "58:00.0",
                    "59:00.0", "6e:00.0", "9b:00.0", "84:00.0", "85:00.0", "9a:00.0",
                    "f8:00.0", "e1:00.0", "e2:00.0", "f7:00.0"});
  t.numa_node = {1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1};
  t.numa_nodes = 2;
  return t;
}

std::vector<InstanceType> BuildCatalog() {
  std::vector<InstanceType> c;
  c.push_back(SingleDevice("trn1.2xlarge", "trn1", 8, 0));
  c.push_back(Trn1_32("trn1.32xlarge", "trn1"));
  c.push_back(Trn1_32("trn1n.32xlarge", "trn1n"));
  c.push_back(SingleDevice("trn2.3xlarge", "trn2", 12, 0));
  c.push_back(Trn2_48());
  c.push_back(SingleDevice("inf2.xlarge", "inf2", 4, -1));
  c.push_back(SingleDevice("inf2.8xlarge", "inf2", 32, 0));
  c.push_back(Inf2Ring("inf2.24xlarge", 6, 96, 1));
  c.push_back(Inf2Ring("inf2.48xlarge", 12, 192, 2));
  return c;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

const std::vector<InstanceType>& AllInstanceTypes() {
  static const std::vector<InstanceType>* catalog = new std::vector<InstanceType>(BuildCatalog());
  return *catalog;
}

std::string KnownInstanceNames() {
  std::string out;
  for (const InstanceType& t : AllInstanceTypes()) {
    if (!out.empty()) out += ", ";
    out += t.name;
  }
  return out;
}

absl::StatusOr<const InstanceType*> FindInstanceType(std::string_view name) {
  for (const InstanceType& t : AllInstanceTypes()) {
    if (EqualsIgnoreCase(t.name, name)) return &t;
  }
  return absl::NotFoundError(absl::StrFormat("unknown instance type '%s' (known: %s)", name,
                                             KnownInstanceNames()));
}

absl::StatusOr<const InstanceType*> SelectInstanceType(const config::EnvLookup& env) {
  std::optional<std::string> value = env(kInstanceTypeVariable);
  if (!value.has_value()) return FindInstanceType(kDefaultInstanceType);
  absl::StatusOr<const InstanceType*> found = FindInstanceType(*value);
  if (!found.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: unknown instance type '%s' (known: %s)", kInstanceTypeVariable, *value,
        KnownInstanceNames()));
  }
  return found;
}

int HostCpuCount() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

config::PlatformFacts PlatformFactsFor(const InstanceType& instance) {
  config::PlatformFacts facts;
  facts.arch = instance.arch;
  facts.instance_type = instance.name;
  facts.devices = instance.devices;
  facts.physical_cores_per_device = instance.physical_cores_per_device;
  facts.host_cpus = HostCpuCount();
  return facts;
}

const InstanceType* InstanceForTarget(std::string_view target) {
  const int generation = CoreGeneration(target);
  if (generation == 0) return nullptr;
  for (const InstanceType& t : AllInstanceTypes()) {
    if (CoreGeneration(t.arch) == generation) return &t;
  }
  return nullptr;
}

int CoreGeneration(std::string_view arch) {
  if (arch == "trn1" || arch == "trn1n" || arch == "inf2") return 2;
  if (arch == "trn2") return 3;
  if (arch == "trn3") return 4;
  return 0;
}

}  // namespace neuron::device
