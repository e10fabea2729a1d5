// The instance catalog against the published figures of each instance.
#include <unistd.h>

#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "lib/device/instance_catalog.h"

namespace neuron::device {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

config::EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

struct Expected {
  const char* name;
  const char* arch;
  int devices;
  int cores_per_device;
  uint64_t hbm_gib_per_device;
  Interconnect interconnect;
  int vcpus;
};

// Public AWS figures (instance type pages and the Neuron architecture docs).
const Expected kExpected[] = {
    {"trn1.2xlarge", "trn1", 1, 2, 32, Interconnect::kNone, 8},
    {"trn1.32xlarge", "trn1", 16, 2, 32, Interconnect::kTorus, 128},
    {"trn1n.32xlarge", "trn1n", 16, 2, 32, Interconnect::kTorus, 128},
    {"trn2.3xlarge", "trn2", 1, 8, 96, Interconnect::kNone, 12},
    {"trn2.48xlarge", "trn2", 16, 8, 96, Interconnect::kTorus, 192},
    {"inf2.xlarge", "inf2", 1, 2, 32, Interconnect::kNone, 4},
    {"inf2.8xlarge", "inf2", 1, 2, 32, Interconnect::kNone, 32},
    {"inf2.24xlarge", "inf2", 6, 2, 32, Interconnect::kRing, 96},
    {"inf2.48xlarge", "inf2", 12, 2, 32, Interconnect::kRing, 192},
};

TEST(CatalogTest, EveryNamedInstanceHasItsPublishedTopology) {
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(e.name);
    absl::StatusOr<const InstanceType*> t = FindInstanceType(e.name);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ((*t)->name, e.name);
    EXPECT_EQ((*t)->arch, e.arch);
    EXPECT_EQ((*t)->devices, e.devices);
    EXPECT_EQ((*t)->physical_cores_per_device, e.cores_per_device);
    EXPECT_EQ((*t)->hbm_bytes_per_device, e.hbm_gib_per_device * kGiB);
    EXPECT_EQ((*t)->interconnect, e.interconnect);
    EXPECT_EQ((*t)->vcpus, e.vcpus);
  }
}

TEST(CatalogTest, Trn2_48xlargeTotals) {
  const InstanceType* t = *FindInstanceType("trn2.48xlarge");
  EXPECT_EQ(t->TotalPhysicalCores(), 128);
  EXPECT_EQ(t->TotalHbmBytes(), 1536 * kGiB);  // 1.5 TiB
  EXPECT_EQ(t->torus_rows * t->torus_cols, 16);
}

TEST(CatalogTest, PerDeviceHostFactsAreComplete) {
  for (const InstanceType& t : AllInstanceTypes()) {
    SCOPED_TRACE(t.name);
    ASSERT_EQ(static_cast<int>(t.pci_bdf.size()), t.devices);
    ASSERT_EQ(static_cast<int>(t.numa_node.size()), t.devices);
    std::set<std::string> unique(t.pci_bdf.begin(), t.pci_bdf.end());
    EXPECT_EQ(static_cast<int>(unique.size()), t.devices) << "duplicate PCI BDF";
    for (const std::string& bdf : t.pci_bdf) {
      EXPECT_EQ(bdf.size(), 12u) << bdf;  // 0000:bb:dd.f
      EXPECT_EQ(bdf.substr(0, 5), "0000:") << bdf;
    }
    for (int n : t.numa_node) {
      EXPECT_GE(n, -1);
      EXPECT_LT(n, t.numa_nodes);
    }
    if (t.interconnect == Interconnect::kTorus) {
      EXPECT_EQ(t.torus_rows * t.torus_cols, t.devices);
    }
  }
}

TEST(CatalogTest, NamesAreCaseInsensitive) {
  absl::StatusOr<const InstanceType*> t = FindInstanceType("TRN2.48xLarge");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)->name, "trn2.48xlarge");
}

TEST(CatalogTest, UnknownNameListsEveryKnownName) {
  absl::StatusOr<const InstanceType*> t = FindInstanceType("p5.48xlarge");
  ASSERT_FALSE(t.ok());
  const std::string msg(t.status().message());
  EXPECT_NE(msg.find("p5.48xlarge"), std::string::npos) << msg;
  for (const Expected& e : kExpected) {
    EXPECT_NE(msg.find(e.name), std::string::npos) << e.name << " missing from: " << msg;
  }
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "must be one line";
}

TEST(CatalogTest, SelectDefaultsToTrn1_2xlarge) {
  absl::StatusOr<const InstanceType*> t = SelectInstanceType(Env({}));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)->name, "trn1.2xlarge");
  EXPECT_EQ((*t)->devices, 1);
  EXPECT_EQ((*t)->physical_cores_per_device, 2);
}

TEST(CatalogTest, SelectHonoursTheVariable) {
  absl::StatusOr<const InstanceType*> t =
      SelectInstanceType(Env({{"NEURON_SIM_INSTANCE_TYPE", "inf2.48xlarge"}}));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)->devices, 12);
}

TEST(CatalogTest, SelectNamesTheVariableOnError) {
  for (const char* bad : {"bogus", "", "trn1.2xlarge "}) {
    absl::StatusOr<const InstanceType*> t =
        SelectInstanceType(Env({{"NEURON_SIM_INSTANCE_TYPE", bad}}));
    ASSERT_FALSE(t.ok()) << bad;
    const std::string msg(t.status().message());
    EXPECT_NE(msg.find("NEURON_SIM_INSTANCE_TYPE"), std::string::npos) << msg;
    EXPECT_NE(msg.find("trn2.48xlarge"), std::string::npos) << msg;
  }
}

TEST(CatalogTest, PlatformFactsCarryTheInstanceAndTheHostCpus) {
  const InstanceType* t = *FindInstanceType("trn2.48xlarge");
  config::PlatformFacts f = PlatformFactsFor(*t);
  EXPECT_EQ(f.arch, "trn2");
  EXPECT_TRUE(f.IsTrn2Family());
  EXPECT_EQ(f.instance_type, "trn2.48xlarge");
  EXPECT_EQ(f.devices, 16);
  EXPECT_EQ(f.physical_cores_per_device, 8);
  EXPECT_EQ(f.host_cpus, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_EQ(PlatformFactsFor(**FindInstanceType("trn1n.32xlarge")).arch, "trn1n");
}

}  // namespace
}  // namespace neuron::device
