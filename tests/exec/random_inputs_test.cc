// neuron-exec --random-inputs (tools/neuron-exec/random_tensors, random_words,
// random_values): reproducible per seed and draw length, narrow floats are
// exactly the rounding of the f32 draw, values in range and finite, and the
// draws look uniform.
#include "tools/neuron-exec/random_tensors.h"

#include <cmath>
#include <algorithm>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "lib/hlo/float_types.h"
#include "tools/neuron-exec/random_values.h"

namespace neuron::exec_tool {
namespace {

using hlo::ElementType;
using hlo::Shape;

const ElementType kFastNarrow[] = {ElementType::kBF16, ElementType::kF16, ElementType::kF8E4M3FN,
                                   ElementType::kF8E5M2};

// Every element type --random-inputs can fill.
std::vector<ElementType> AllArrayTypes() {
  return {ElementType::kPred,     ElementType::kS4,          ElementType::kS8,
          ElementType::kS16,      ElementType::kS32,         ElementType::kS64,
          ElementType::kU4,       ElementType::kU8,          ElementType::kU16,
          ElementType::kU32,      ElementType::kU64,         ElementType::kF16,
          ElementType::kF32,      ElementType::kBF16,        ElementType::kF64,
          ElementType::kF8E5M2,   ElementType::kF8E4M3,      ElementType::kF8E4M3FN,
          ElementType::kF8E3M4,   ElementType::kF8E5M2FNUZ,  ElementType::kF8E4M3FNUZ,
          ElementType::kF4E2M1FN, ElementType::kF8E8M0FNU,   ElementType::kF6E3M2FN,
          ElementType::kF6E2M3FN, ElementType::kF8E4M3B11FNUZ, ElementType::kC64,
          ElementType::kC128};
}

hlo::Literal Draw(ElementType type, int64_t n, uint64_t seed) {
  return RandomTensors(seed).Next(Shape::Array(type, {n}));
}

TEST(RandomTensorsTest, SameSeedSameValuesOtherSeedOtherValues) {
  for (ElementType type : AllArrayTypes()) {
    SCOPED_TRACE(hlo::ElementTypeName(type));
    // Not a multiple of the 16 lanes, so the tail is covered too.
    hlo::Literal a = Draw(type, 1001, 5), b = Draw(type, 1001, 5), c = Draw(type, 1001, 6);
    EXPECT_EQ(a.data(), b.data());
    EXPECT_NE(a.data(), c.data());
  }
}

// neuron-exec draws straight into device tensors: the same bytes as a
// literal drawn in the same place, and a skipped input moves the order on
// as drawing it would.
TEST(RandomTensorsTest, DrawingIntoATensorGivesTheLiteralsBytes) {
  for (ElementType type : AllArrayTypes()) {
    SCOPED_TRACE(hlo::ElementTypeName(type));
    const Shape shape = Shape::Array(type, {1001});
    RandomTensors drawn(9), written(9);
    drawn.Next(Shape::Array(ElementType::kF32, {5}));
    const hlo::Literal want = drawn.Next(shape);
    written.Skip(Shape::Array(ElementType::kF32, {5}));
    std::vector<uint8_t> got(want.data().size() + 1, 0xAB);
    written.NextInto(shape, got.data());
    EXPECT_TRUE(std::equal(want.data().begin(), want.data().end(), got.begin()));
    EXPECT_EQ(got.back(), 0xAB);  // nothing written past the tensor
  }
}

// Large tensors are drawn on several threads, each its own blocks of the
// stream: the bytes are the single-threaded draw's, to the last element.
TEST(RandomTensorsTest, LargeDrawsIntoATensorAreTheSameOnEveryThread) {
  for (ElementType type : {ElementType::kF32, ElementType::kBF16, ElementType::kF64, ElementType::kPred}) {
    SCOPED_TRACE(hlo::ElementTypeName(type));
    // Past the threaded threshold (2^22 words), not a whole block.
    const int64_t n = type == ElementType::kF64 ? 2'100'001 : 4'200'001;
    const Shape shape = Shape::Array(type, {n});
    RandomTensors drawn(5), written(5);
    const hlo::Literal want = drawn.Next(shape);
    std::vector<uint8_t> got(want.data().size() + 1, 0xAB);
    written.NextInto(shape, got.data());
    EXPECT_TRUE(std::equal(want.data().begin(), want.data().end(), got.begin()));
    EXPECT_EQ(got.back(), 0xAB);
  }
}

TEST(RandomTensorsTest, EachInputDrawsItsOwnValues) {
  RandomTensors random(3);
  hlo::Literal first = random.Next(Shape::Array(ElementType::kF32, {256}));
  hlo::Literal second = random.Next(Shape::Array(ElementType::kF32, {256}));
  EXPECT_NE(first.data(), second.data());
  // The second input's values do not depend on the first one's size.
  RandomTensors other(3);
  other.Next(Shape::Array(ElementType::kF32, {7}));
  EXPECT_EQ(other.Next(Shape::Array(ElementType::kF32, {256})).data(), second.data());
}

// Element i does not depend on how many are drawn: a shorter draw is a
// prefix of a longer one, across the stream's blocks of 65536 words and
// whatever the tail.
TEST(RandomTensorsTest, AShorterDrawIsAPrefixOfALongerOne) {
  const int64_t n = 5 * 65536 + 123;
  for (ElementType type : {ElementType::kF32, ElementType::kBF16, ElementType::kF8E5M2,
                           ElementType::kF64, ElementType::kC64, ElementType::kC128,
                           ElementType::kS64, ElementType::kPred, ElementType::kF8E3M4}) {
    SCOPED_TRACE(hlo::ElementTypeName(type));
    const hlo::Literal whole = Draw(type, n, 9);
    const int bytes = hlo::StorageBytes(type);
    for (int64_t m : {int64_t{1}, int64_t{17}, int64_t{65536 / 4 + 3}, int64_t{2 * 65536 + 5}}) {
      const hlo::Literal part = Draw(type, m, 9);
      ASSERT_EQ(part.data().size(), static_cast<size_t>(m * bytes));
      EXPECT_TRUE(std::equal(part.data().begin(), part.data().end(), whole.data().begin())) << m;
    }
  }
}

TEST(RandomTensorsTest, NarrowFloatsAreTheF32DrawRoundedToNearestEven) {
  const int64_t n = 3 * 65536 + 77;
  hlo::Literal wide = Draw(ElementType::kF32, n, 11);
  std::vector<ElementType> narrow(std::begin(kFastNarrow), std::end(kFastNarrow));
  narrow.insert(narrow.end(), {ElementType::kF8E4M3B11FNUZ, ElementType::kF8E3M4,
                               ElementType::kF4E2M1FN});
  for (ElementType type : narrow) {
    SCOPED_TRACE(hlo::ElementTypeName(type));
    hlo::Literal v = Draw(type, n, 11);
    int64_t mismatches = 0;
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t want = hlo::EncodeFloat(type, wide.GetDouble(i));
      uint64_t got = 0;
      std::memcpy(&got, v.data().data() + i * hlo::StorageBytes(type), hlo::StorageBytes(type));
      mismatches += got != want;
    }
    EXPECT_EQ(mismatches, 0);
  }
}

TEST(RandomTensorsTest, F32DrawsAreMultiplesOfTwoToTheMinus23InMinusOneToOne) {
  hlo::Literal v = Draw(ElementType::kF32, 100000, 1);
  for (int64_t i = 0; i < v.element_count(); ++i) {
    const double x = v.GetDouble(i);
    ASSERT_GE(x, -1.0);
    ASSERT_LT(x, 1.0);
    ASSERT_EQ(x * 8388608.0, std::floor(x * 8388608.0)) << x;
  }
}

// The bulk rounding against the reference conversion for every f32 the
// generator can produce (the multiples of 2^-23 in [-1, 1)) and 1 itself.
TEST(RandomValuesTest, RoundUnitF32MatchesEncodeFloatOnEveryPossibleDraw) {
  std::vector<float> all;
  all.reserve((1 << 24) + 1);
  for (int64_t k = -(1 << 23); k <= (1 << 23); ++k) all.push_back(static_cast<float>(k) * 0x1p-23f);
  std::vector<uint8_t> out(all.size() * 2);
  for (ElementType type : kFastNarrow) {
    SCOPED_TRACE(hlo::ElementTypeName(type));
    const int bytes = hlo::StorageBytes(type);
    RoundUnitF32(type, all.data(), out.data(), static_cast<int64_t>(all.size()));
    int64_t mismatches = 0;
    float first_bad = 0;
    for (size_t i = 0; i < all.size(); ++i) {
      uint64_t got = 0;
      std::memcpy(&got, out.data() + i * bytes, bytes);
      if (got != hlo::EncodeFloat(type, all[i]) && mismatches++ == 0) first_bad = all[i];
    }
    EXPECT_EQ(mismatches, 0) << "first at " << first_bad;
  }
}

TEST(RandomTensorsTest, EveryTypeStaysInRangeAndFinite) {
  for (ElementType type : AllArrayTypes()) {
    SCOPED_TRACE(hlo::ElementTypeName(type));
    hlo::Literal v = Draw(type, 20000, 4);
    std::vector<int64_t> seen(10, 0);
    for (int64_t i = 0; i < v.element_count(); ++i) {
      if (hlo::IsFloatingPoint(type) || hlo::IsComplex(type)) {
        const double x = v.GetDouble(i);
        ASSERT_TRUE(std::isfinite(x)) << i;
        ASSERT_LE(std::fabs(x), 1.0) << i;
        if (type == ElementType::kF8E8M0FNU) {
          ASSERT_GT(x, 0.0);
        }
        if (hlo::IsComplex(type)) {
          ASSERT_TRUE(std::isfinite(v.GetImag(i)));
          ASSERT_LE(std::fabs(v.GetImag(i)), 1.0);
        }
      } else {
        // s4 wraps 8 and 9 to -8 and -7, as it always has.
        const int64_t x = type == ElementType::kS4 ? v.GetInt(i) & 15 : v.GetInt(i);
        ASSERT_GE(x, 0);
        ASSERT_LT(x, type == ElementType::kPred ? 2 : 10);
        ++seen[x];
      }
    }
    if (!hlo::IsFloatingPoint(type) && !hlo::IsComplex(type)) {
      for (int d = 0; d < (type == ElementType::kPred ? 2 : 10); ++d) EXPECT_GT(seen[d], 0) << d;
    }
  }
}

TEST(RandomTensorsTest, TupleInputsGetRandomLeaves) {
  Shape tuple = Shape::Tuple({Shape::Array(ElementType::kF32, {64}),
                              Shape::Array(ElementType::kBF16, {64})});
  hlo::Literal v = RandomTensors(2).Next(tuple);
  ASSERT_EQ(v.elements().size(), 2u);
  EXPECT_NE(v.elements()[0].data(), std::vector<uint8_t>(256, 0));
  EXPECT_NE(v.elements()[1].data(), std::vector<uint8_t>(128, 0));
}

// Uniform on [-1, 1]: mean 0, variance 1/3; digits: mean 4.5, variance
// 8.25; pred: mean 1/2. Bounds are many standard errors wide.
TEST(RandomTensorsTest, LargeDrawsHaveTheDistributionsMeanAndVariance) {
  const int64_t n = 1 << 20;
  struct Want {
    ElementType type;
    double mean, variance;
  };
  for (Want w : {Want{ElementType::kF32, 0, 1.0 / 3}, Want{ElementType::kF64, 0, 1.0 / 3},
                 Want{ElementType::kBF16, 0, 1.0 / 3}, Want{ElementType::kF16, 0, 1.0 / 3},
                 Want{ElementType::kF8E4M3FN, 0, 1.0 / 3}, Want{ElementType::kF8E5M2, 0, 1.0 / 3},
                 Want{ElementType::kS32, 4.5, 8.25}, Want{ElementType::kU8, 4.5, 8.25},
                 Want{ElementType::kPred, 0.5, 0.25}}) {
    SCOPED_TRACE(hlo::ElementTypeName(w.type));
    hlo::Literal v = Draw(w.type, n, 21);
    double sum = 0, sum2 = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double x = hlo::IsFloatingPoint(w.type) ? v.GetDouble(i) : v.GetInt(i);
      sum += x;
      sum2 += x * x;
    }
    const double mean = sum / n, variance = sum2 / n - mean * mean;
    // Standard error of the mean: sqrt(variance / n), about 0.0006 for
    // the floats; allow 10 of them.
    EXPECT_NEAR(mean, w.mean, 10 * std::sqrt(w.variance / n));
    EXPECT_NEAR(variance, w.variance, 0.01 * w.variance + 0.005);
  }
}

// The values for a seed are part of the interface (a rerun with --seed N
// must see the same inputs); a change to the generator shows here.
TEST(RandomTensorsTest, TheFirstValuesOfSeedZeroArePinned) {
  hlo::Literal f = RandomTensors(0).Next(Shape::Array(ElementType::kF32, {4}));
  uint32_t got[4];
  std::memcpy(got, f.data().data(), sizeof got);
  EXPECT_EQ(got[0], 0x3e4ca9a0u);
  EXPECT_EQ(got[1], 0xbd30a5a0u);
  EXPECT_EQ(got[2], 0xbf2fd4d2u);
  EXPECT_EQ(got[3], 0x3f0dfb8cu);
}

}  // namespace
}  // namespace neuron::exec_tool
