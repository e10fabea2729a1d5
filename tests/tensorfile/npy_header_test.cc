// The one .npy header parser: the formats NumPy writes, and one clear
// error for the rest, with nothing allocated beyond the header's bound.
#include "lib/tensorfile/npy_header.h"

#include "gtest/gtest.h"
#include "lib/support/npy.h"

namespace neuron::tensorfile {
namespace {

std::string Npy(std::string_view descr, const std::vector<int64_t>& dims, size_t data) {
  return npy::Header(descr, dims) + std::string(data, '\0');
}

TEST(NpyHeader, ParsesWhatNumpyWrites) {
  const std::string f = Npy("<f4", {2, 3}, 24);
  absl::StatusOr<NpyHeader> h = ParseNpyHeader(f, f.size());
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->dtype.type, hlo::ElementType::kF32);
  EXPECT_EQ(h->dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(h->data_offset % 64, 0u);  // NumPy aligns the data to 64 bytes
  EXPECT_EQ(h->data_offset + 24, f.size());
  EXPECT_EQ(h->data_bytes, 24u);
  const std::string scalar = Npy("<i8", {}, 8);
  ASSERT_TRUE(ParseNpyHeader(scalar, scalar.size()).ok());
  const std::string one = Npy("|b1", {5}, 5);
  ASSERT_TRUE(ParseNpyHeader(one, one.size()).ok());
}

TEST(NpyHeader, RawBitsForTypesNumpyLacks) {
  for (const char* descr : {"|V2", "<u2"}) {
    const std::string f = Npy(descr, {3}, 6);
    absl::StatusOr<NpyHeader> h = ParseNpyHeader(f, f.size());
    ASSERT_TRUE(h.ok()) << descr << ": " << h.status();
    EXPECT_TRUE(HoldsType(h->dtype, hlo::ElementType::kBF16)) << descr;
    EXPECT_FALSE(HoldsType(h->dtype, hlo::ElementType::kF32)) << descr;
  }
  const std::string fp8 = Npy("|u1", {3}, 3);
  absl::StatusOr<NpyHeader> h = ParseNpyHeader(fp8, fp8.size());
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(HoldsType(h->dtype, hlo::ElementType::kF8E4M3FN));
  EXPECT_TRUE(HoldsType(h->dtype, hlo::ElementType::kF8E5M2));
  EXPECT_FALSE(HoldsType(h->dtype, hlo::ElementType::kBF16));
}

TEST(NpyHeader, RefusesWithOneLine) {
  struct Case {
    std::string bytes;
    std::string says;
  };
  std::string huge = "\x93NUMPY\x02";
  huge += std::string("\x00\xf0\xff\xff\xff", 5) + "{";
  const std::vector<Case> cases = {
      {"", "no \\x93NUMPY magic"},
      {Npy("<f4", {2, 3}, 20), "holds 20 bytes of data, its header (<f4[2,3]) implies 24"},
      {Npy("<f4", {2, 3}, 28), "holds 28 bytes"},
      {Npy(">f4", {2}, 8), "unsupported .npy dtype '>f4'"},
      {Npy("<U4", {2}, 32), "unsupported .npy dtype"},
      {Npy("<f4", {1LL << 40, 1LL << 40}, 0), "too large"},
      {huge, "header of 4294967280 bytes"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<NpyHeader> h = ParseNpyHeader(c.bytes, c.bytes.size());
    ASSERT_FALSE(h.ok()) << c.says;
    const std::string msg(h.status().message());
    EXPECT_NE(msg.find(c.says), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace neuron::tensorfile
