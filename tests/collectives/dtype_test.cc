// The reduction kernels and conversions against double arithmetic.
#include "lib/collectives/dtype.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace neuron::collectives {
namespace {

TEST(Dtype, NamesRoundTrip) {
  for (DataType t : kAllDataTypes) EXPECT_EQ(ParseDataType(DataTypeName(t)), t);
  EXPECT_EQ(ParseDataType("f32"), DataType::kF32);
  EXPECT_EQ(ParseDataType("bfloat16"), DataType::kBF16);
  EXPECT_FALSE(ParseDataType("fp8").has_value());
  for (ReduceOp op : kAllReduceOps) EXPECT_EQ(ParseReduceOp(ReduceOpName(op)), op);
  EXPECT_FALSE(ParseReduceOp("avg").has_value());
}

TEST(Dtype, HalfAndBf16Conversions) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f}) {
    EXPECT_EQ(HalfToFloat(FloatToHalf(f)), f) << f;
  }
  EXPECT_TRUE(std::isinf(HalfToFloat(FloatToHalf(70000.0f))));
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(NAN))));
  EXPECT_EQ(HalfToFloat(FloatToHalf(1.00048828125f)), 1.0f);  // tie to even
  for (float f : {0.0f, 1.0f, -3.0f, 256.0f, 0x1p100f}) {
    EXPECT_EQ(BF16ToFloat(FloatToBF16(f)), f) << f;
  }
  EXPECT_EQ(BF16ToFloat(FloatToBF16(1.00390625f)), 1.0f);  // tie to even
  EXPECT_TRUE(std::isnan(BF16ToFloat(FloatToBF16(NAN))));
}

double Ref(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::kSum: return a + b;
    case ReduceOp::kProd: return a * b;
    case ReduceOp::kMax: return std::max(a, b);
    case ReduceOp::kMin: return std::min(a, b);
  }
  return 0;
}

TEST(Dtype, ReductionsMatchDoubleArithmetic) {
  std::mt19937 rng(7);
  for (DataType t : kAllDataTypes) {
    for (ReduceOp op : kAllReduceOps) {
      for (size_t n : {0, 1, 7, 8, 33, 1000}) {
        std::vector<char> a(n * 8 + 8), b(n * 8 + 8), d(n * 8 + 8);
        for (size_t i = 0; i < n; ++i) {
          StoreFromDouble(a.data(), i, t, static_cast<double>(rng() % 11));
          StoreFromDouble(b.data(), i, t, static_cast<double>(rng() % 11));
        }
        Reduce2(d.data(), a.data(), b.data(), n, t, op);
        for (size_t i = 0; i < n; ++i) {
          const double want = Ref(op, LoadAsDouble(a.data(), i, t), LoadAsDouble(b.data(), i, t));
          ASSERT_EQ(LoadAsDouble(d.data(), i, t), want)
              << DataTypeName(t) << " " << ReduceOpName(op) << " [" << i << "]";
        }
        ReduceInto(a.data(), b.data(), n, t, op);
        EXPECT_EQ(std::memcmp(a.data(), d.data(), n * DataTypeSize(t)), 0);
      }
    }
  }
}

TEST(Dtype, IntegerOverflowWraps) {
  int8_t a[2] = {127, -128}, b[2] = {1, -1};
  ReduceInto(a, b, 2, DataType::kS8, ReduceOp::kSum);
  EXPECT_EQ(a[0], -128);
  EXPECT_EQ(a[1], 127);
  uint16_t e = 65535, f = 65535;  // promoted to int, this would overflow
  ReduceInto(&e, &f, 1, DataType::kU16, ReduceOp::kProd);
  EXPECT_EQ(e, 1);
  int32_t c = 1 << 30, d = 4;
  ReduceInto(&c, &d, 1, DataType::kS32, ReduceOp::kProd);
  EXPECT_EQ(c, 0);
}

}  // namespace
}  // namespace neuron::collectives
