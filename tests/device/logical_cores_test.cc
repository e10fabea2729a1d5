// NEURON_LOGICAL_NC_CONFIG grouping of physical cores into logical cores.
#include <gtest/gtest.h>

#include "lib/device/logical_cores.h"

namespace neuron::device {
namespace {

const InstanceType& Instance(const char* name) { return **FindInstanceType(name); }

TEST(LogicalCoresTest, Trn2AtLnc2Has64Cores) {
  absl::StatusOr<LogicalCoreMap> m = LogicalCoreMap::Create(Instance("trn2.48xlarge"), 2);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->count(), 64);
  EXPECT_EQ(m->per_device(), 4);
  LogicalCore c = m->Core(5);
  EXPECT_EQ(c.device, 1);
  EXPECT_EQ(c.index_in_device, 1);
  EXPECT_EQ(c.PhysicalCores(), (std::vector<int>{2, 3}));
  EXPECT_EQ(m->Core(63).device, 15);
  EXPECT_EQ(m->Core(63).PhysicalCores(), (std::vector<int>{6, 7}));
  EXPECT_EQ(m->CoresOfDevice(15), (std::vector<int>{60, 61, 62, 63}));
}

TEST(LogicalCoresTest, Lnc1IsOneToOne) {
  absl::StatusOr<LogicalCoreMap> m = LogicalCoreMap::Create(Instance("trn2.48xlarge"), 1);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->count(), 128);
  EXPECT_EQ(m->Core(9).device, 1);
  EXPECT_EQ(m->Core(9).PhysicalCores(), (std::vector<int>{1}));
  absl::StatusOr<LogicalCoreMap> trn1 = LogicalCoreMap::Create(Instance("trn1.32xlarge"), 1);
  ASSERT_TRUE(trn1.ok());
  EXPECT_EQ(trn1->count(), 32);
  EXPECT_EQ(trn1->CoresOfDevice(3), (std::vector<int>{6, 7}));
}

TEST(LogicalCoresTest, Lnc2OnTrn1FusesTheDevice) {
  absl::StatusOr<LogicalCoreMap> m = LogicalCoreMap::Create(Instance("trn1.2xlarge"), 2);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->count(), 1);
  EXPECT_EQ(m->Core(0).PhysicalCores(), (std::vector<int>{0, 1}));
}

TEST(LogicalCoresTest, EveryPhysicalCoreBelongsToExactlyOneLogicalCore) {
  for (int lnc : {1, 2, 4, 8}) {
    absl::StatusOr<LogicalCoreMap> m = LogicalCoreMap::Create(Instance("trn2.48xlarge"), lnc);
    ASSERT_TRUE(m.ok()) << lnc;
    std::vector<int> owner(128, -1);
    for (int id = 0; id < m->count(); ++id) {
      LogicalCore c = m->Core(id);
      for (int p : c.PhysicalCores()) {
        int global = c.device * 8 + p;
        EXPECT_EQ(owner[global], -1);
        owner[global] = id;
      }
    }
    for (int o : owner) EXPECT_NE(o, -1);
  }
}

TEST(LogicalCoresTest, BadLncIsRefused) {
  for (int lnc : {0, -1, 3, 6, 16}) {
    absl::StatusOr<LogicalCoreMap> m = LogicalCoreMap::Create(Instance("trn2.48xlarge"), lnc);
    EXPECT_FALSE(m.ok()) << lnc;
  }
  EXPECT_FALSE(LogicalCoreMap::Create(Instance("trn1.2xlarge"), 4).ok());
  EXPECT_FALSE(LogicalCoreMap::Create(0, 2, 1).ok());
}

TEST(LogicalCoresTest, HbmPerLogicalCore) {
  const InstanceType& trn2 = Instance("trn2.48xlarge");
  EXPECT_EQ(HbmBytesPerLogicalCore(trn2, *LogicalCoreMap::Create(trn2, 2)), uint64_t{24} << 30);
  EXPECT_EQ(HbmBytesPerLogicalCore(trn2, *LogicalCoreMap::Create(trn2, 1)), uint64_t{12} << 30);
  const InstanceType& trn1 = Instance("trn1.2xlarge");
  EXPECT_EQ(HbmBytesPerLogicalCore(trn1, *LogicalCoreMap::Create(trn1, 1)), uint64_t{16} << 30);
}

TEST(LogicalCoresTest, Contains) {
  LogicalCoreMap m = *LogicalCoreMap::Create(Instance("trn1.2xlarge"), 1);
  EXPECT_TRUE(m.Contains(0));
  EXPECT_TRUE(m.Contains(1));
  EXPECT_FALSE(m.Contains(2));
  EXPECT_FALSE(m.Contains(-1));
  EXPECT_TRUE(m.CoresOfDevice(1).empty());
}

}  // namespace
}  // namespace neuron::device
