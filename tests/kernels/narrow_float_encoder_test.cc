// The integer f8/f6/f4 encoder against hlo::EncodeFloat, the reference it
// replaces on hot paths: a spread of every f32 bit pattern, and for each
// format every value, every midpoint between neighbours and the f32
// values one step either side of them (where ties-to-even decides).
#include "lib/kernels/narrow_float_encoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "lib/hlo/float_types.h"

namespace neuron::kernels {
namespace {

using hlo::ElementType;

const ElementType kTypes[] = {
    ElementType::kF8E5M2,        ElementType::kF8E4M3,     ElementType::kF8E4M3FN,
    ElementType::kF8E4M3B11FNUZ, ElementType::kF8E3M4,     ElementType::kF8E5M2FNUZ,
    ElementType::kF8E4M3FNUZ,    ElementType::kF4E2M1FN,   ElementType::kF6E3M2FN,
    ElementType::kF6E2M3FN,
};

float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Counts (and reports the first few) values where the two encoders differ.
int Mismatches(ElementType type, const std::vector<float>& values) {
  int bad = 0;
  std::vector<uint8_t> bulk(values.size());
  EncodeNarrowFloat(type, values.data(), static_cast<int64_t>(values.size()), bulk.data());
  for (size_t i = 0; i < values.size(); ++i) {
    const uint8_t want = static_cast<uint8_t>(hlo::EncodeFloat(type, values[i]));
    const uint8_t one = EncodeNarrowFloat(type, values[i]);
    if (one != want || bulk[i] != want) {
      if (++bad <= 5)
        ADD_FAILURE() << "type " << static_cast<int>(type) << " value " << values[i] << " got "
                      << int{one} << "/" << int{bulk[i]} << " want " << int{want};
    }
  }
  return bad;
}

TEST(NarrowFloatEncoder, CoversTheSmallFloatsOnly) {
  for (ElementType t : kTypes) EXPECT_TRUE(HasNarrowFloatEncoder(t)) << static_cast<int>(t);
  EXPECT_FALSE(HasNarrowFloatEncoder(ElementType::kF8E8M0FNU));
  EXPECT_FALSE(HasNarrowFloatEncoder(ElementType::kBF16));
  EXPECT_FALSE(HasNarrowFloatEncoder(ElementType::kF16));
  EXPECT_FALSE(HasNarrowFloatEncoder(ElementType::kF32));
  EXPECT_FALSE(HasNarrowFloatEncoder(ElementType::kS8));
}

TEST(NarrowFloatEncoder, MatchesEncodeFloatAcrossF32) {
  // Every 997th bit pattern (4.3 million values, both signs, NaNs, infs,
  // subnormals) plus the specials themselves.
  std::vector<float> values;
  for (uint64_t u = 0; u <= 0xffffffffull; u += 997) values.push_back(FromBits(static_cast<uint32_t>(u)));
  for (float v : {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::min()})
    values.push_back(v);
  for (ElementType t : kTypes) EXPECT_EQ(Mismatches(t, values), 0) << static_cast<int>(t);
}

TEST(NarrowFloatEncoder, MatchesEncodeFloatAtEveryTie) {
  for (ElementType t : kTypes) {
    const int bits = hlo::BitWidth(t);
    std::vector<double> finite;
    for (uint32_t c = 0; c < (1u << bits); ++c) {
      const double v = hlo::DecodeFloat(t, c);
      if (std::isfinite(v) && v >= 0) finite.push_back(v);
    }
    std::sort(finite.begin(), finite.end());
    std::vector<float> values;
    auto around = [&](double v) {
      const float f = static_cast<float>(v);
      for (float x : {f, std::nextafter(f, 0.0f), std::nextafter(f, 1e30f)}) {
        values.push_back(x);
        values.push_back(-x);
      }
    };
    for (size_t i = 0; i < finite.size(); ++i) {
      around(finite[i]);
      // Midpoints between neighbours, and past the largest value (where
      // rounding turns into overflow).
      const double next = i + 1 < finite.size() ? finite[i + 1]
                                                : finite[i] + (finite[i] - finite[i - 1]);
      around((finite[i] + next) / 2);
      around(next);
    }
    EXPECT_EQ(Mismatches(t, values), 0) << static_cast<int>(t);
  }
}

}  // namespace
}  // namespace neuron::kernels
