// Scratchpad page planning and the NaN/Inf scan, without a device.
#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "lib/runtime/numerics.h"
#include "lib/runtime/scratchpad.h"

namespace neuron::runtime {
namespace {

TEST(ScratchpadTest, ContiguousScratchpadUses64MiBPages) {
  config::RuntimeConfig config;
  config.contiguous_scratchpad = true;
  config.scratchpad_page_size_mib = 512;
  ScratchpadPlan plan = PlanScratchpad(config, 65ull << 20, 10ull << 20);
  EXPECT_EQ(plan.page_bytes, 64ull << 20);
  EXPECT_EQ(plan.pages, 2u);
  EXPECT_EQ(plan.bytes, 128ull << 20);
  EXPECT_FALSE(plan.recommended_page_mib.has_value());
}

TEST(ScratchpadTest, ALargeVariableGetsARecommendedPageSize) {
  config::RuntimeConfig config;
  config.contiguous_scratchpad = false;
  config.scratchpad_page_size_mib = 16;
  ScratchpadPlan plan = PlanScratchpad(config, 100ull << 20, 100ull << 20);
  EXPECT_EQ(plan.page_bytes, 16ull << 20);
  EXPECT_EQ(plan.pages, 7u);
  ASSERT_TRUE(plan.recommended_page_mib.has_value());
  EXPECT_EQ(*plan.recommended_page_mib, 128u);
  const std::string warning = ScratchpadWarning(config, plan, 100ull << 20);
  EXPECT_NE(warning.find("NEURON_SCRATCHPAD_PAGE_SIZE=128"), std::string::npos) << warning;
  EXPECT_NE(warning.find("--hbm-scratchpad-page-size=128"), std::string::npos) << warning;
  EXPECT_EQ(warning.find("CONTIGUOUS"), std::string::npos);
  config.contiguous_scratchpad = true;
  EXPECT_NE(ScratchpadWarning(config, PlanScratchpad(config, 1, 100ull << 20), 100ull << 20)
                .find("NEURON_RT_CONTIGUOUS_SCRATCHPAD=0"),
            std::string::npos);
}

TEST(ScratchpadTest, NoIntermediatesNoPages) {
  config::RuntimeConfig config;
  EXPECT_EQ(PlanScratchpad(config, 0, 0).bytes, 0u);
}

TEST(NumericsTest, CountsNanAndInfPerType) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> f = {1, NAN, 2, inf, -inf, 0};
  NonFiniteCount c = CountNonFinite(hlo::ElementType::kF32, f.data(), 6);
  EXPECT_EQ(c.nan, 1);
  EXPECT_EQ(c.inf, 2);
  EXPECT_EQ(c.first_index, 1);
  std::vector<uint16_t> bf16 = {0x3F80, 0x7F80, 0xFFC1};  // 1, inf, nan
  c = CountNonFinite(hlo::ElementType::kBF16, bf16.data(), 3);
  EXPECT_EQ(c.inf, 1);
  EXPECT_EQ(c.nan, 1);
  EXPECT_EQ(c.first_index, 1);
  std::vector<int32_t> ints = {-1, 0x7F800000};
  EXPECT_FALSE(CountNonFinite(hlo::ElementType::kS32, ints.data(), 2).any());
  std::vector<double> d = {1.0, NAN};
  EXPECT_EQ(CountNonFinite(hlo::ElementType::kF64, d.data(), 2).nan, 1);
}

}  // namespace
}  // namespace neuron::runtime
