// BlockedCopy against oneDNN's own reorder: the same bytes, padding
// included, for the plain layouts frameworks store kernels in and the
// blocked ones oneDNN's convolutions ask for.
#include "lib/kernels/dnnl_blocked_copy.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/kernels/dnnl_library.h"

namespace neuron::kernels {
namespace {

struct Case {
  std::string what;
  std::vector<int64_t> dims, plain_strides;  // logical dims, strides of the plain source
  dnnl_format_tag_t blocked;
  bool expect_plan;
};

// Strides of a dense layout whose dims, outermost first, are `order`.
std::vector<int64_t> DenseStrides(const std::vector<int64_t>& dims, const std::vector<int>& order) {
  std::vector<int64_t> strides(dims.size());
  int64_t s = 1;
  for (int k = static_cast<int>(order.size()) - 1; k >= 0; --k) {
    strides[order[k]] = s;
    s *= dims[order[k]];
  }
  return strides;
}

TEST(BlockedCopyTest, MatchesOneDnnsReorderByteForByte) {
  const DnnlApi* api = Dnnl();
  if (api == nullptr) GTEST_SKIP() << "libdnnl.so.2 is not installed (or a sanitizer build)";
  const std::vector<int64_t> oihw = {20, 12, 3, 3}, goihw = {4, 6, 2, 3, 3};
  const Case cases[] = {
      // HWIO (JAX, Keras) into the AVX2 and AVX-512 weight layouts: O and I
      // padded to whole blocks.
      {"HWIO -> ABcd8b8a", oihw, DenseStrides(oihw, {2, 3, 1, 0}), dnnl_ABcd8b8a, true},
      {"HWIO -> ABcd16b16a", oihw, DenseStrides(oihw, {2, 3, 1, 0}), dnnl_ABcd16b16a, true},
      {"HWIO -> Acdb8a", oihw, DenseStrides(oihw, {2, 3, 1, 0}), dnnl_Acdb8a, true},
      // Grouped HWIO: [G, O/G, I/G, KH, KW] with G outermost of O.
      {"grouped HWIO -> aBCde8c8b", goihw, DenseStrides(goihw, {3, 4, 2, 0, 1}), dnnl_aBCde8c8b, true},
      // OIHW (PyTorch): runs of one element, left to oneDNN.
      {"OIHW -> ABcd8b8a", oihw, DenseStrides(oihw, {0, 1, 2, 3}), dnnl_ABcd8b8a, false},
  };
  for (const Case& c : cases) {
    const int nd = static_cast<int>(c.dims.size());
    dnnl_dims_t dims = {}, strides = {};
    for (int d = 0; d < nd; ++d) {
      dims[d] = c.dims[d];
      strides[d] = c.plain_strides[d];
    }
    dnnl_memory_desc_t plain, blocked;
    ASSERT_EQ(api->memory_desc_init_by_strides(&plain, nd, dims, dnnl_f32, strides), dnnl_success) << c.what;
    ASSERT_EQ(api->memory_desc_init_by_tag(&blocked, nd, dims, dnnl_f32, c.blocked), dnnl_success) << c.what;
    const size_t plain_bytes = api->memory_desc_get_size(&plain), blocked_bytes = api->memory_desc_get_size(&blocked);
    std::vector<float> src(plain_bytes / 4);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) + 0.5f;
    std::vector<float> want(blocked_bytes / 4, -1.0f), got(blocked_bytes / 4, -2.0f);

    dnnl_primitive_desc_t pd = nullptr;
    ASSERT_EQ(api->reorder_primitive_desc_create(&pd, &plain, api->engine, &blocked, api->engine, nullptr),
              dnnl_success)
        << c.what;
    dnnl_primitive_t reorder = nullptr;
    ASSERT_EQ(api->primitive_create(&reorder, pd), dnnl_success) << c.what;
    api->primitive_desc_destroy(pd);
    const DnnlArg args[2] = {{DNNL_ARG_FROM, &plain, src.data()}, {DNNL_ARG_TO, &blocked, want.data()}};
    ASSERT_TRUE(DnnlExecute(reorder, args, 2, 1)) << c.what;
    api->primitive_destroy(reorder);

    const std::optional<BlockedCopy> copy = BlockedCopy::Plan(plain, blocked, 4, blocked_bytes);
    ASSERT_EQ(copy.has_value(), c.expect_plan) << c.what;
    if (!copy) continue;
    for (int threads : {1, 2}) {
      std::fill(got.begin(), got.end(), -2.0f);
      copy->Run(src.data(), got.data(), threads);
      ASSERT_EQ(std::memcmp(got.data(), want.data(), blocked_bytes), 0) << c.what << ", " << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace neuron::kernels
