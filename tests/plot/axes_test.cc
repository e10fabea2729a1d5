// Axis ranges: whole decades, whole doublings, room around one value.
#include "lib/plot/axes.h"

#include "gtest/gtest.h"

namespace neuron::plot {
namespace {

TEST(LogAxisFor, SpansWholeDecadesAroundThePositiveValues) {
  const Axis a = LogAxisFor({0.3, 42, 0, -5});
  EXPECT_TRUE(a.log);
  EXPECT_DOUBLE_EQ(a.lo, 0.1);
  EXPECT_DOUBLE_EQ(a.hi, 100);
  EXPECT_FALSE(a.Shows(0));
  EXPECT_DOUBLE_EQ(a.Map(100), 2);
}

TEST(LogAxisFor, OneValueOnADecadeStillGetsADecade) {
  const Axis a = LogAxisFor({10});
  EXPECT_DOUBLE_EQ(a.lo, 10);
  EXPECT_DOUBLE_EQ(a.hi, 100);
}

TEST(LogAxisFor, NoPositiveValueGivesOneToTen) {
  const Axis a = LogAxisFor({0, 0});
  EXPECT_DOUBLE_EQ(a.lo, 1);
  EXPECT_DOUBLE_EQ(a.hi, 10);
}

TEST(ByteAxisFor, RoundsToPowersOfTwo) {
  const Axis a = ByteAxisFor({1000, 3 << 20});
  EXPECT_EQ(a.ticks, Ticks::kBytes);
  EXPECT_DOUBLE_EQ(a.lo, 512);
  EXPECT_DOUBLE_EQ(a.hi, 4 << 20);
}

TEST(ByteAxisFor, ASingleSizeGetsADoublingEitherSide) {
  const Axis a = ByteAxisFor({32 << 20});
  EXPECT_DOUBLE_EQ(a.lo, 16 << 20);
  EXPECT_DOUBLE_EQ(a.hi, 64 << 20);
}

TEST(TightLogAxisFor, StaysCloseToTheValues) {
  const Axis a = TightLogAxisFor({1.6, 27});
  EXPECT_TRUE(a.log);
  EXPECT_EQ(a.ticks, Ticks::kOneTwoFive);
  EXPECT_NEAR(a.lo, 1.6 / 1.1, 1e-12);
  EXPECT_NEAR(a.hi, 27 * 1.1, 1e-12);
}

TEST(LinearAxisFor, PadsBothSides) {
  const Axis a = LinearAxisFor({10, 20});
  EXPECT_FALSE(a.log);
  EXPECT_DOUBLE_EQ(a.lo, 9.5);
  EXPECT_DOUBLE_EQ(a.hi, 20.5);
}

TEST(PlotText, DoublesPlplotsEscapeCharacter) {
  EXPECT_EQ(PlotText("run #2"), "run ##2");
  EXPECT_EQ(PlotText("plain"), "plain");
}

}  // namespace
}  // namespace neuron::plot
