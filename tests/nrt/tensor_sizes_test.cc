// Sizes a tensor cannot have: every placement refuses a size whose rounding
// to the allocation granule wraps (SIZE_MAX-62 ... SIZE_MAX), so no tensor
// reports a size larger than its storage; reads, writes, memset, copies,
// slices and batches whose offset + size wraps past 2^64 change nothing.
#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "nrt/nrt.h"
#include "tests/nrt/nrt_test_env.h"

namespace {

class TensorSizesTest : public neuron::testing::NrtTestEnv {
 protected:
  void SetUp() override {
    StartEnv();
    ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS) << nrt_get_last_error();
  }
  void TearDown() override { EndEnv(); }
};

constexpr nrt_tensor_placement_t kPlacements[] = {
    NRT_TENSOR_PLACEMENT_DEVICE, NRT_TENSOR_PLACEMENT_HOST, NRT_TENSOR_PLACEMENT_VIRTUAL};

TEST_F(TensorSizesTest, EveryPlacementRefusesSizesThatWrapWhenRounded) {
  for (nrt_tensor_placement_t placement : kPlacements) {
    for (size_t size = SIZE_MAX - 62; size != 0; ++size) {
      nrt_tensor_t* t = nullptr;
      const NRT_STATUS s = nrt_tensor_allocate(placement, 0, size, "huge", &t);
      EXPECT_TRUE(s == NRT_RESOURCE || s == NRT_INVALID)
          << "placement " << placement << " size " << size << ": status " << s;
      EXPECT_EQ(t, nullptr) << "placement " << placement << " size " << size;
      nrt_tensor_free(&t);
    }
  }
}

// A 64-byte tensor per placement, and every operation whose range wraps.
TEST_F(TensorSizesTest, WrappingRangesChangeNothing) {
  for (nrt_tensor_placement_t placement : kPlacements) {
    nrt_tensor_t *t = nullptr, *other = nullptr, *slice = nullptr;
    ASSERT_EQ(nrt_tensor_allocate(placement, 0, 64, "t", &t), NRT_SUCCESS);
    ASSERT_EQ(nrt_tensor_allocate(placement, 0, 64, "other", &other), NRT_SUCCESS);
    std::vector<char> pattern(64, 'p'), buf(64, 'b');
    ASSERT_EQ(nrt_tensor_write(t, pattern.data(), 0, pattern.size()), NRT_SUCCESS);
    const size_t wrap = SIZE_MAX - 15;  // 16 + wrap == 0 (mod 2^64)

    EXPECT_EQ(nrt_tensor_write(t, buf.data(), 16, wrap), NRT_INVALID);
    EXPECT_EQ(nrt_tensor_read(t, buf.data(), 16, wrap), NRT_INVALID);
    EXPECT_EQ(nrt_tensor_memset(t, 16, 0, wrap), NRT_INVALID);
    EXPECT_EQ(nrt_tensor_copy(t, 16, other, 0, wrap), NRT_INVALID);
    EXPECT_EQ(nrt_tensor_copy(other, 0, t, 16, wrap), NRT_INVALID);
    EXPECT_EQ(nrt_tensor_allocate_slice(t, 16, wrap, "s", &slice), NRT_INVALID);
    EXPECT_EQ(slice, nullptr);
    nrt_tensor_batch_op_t op{16, wrap, buf.data()};
    nrt_tensor_batch_t batch{t, &op, 1};
    EXPECT_EQ(nrt_tensor_write_batch(&batch, 1, false), NRT_INVALID);
    EXPECT_EQ(nrt_tensor_read_batch(&batch, 1, false), NRT_INVALID);

    // A slice's own range is checked against the slice, not its owner.
    ASSERT_EQ(nrt_tensor_allocate_slice(t, 32, 16, "s", &slice), NRT_SUCCESS);
    EXPECT_EQ(nrt_tensor_write(slice, buf.data(), 8, SIZE_MAX - 7), NRT_INVALID);
    EXPECT_EQ(nrt_tensor_write(slice, buf.data(), 8, 16), NRT_INVALID);

    std::vector<char> got(64);
    ASSERT_EQ(nrt_tensor_read(t, got.data(), 0, got.size()), NRT_SUCCESS);
    EXPECT_EQ(got, pattern) << "placement " << placement;
    EXPECT_EQ(nrt_tensor_get_size(t), 64u);
    nrt_tensor_free(&slice);
    nrt_tensor_free(&other);
    nrt_tensor_free(&t);
  }
}

}  // namespace
