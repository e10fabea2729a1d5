#include "lib/support/checked_size.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace neuron {
namespace {

TEST(CheckedSizeTest, AddFitsOrFails) {
  EXPECT_EQ(CheckedAdd(2, 3), 5u);
  EXPECT_EQ(CheckedAdd(UINT64_MAX - 1, 1), UINT64_MAX);
  EXPECT_EQ(CheckedAdd(UINT64_MAX, 1), std::nullopt);
  EXPECT_EQ(CheckedAdd(UINT64_MAX - 62, 63), std::nullopt);
}

TEST(CheckedSizeTest, MulFitsOrFails) {
  EXPECT_EQ(CheckedMul(0, UINT64_MAX), 0u);
  EXPECT_EQ(CheckedMul(uint64_t{1} << 32, (uint64_t{1} << 32) - 1), UINT64_MAX - (uint64_t{1} << 32) + 1);
  EXPECT_EQ(CheckedMul(uint64_t{1} << 32, uint64_t{1} << 32), std::nullopt);
  EXPECT_EQ(CheckedMul(3, UINT64_MAX / 2), std::nullopt);
}

TEST(CheckedSizeTest, RoundUpNeverWraps) {
  EXPECT_EQ(CheckedRoundUp(0, 64), 0u);
  EXPECT_EQ(CheckedRoundUp(1, 64), 64u);
  EXPECT_EQ(CheckedRoundUp(64, 64), 64u);
  EXPECT_EQ(CheckedRoundUp(65, 64), 128u);
  EXPECT_EQ(CheckedRoundUp(UINT64_MAX - 63, 64), UINT64_MAX - 63);
  // The 63 sizes whose rounding wraps to 0 with (size + 63) / 64 * 64.
  for (uint64_t size = UINT64_MAX - 62; size != 0; ++size) {
    EXPECT_EQ(CheckedRoundUp(size, 64), std::nullopt) << size;
  }
  EXPECT_EQ(CheckedRoundUp(UINT64_MAX, 1), UINT64_MAX);
}

TEST(CheckedSizeTest, RangeWithinRejectsWrappingEnds) {
  EXPECT_TRUE(RangeWithin(0, 0, 0));
  EXPECT_TRUE(RangeWithin(60, 4, 64));
  EXPECT_TRUE(RangeWithin(64, 0, 64));
  EXPECT_FALSE(RangeWithin(61, 4, 64));
  EXPECT_FALSE(RangeWithin(65, 0, 64));
  EXPECT_FALSE(RangeWithin(16, UINT64_MAX - 15, 64));  // end wraps to 0
  EXPECT_FALSE(RangeWithin(UINT64_MAX, 2, UINT64_MAX));
}

}  // namespace
}  // namespace neuron
