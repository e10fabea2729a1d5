// Pad against its definition: every input element i lands at
// low + i * (interior + 1) per dim unless that falls outside the output
// (negative padding crops), and everything else is the padding value.
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "lib/kernels/data_movement.h"

namespace neuron::kernels {
namespace {

using ET = hlo::ElementType;

std::vector<int32_t> ReferencePad(const std::vector<int32_t>& in, const std::vector<int64_t>& dims,
                                  const std::vector<hlo::PaddingDim>& pad, const std::vector<int64_t>& out_dims,
                                  int32_t value) {
  int64_t out_count = 1;
  for (int64_t d : out_dims) out_count *= d;
  std::vector<int32_t> out(out_count, value);
  const int64_t r = static_cast<int64_t>(dims.size());
  std::vector<int64_t> idx(r, 0);
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t o = 0;
    bool inside = true;
    for (int64_t d = 0; d < r; ++d) {
      const int64_t p = pad[d].low + idx[d] * (pad[d].interior + 1);
      inside = inside && p >= 0 && p < out_dims[d];
      o = o * out_dims[d] + p;
    }
    if (inside) out[o] = in[i];
    for (int64_t d = r - 1; d >= 0; --d) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

TEST(PadTest, RandomPaddingsCropsAndInteriorsMatchTheDefinition) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 400; ++trial) {
    const int rank = pick(1, 3);
    std::vector<int64_t> dims, out_dims;
    std::vector<hlo::PaddingDim> pad;
    bool empty = false;
    for (int d = 0; d < rank; ++d) {
      const int64_t n = pick(1, 6);
      hlo::PaddingDim p;
      p.low = pick(-3, 3);
      p.high = pick(-3, 3);
      p.interior = pick(0, 2);
      const int64_t size = p.low + p.high + n + (n - 1) * p.interior;
      if (size < 0) {
        empty = true;
        break;
      }
      dims.push_back(n);
      out_dims.push_back(size);
      pad.push_back(p);
    }
    if (empty) continue;
    Buf in = Buf::Of(ET::kS32, dims), out = Buf::Of(ET::kS32, out_dims), value = Buf::Of(ET::kS32, {});
    std::vector<int32_t> in_v(in.count), out_v(out.count + 1, 12345);
    for (int64_t i = 0; i < in.count; ++i) in_v[i] = static_cast<int32_t>(i + 1);
    int32_t v = -9;
    in.data = reinterpret_cast<uint8_t*>(in_v.data());
    out.data = reinterpret_cast<uint8_t*>(out_v.data());
    value.data = reinterpret_cast<uint8_t*>(&v);
    Pad(in, value, pad, out);
    const std::vector<int32_t> want = ReferencePad(in_v, dims, pad, out_dims, v);
    for (int64_t i = 0; i < out.count; ++i) ASSERT_EQ(out_v[i], want[i]) << "trial " << trial << " element " << i;
    EXPECT_EQ(out_v[out.count], 12345) << "wrote past the output, trial " << trial;
  }
}

}  // namespace
}  // namespace neuron::kernels
