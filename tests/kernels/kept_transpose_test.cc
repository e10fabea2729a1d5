// KeptTranspose: when a transpose is kept (a second sight of the same
// contents), that it is the transpose, and that a new version, an unknown
// one or other memory drops it.
#include "lib/kernels/kept_transpose.h"

#include <vector>

#include "gtest/gtest.h"
#include "lib/support/host_memory.h"

namespace neuron::kernels {
namespace {

std::vector<uint16_t> Numbered(size_t n, uint16_t first) {
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint16_t>(first + i * 7);
  return v;
}

TEST(KeptTransposeTest, KeptFromTheSecondSightOfTheSameContents) {
  if (HostMemoryAvailable() == 0) GTEST_SKIP() << "NOTICE: the host's available memory is unknown here";
  // Three blocks of [k, q]: row p * q + c of the result is column c of block p.
  const int64_t blocks = 3, k = 70, q = 40;
  std::vector<uint16_t> w = Numbered(blocks * k * q, 1);
  const uint64_t before = KeptTranspose::KeptBytes();
  {
    KeptTranspose kept(blocks, k, q);
    EXPECT_EQ(kept.Get(w.data(), 5), nullptr) << "first sight";
    const uint16_t* t = kept.Get(w.data(), 5);
    ASSERT_NE(t, nullptr) << "second sight of version 5";
    EXPECT_EQ(KeptTranspose::KeptBytes(), before + blocks * k * q * sizeof(uint16_t));
    for (int64_t p = 0; p < blocks; ++p)
      for (int64_t c = 0; c < q; ++c)
        for (int64_t i = 0; i < k; ++i)
          ASSERT_EQ(t[(p * q + c) * k + i], w[(p * k + i) * q + c]) << p << "," << c << "," << i;
    EXPECT_EQ(kept.Get(w.data(), 5), t) << "still version 5";

    // New contents: not kept until seen twice, then the new transpose.
    w = Numbered(blocks * k * q, 3);
    EXPECT_EQ(kept.Get(w.data(), 6), nullptr);
    const uint16_t* t6 = kept.Get(w.data(), 6);
    ASSERT_NE(t6, nullptr);
    EXPECT_EQ(t6[0], w[0]);
    EXPECT_EQ(t6[1], w[q]);

    // An unknown version is never trusted, nor other memory at the same
    // version.
    EXPECT_EQ(kept.Get(w.data(), 0), nullptr);
    EXPECT_EQ(kept.Get(w.data(), 0), nullptr);
    std::vector<uint16_t> other = w;
    EXPECT_EQ(kept.Get(w.data(), 7), nullptr);
    EXPECT_EQ(kept.Get(other.data(), 7), nullptr);
  }
  EXPECT_EQ(KeptTranspose::KeptBytes(), before) << "released with its owner";
}

// A matrix large enough that the transpose splits over the threads (4 MiB
// and more): every element lands where the definition puts it.
TEST(KeptTransposeTest, LargeMatricesSplitOverTheThreadsExactly) {
  if (HostMemoryAvailable() == 0) GTEST_SKIP() << "NOTICE: the host's available memory is unknown here";
  const int64_t k = 2100, q = 1040;  // 4.4 MB of bf16, bands of 32 rows not dividing evenly
  std::vector<uint16_t> w = Numbered(k * q, 5);
  KeptTranspose kept(1, k, q);
  ASSERT_EQ(kept.Get(w.data(), 9), nullptr);
  const uint16_t* t = kept.Get(w.data(), 9);
  ASSERT_NE(t, nullptr);
  for (int64_t c = 0; c < q; ++c)
    for (int64_t i = 0; i < k; ++i) ASSERT_EQ(t[c * k + i], w[i * q + c]) << c << "," << i;
}

}  // namespace
}  // namespace neuron::kernels
