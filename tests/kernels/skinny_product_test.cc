// The skinny product against a double-precision reference, for every weight
// type it reads (bf16, f16, f8e4m3fn, f8e5m2), in both layouts, for 1 to 16
// rows (the register blocks of 8, 4, 2 and 1), at lengths around the vector
// size, on one and two threads; and fp8's NaN.
#include "lib/kernels/skinny_product.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/kernels/element_convert.h"
#include "tests/kernels/kernel_test_util.h"

namespace neuron::kernels {
namespace {

using ET = hlo::ElementType;

TEST(SkinnyProductTest, EveryWeightTypeInBothLayoutsMatchesTheReference) {
  for (ET type : {ET::kBF16, ET::kF16, ET::kF8E4M3FN, ET::kF8E5M2}) {
    ASSERT_TRUE(IsSkinnyWeightType(type));
    const int bytes = hlo::StorageBytes(type);
    for (int64_t m : {1, 3, 11, 16}) {
      for (int64_t k : {1, 7, 8, 33, 300}) {
        for (int64_t n : {1, 17, 1000}) {
          std::vector<float> x(m * k);
          std::vector<uint8_t> w_kn(k * n * bytes), w_nk(k * n * bytes);
          std::vector<double> want(m * n, 0.0);
          for (int64_t i = 0; i < m * k; ++i) x[i] = static_cast<float>((i % 9) - 4) * 0.5f;
          for (int64_t i = 0; i < k; ++i)
            for (int64_t j = 0; j < n; ++j) {
              // Multiples of 1/4 up to 1.5: exact in every weight type.
              const double v = static_cast<double>(((i * 31 + j * 7) % 13) - 6) * 0.25;
              StoreDouble(type, w_kn.data(), i * n + j, v);
              StoreDouble(type, w_nk.data(), j * k + i, v);
              for (int64_t r = 0; r < m; ++r) want[r * n + j] += static_cast<double>(x[r * k + i]) * v;
            }
          for (int threads : {1, 2}) {
            std::vector<float> y_kn(m * n, -1.0f), y_nk(m * n, -1.0f);
            SkinnyProduct(x.data(), m, w_kn.data(), type, k, n, false, y_kn.data(), threads);
            SkinnyProduct(x.data(), m, w_nk.data(), type, k, n, true, y_nk.data(), threads);
            const std::string where = " type " + std::to_string(static_cast<int>(type)) + " m=" + std::to_string(m) +
                                      " k=" + std::to_string(k) + " n=" + std::to_string(n) + ", " +
                                      std::to_string(threads) + " threads";
            for (int64_t j = 0; j < m * n; ++j) {
              // Multiples of 1/8, far below 2^24 / 8: exact in f32 in any order.
              ASSERT_EQ(y_kn[j], want[j]) << "[k, n] at " << j << where;
              ASSERT_EQ(y_nk[j], want[j]) << "[n, k] at " << j << where;
            }
          }
        }
      }
    }
  }
}

TEST(SkinnyProductTest, Fp8WidensEveryValueExactly) {
  // Every f8 byte times 1 (one row, one weight per output): the widened
  // value is the converter's, NaN where the type has it, denormals included.
  for (ET type : {ET::kF8E4M3FN, ET::kF8E5M2}) {
    for (bool rows_are_outputs : {false, true}) {
      const float one = 1.0f;
      std::vector<uint8_t> w(256);
      for (int b = 0; b < 256; ++b) w[b] = static_cast<uint8_t>(b);
      std::vector<float> y(256);
      // k = 1: [1, 256] and [256, 1] hold the same bytes.
      SkinnyProduct(&one, 1, w.data(), type, 1, 256, rows_are_outputs, y.data(), 1);
      for (int b = 0; b < 256; ++b) {
        const double want = LoadDouble(type, w.data(), b);
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(y[b])) << "byte " << b;
        } else {
          EXPECT_EQ(y[b], want) << "byte " << b << " type " << static_cast<int>(type);
        }
      }
    }
  }
}


TEST(SkinnyProductTest, Fp8WidensEveryValueExactlyInTheVectorPath) {
  // Each output's row of W is one byte then seven zeros, and x is all
  // ones: a whole vector of weights, widened in registers, makes the sum
  // (the k = 1 test above reaches only the scalar tail for [n, k]).
  for (ET type : {ET::kF8E4M3FN, ET::kF8E5M2}) {
    constexpr int64_t k = 8;
    std::vector<float> x(k, 1.0f);
    std::vector<uint8_t> w(256 * k, 0);
    for (int b = 0; b < 256; ++b) w[b * k] = static_cast<uint8_t>(b);
    std::vector<float> y(256);
    SkinnyProduct(x.data(), 1, w.data(), type, k, 256, true, y.data(), 1);
    for (int b = 0; b < 256; ++b) {
      const double want = LoadDouble(type, w.data(), b * k);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(y[b])) << "byte " << b;
      } else {
        EXPECT_EQ(y[b], want) << "byte " << b << " type " << static_cast<int>(type);
      }
    }
  }
}

TEST(SkinnyProductTest, DotsOfActivationsAndFp8WeightsRunAsStored) {
  // What dot-convert-folding leaves: bf16 rows times f8e4m3fn weights, in
  // both weight layouts, few rows (the skinny product) and many (the
  // general path), against a double reference.
  for (int64_t rows : {1, 5, 40}) {
    for (bool rows_are_outputs : {false, true}) {
      constexpr int64_t k = 24, n = 40;
      const std::string w_shape = rows_are_outputs ? "[40,24]" : "[24,40]";
      const std::string text = "HloModule m\nENTRY e {\n  x = bf16[" + std::to_string(rows) + ",24] parameter(0)\n" +
                               "  w = f8e4m3fn" + w_shape + " parameter(1)\n  ROOT d = f32[" + std::to_string(rows) +
                               ",40] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={" +
                               (rows_are_outputs ? "1" : "0") + "}\n}\n";
      std::vector<double> xv(rows * k), wv(k * n), wstored(k * n);
      for (int64_t i = 0; i < rows * k; ++i) xv[i] = static_cast<double>((i % 7) - 3) * 0.5;
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const double v = static_cast<double>(((i * 5 + j * 3) % 11) - 5) * 0.25;
          wv[i * n + j] = v;
          wstored[rows_are_outputs ? j * k + i : i * n + j] = v;
        }
      std::vector<Tensor> in;
      in.push_back(testing::MakeTensor(ET::kBF16, {rows, k}, xv));
      in.push_back(testing::MakeTensor(ET::kF8E4M3FN, rows_are_outputs ? std::vector<int64_t>{n, k}
                                                                       : std::vector<int64_t>{k, n}, wstored));
      auto out = testing::RunText(text, in);
      ASSERT_TRUE(out.ok()) << out.status();
      const std::vector<double> got = testing::Values((*out)[0]);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < n; ++j) {
          double want = 0;
          for (int64_t i = 0; i < k; ++i) want += xv[r * k + i] * wv[i * n + j];
          ASSERT_EQ(got[r * n + j], want) << "rows " << rows << " at " << r << "," << j;
        }
    }
  }
}

}  // namespace
}  // namespace neuron::kernels
