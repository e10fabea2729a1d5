// The skinny bf16 product against a double-precision reference, in both
// layouts, for 1 to 16 rows (the register blocks of 8, 4, 2 and 1), at
// lengths around the vector size, on one and two threads.
#include "lib/kernels/bf16_skinny_product.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace neuron::kernels {
namespace {

uint16_t ToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);  // the test values are exact in bf16
}

TEST(Bf16SkinnyProductTest, BothLayoutsMatchTheReference) {
  for (int64_t m : {1, 3, 11, 16}) {
    for (int64_t k : {1, 7, 8, 33, 300}) {
      for (int64_t n : {1, 17, 1000}) {
        std::vector<float> x(m * k);
        std::vector<uint16_t> w_kn(k * n), w_nk(k * n);
        std::vector<double> want(m * n, 0.0);
        for (int64_t i = 0; i < m * k; ++i) x[i] = static_cast<float>((i % 9) - 4) * 0.5f;
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = 0; j < n; ++j) {
            const float v = static_cast<float>(((i * 31 + j * 7) % 13) - 6) * 0.25f;
            w_kn[i * n + j] = ToBf16(v);
            w_nk[j * k + i] = ToBf16(v);
            for (int64_t r = 0; r < m; ++r) want[r * n + j] += static_cast<double>(x[r * k + i]) * v;
          }
        for (int threads : {1, 2}) {
          std::vector<float> y_kn(m * n, -1.0f), y_nk(m * n, -1.0f);
          Bf16SkinnyProduct(x.data(), m, w_kn.data(), k, n, false, y_kn.data(), threads);
          Bf16SkinnyProduct(x.data(), m, w_nk.data(), k, n, true, y_nk.data(), threads);
          for (int64_t j = 0; j < m * n; ++j) {
            // Multiples of 1/8, far below 2^24 / 8: exact in f32 in any order.
            ASSERT_EQ(y_kn[j], want[j]) << "[k, n] m=" << m << " k=" << k << " n=" << n << " at " << j << ", "
                                        << threads << " threads";
            ASSERT_EQ(y_nk[j], want[j]) << "[n, k] m=" << m << " k=" << k << " n=" << n << " at " << j << ", "
                                        << threads << " threads";
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace neuron::kernels
