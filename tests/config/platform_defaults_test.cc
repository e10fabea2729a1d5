// Defaults that the reference makes depend on the platform: trn1 vs trn2
// (and inf2, which follows trn1: same NeuronCore-v2, 2 cores per device).
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "lib/config/config.h"
#include "tests/config/config_test_util.h"

namespace neuron::config {
namespace {

using testing::ResolveWith;
using testing::ValueOf;

TEST(PlatformDefaults, Trn1) {
  Resolution r = ResolveWith({}, testing::Trn1Small());
  ASSERT_TRUE(r.ok()) << r.init_error;
  EXPECT_EQ(r.config.logical_nc_config, 1);
  EXPECT_EQ(ValueOf(r, "NEURON_LOGICAL_NC_CONFIG"), "1");
  EXPECT_EQ(r.config.visible_cores, (std::vector<int>{0, 1}));
  EXPECT_FALSE(r.config.enable_hw_execution_barrier);
  EXPECT_FALSE(r.config.map_hbm);
  EXPECT_FALSE(r.config.register_hbm_mr);
  EXPECT_TRUE(r.config.contiguous_scratchpad);
}

TEST(PlatformDefaults, Trn2) {
  Resolution r = ResolveWith({}, testing::Trn2Large());
  ASSERT_TRUE(r.ok()) << r.init_error;
  EXPECT_EQ(r.config.logical_nc_config, 2);
  EXPECT_EQ(r.config.visible_cores.size(), 64u);
  EXPECT_TRUE(r.config.enable_hw_execution_barrier);
  EXPECT_TRUE(r.config.map_hbm);
  EXPECT_TRUE(r.config.register_hbm_mr);
  EXPECT_TRUE(r.config.contiguous_scratchpad);
  EXPECT_EQ(ValueOf(r, "NEURON_RT_ENABLE_HW_EXECUTION_BARRIER"), "true");
}

TEST(PlatformDefaults, Trn3FollowsTrn2) {
  PlatformFacts p = testing::Trn2Large();
  p.arch = "trn3";
  Resolution r = ResolveWith({}, p);
  EXPECT_EQ(r.config.logical_nc_config, 2);
  EXPECT_TRUE(r.config.enable_hw_execution_barrier);
  EXPECT_TRUE(r.config.map_hbm);
}

TEST(PlatformDefaults, Inf2FollowsTrn1) {
  Resolution r = ResolveWith({}, testing::Inf2Small());
  ASSERT_TRUE(r.ok()) << r.init_error;
  EXPECT_EQ(r.config.logical_nc_config, 1);
  EXPECT_EQ(r.config.visible_cores.size(), 2u);
  EXPECT_FALSE(r.config.enable_hw_execution_barrier);
  EXPECT_FALSE(r.config.map_hbm);
}

TEST(PlatformDefaults, SameEnvironmentDiffersOnlyWhereTheReferenceSays) {
  Resolution trn1 = ResolveWith({}, testing::Trn1Small());
  Resolution trn2 = ResolveWith({}, testing::Trn2Large());
  const std::set<std::string> arch_dependent = {
      "NEURON_RT_VISIBLE_CORES",        "NEURON_LOGICAL_NC_CONFIG",
      "NEURON_RT_ENABLE_HW_EXECUTION_BARRIER", "NEURON_RT_MAP_HBM",
      "NEURON_RT_REGISTER_HBM_MR",      "NEURON_RT_INSPECT_EVENT_FILTER_NC"};
  ASSERT_EQ(trn1.values.size(), trn2.values.size());
  for (size_t i = 0; i < trn1.values.size(); ++i) {
    const std::string& name = trn1.values[i].name;
    if (arch_dependent.count(name)) {
      EXPECT_NE(trn1.values[i].value, trn2.values[i].value) << name;
    } else {
      EXPECT_EQ(trn1.values[i].value, trn2.values[i].value) << name;
    }
  }
}

}  // namespace
}  // namespace neuron::config
