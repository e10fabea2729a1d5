// .npy readers bound what they allocate by the bytes they were given: a
// header's shape must match the data that follows before anything is
// allocated, and a mismatch is one clear error naming the file.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/program/npy.h"
#include "lib/literal_io/npy_literal.h"
#include "lib/support/npy.h"
#include "lib/tensorfile/npy_array.h"
#include "tests/support/tool_runner.h"

namespace neuron {
namespace {

std::string Npy(std::string_view descr, const std::vector<int64_t>& shape, size_t data_bytes) {
  return npy::Header(descr, shape) + std::string(data_bytes, '\x01');
}

void ExpectRefused(const std::string& bytes, const std::string& what) {
  absl::StatusOr<hlo::Literal> t = literal_io::ParseNpyTensor(bytes, "big.npy");
  ASSERT_FALSE(t.ok()) << what;
  std::string msg(t.status().message());
  EXPECT_EQ(msg.rfind("big.npy: ", 0), 0u) << what << ": " << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << what << ": " << msg;
  EXPECT_FALSE(program::ParseNpy(bytes).ok()) << what;
  absl::StatusOr<npy::Array> a = tensorfile::ParseNpyArray(bytes, "big.npy");
  ASSERT_FALSE(a.ok()) << what;
  EXPECT_EQ(std::string(a.status().message()).find('\n'), std::string::npos) << what;
}

TEST(NpyBoundsTest, HeaderClaimingMoreThanTheDataIsRefused) {
  // 10^12 elements, 100 bytes of data: refused before allocating 4 TB.
  ExpectRefused(Npy("<f4", {1000000000000}, 100), "f32[10^12]");
  ExpectRefused(Npy("<f4", {1000000, 1000000}, 100), "f32[10^6,10^6]");
  ExpectRefused(Npy("|b1", {1000000000000}, 100), "pred[10^12]");
  ExpectRefused(Npy("<c16", {1000000000000}, 100), "c128[10^12]");
  // Shapes whose element count or byte size overflows 64 bits.
  ExpectRefused(Npy("<f8", {int64_t{1} << 62, 8}, 100), "f64[2^62,8]");
  ExpectRefused(Npy("<f8", {int64_t{1} << 61}, 100), "f64[2^61]");
  ExpectRefused(Npy("<f4", {25}, 99), "one byte short");
  ExpectRefused(Npy("<f4", {25}, 101), "one byte long");
  // The exact size loads.
  absl::StatusOr<hlo::Literal> ok = literal_io::ParseNpyTensor(Npy("<f4", {5, 5}, 100), "ok.npy");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->element_count(), 25);
}

// Inputs npy_fuzzer once found (tests/fuzz/regressions/npy_fuzzer/).
TEST(NpyBoundsTest, FuzzerRegressions) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(
           testing::SourceRoot() + "/tests/fuzz/regressions/npy_fuzzer", ec)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string bytes = ss.str();
    (void)literal_io::ParseNpyTensor(bytes, "fuzz.npy");
    (void)tensorfile::ParseNpyArray(bytes, "fuzz.npy");
    (void)program::ParseNpy(bytes);
  }
}

}  // namespace
}  // namespace neuron
