// .npy writing (lib/support/npy) read back by the project's one reader
// (lib/tensorfile), including truncated and corrupt headers.
#include <cstdio>
#include <fstream>

#include "gtest/gtest.h"
#include "lib/support/npy.h"
#include "lib/tensorfile/npy_array.h"
#include "tests/support/tool_runner.h"

namespace neuron::npy {
namespace {

using tensorfile::ParseNpyArray;
using tensorfile::ReadNpyArray;

std::string Header(const std::string& dict, int version = 1) {
  std::string h = dict;
  size_t pre = version == 1 ? 10 : 12;
  while ((pre + h.size() + 1) % 64 != 0) h.push_back(' ');
  h.push_back('\n');
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(version));
  out.push_back(0);
  out.push_back(static_cast<char>(h.size() & 0xff));
  out.push_back(static_cast<char>(h.size() >> 8));
  if (version != 1) { out.push_back(0); out.push_back(0); }
  return out + h;
}

TEST(NpyTest, ParsesHandWrittenV1File) {
  std::string bytes = Header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  float vals[6] = {1, 2, 3, 4, 5, 6};
  bytes.append(reinterpret_cast<const char*>(vals), sizeof(vals));
  auto a = ParseNpyArray(bytes, "x.npy");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->descr, "<f4");
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(a->data.size(), 24u);
  float f;
  std::memcpy(&f, a->data.data() + 20, 4);
  EXPECT_EQ(f, 6.0f);
}

TEST(NpyTest, ParsesV2AndV3AndScalars) {
  for (int v : {2, 3}) {
    std::string bytes = Header("{'descr': '<i8', 'fortran_order': False, 'shape': ()}", v);
    int64_t x = -5;
    bytes.append(reinterpret_cast<const char*>(&x), 8);
    auto a = ParseNpyArray(bytes, "s.npy");
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_TRUE(a->shape.empty());
    EXPECT_EQ(a->element_count(), 1);
  }
}

TEST(NpyTest, RoundTripsThroughSerialize) {
  Array a;
  a.descr = "|V2";
  a.shape = {3};
  a.data = {0x80, 0x3f, 0x00, 0x40, 0x40, 0x40};
  auto b = ParseNpyArray(Serialize(a), "rt");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->descr, "|V2");
  EXPECT_EQ(b->shape, a.shape);
  EXPECT_EQ(b->data, a.data);
  EXPECT_EQ(Serialize(a).size() % 64, 6u);  // 64-aligned header + 6 data bytes
}

TEST(NpyTest, RejectsBadInputWithClearErrors) {
  std::string good = Header("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }");
  struct Case { std::string bytes, needle; };
  std::vector<Case> cases = {
      {"", "magic"},
      {"NUMPY\x01\x00", "magic"},
      {good.substr(0, 20), "truncated .npy header"},
      {good, "holds 0 bytes of data"},
      {Header("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }") + std::string(4, '\0'), "Fortran-order"},
      {Header("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }") + std::string(8, '\0'), "unsupported .npy dtype '>f4'"},
      {Header("{'descr': '<f4', 'shape': (1,), }") + std::string(4, '\0'), "needs 'descr'"},
      {Header("{'descr': '<f4', 'fortran_order': False, 'shape': (x,), }"), "shape"},
      {Header("['descr']"), "malformed"},
      {Header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999, 99999999999), }"), "too large"},
  };
  std::string v9 = good;
  v9[6] = 9;
  cases.push_back({v9, "version 9"});
  for (const auto& c : cases) {
    auto a = ParseNpyArray(c.bytes, "bad.npy");
    ASSERT_FALSE(a.ok()) << c.needle;
    EXPECT_NE(std::string(a.status().message()).find(c.needle), std::string::npos)
        << a.status().message();
    EXPECT_NE(std::string(a.status().message()).find("bad.npy"), std::string::npos);
  }
}

TEST(NpyTest, FilesReadAndWrite) {
  std::string dir = neuron::testing::MakeTempDir();
  Array a;
  a.descr = "|b1";
  a.shape = {2, 2};
  a.data = {1, 0, 0, 1};
  ASSERT_TRUE(WriteFile(dir + "/p.npy", a).ok());
  auto b = ReadNpyArray(dir + "/p.npy");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->data, a.data);
  auto missing = ReadNpyArray(dir + "/nope.npy");
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(std::string(missing.status().message()).find("nope.npy"), std::string::npos);
}

}  // namespace
}  // namespace neuron::npy
