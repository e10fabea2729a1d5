// Bundles written and read back: .npz through libzip, safetensors by hand,
// every type real checkpoints hold; views where the data is stored flat.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/tensorfile/bundle_writer.h"
#include "lib/tensorfile/tensor_file.h"

namespace neuron::tensorfile {
namespace {

using hlo::ElementType;

std::string TempPath(const std::string& name) {
  return (std::filesystem::path(testing::TempDir()) / name).string();
}

std::string Bytes(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 31 + seed) & 0xff);
  return s;
}

class BundleRoundTrip : public testing::TestWithParam<Format> {};

TEST_P(BundleRoundTrip, EveryTypeComesBackAsWritten) {
  const std::vector<ElementType> types = {ElementType::kF32,    ElementType::kF16,  ElementType::kBF16,
                                          ElementType::kF8E4M3FN, ElementType::kF8E5M2, ElementType::kS32,
                                          ElementType::kS64,    ElementType::kU8,   ElementType::kPred,
                                          ElementType::kF64};
  std::vector<std::string> data;
  std::vector<NamedArray> arrays;
  for (size_t i = 0; i < types.size(); ++i) data.push_back(Bytes(6 * hlo::StorageBytes(types[i]), int(i)));
  for (size_t i = 0; i < types.size(); ++i) {
    arrays.push_back({"params/layer_" + std::to_string(i) + "/w", types[i], {2, 3}, data[i]});
  }
  const std::string path = TempPath(GetParam() == Format::kNpz ? "rt.npz" : "rt.safetensors");
  ASSERT_TRUE(WriteBundle(path, GetParam(), arrays).ok());
  absl::StatusOr<std::unique_ptr<TensorFile>> file = TensorFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->format(), GetParam());
  ASSERT_EQ((*file)->arrays().size(), types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    const ArrayInfo* a = (*file)->Find(arrays[i].key);
    ASSERT_NE(a, nullptr) << arrays[i].key;
    const size_t k = static_cast<size_t>(a - (*file)->arrays().data());
    EXPECT_EQ(a->dims, (std::vector<int64_t>{2, 3}));
    EXPECT_TRUE(HoldsType(a->dtype, types[i])) << a->dtype.spelled;
    std::string got(a->bytes, '\0');
    ASSERT_TRUE((*file)->ReadInto(k, reinterpret_cast<uint8_t*>(got.data())).ok());
    EXPECT_EQ(got, data[i]) << arrays[i].key;
    absl::StatusOr<std::optional<std::string_view>> view = (*file)->View(k);
    ASSERT_TRUE(view.ok());
    if (GetParam() == Format::kSafetensors) {
      ASSERT_TRUE(view->has_value());
      EXPECT_EQ(std::string(**view), data[i]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, BundleRoundTrip, testing::Values(Format::kNpz, Format::kSafetensors));

TEST(Bundle, RefusesDuplicateKeysAndUnnamedTypes) {
  const std::string d(4, '\0');
  EXPECT_FALSE(WriteBundle(TempPath("dup.npz"), Format::kNpz,
                           {{"a", ElementType::kF32, {1}, d}, {"a", ElementType::kF32, {1}, d}})
                   .ok());
  const std::string c(8, '\0');
  absl::Status s = WriteBundle(TempPath("c.safetensors"), Format::kSafetensors, {{"z", ElementType::kC64, {1}, c}});
  EXPECT_NE(std::string(s.message()).find("safetensors has no type"), std::string::npos) << s;
  EXPECT_FALSE(std::filesystem::exists(TempPath("c.safetensors")));
}

TEST(Bundle, TellsFormatsByContent) {
  EXPECT_EQ(DetectFormat("\x93NUMPY\x01\x00"), Format::kNpy);
  EXPECT_EQ(DetectFormat(std::string("PK\x03\x04", 4)), Format::kNpz);
  EXPECT_EQ(DetectFormat(std::string("\x02\x00\x00\x00\x00\x00\x00\x00{}", 10)), Format::kSafetensors);
  EXPECT_FALSE(DetectFormat("hello world").has_value());
  absl::StatusOr<std::unique_ptr<TensorFile>> f = TensorFile::FromBytes("", "empty.npz");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(std::string(f.status().message()), "empty.npz: an empty file, not a tensor file");
}

TEST(Bundle, HostileSafetensorsGetOneLine) {
  auto st = [](const std::string& header, size_t data, uint64_t length = 0) {
    std::string out(8, '\0');
    const uint64_t n = length ? length : header.size();
    for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
    return out + header + std::string(data, '\0');
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {st(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,800]}})", 8), "lie outside the 8 bytes"},
      {st(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8),
       "overlap"},
      {st("{}", 0, uint64_t{1} << 40), "header of 1099511627776 bytes"},
      {st(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8), "implies 12"},
      {st(R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,8]}})", 8), "bad dimension"},
      {st(R"({"x":7})", 0), "is not an object"},
      {st("{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}", 0), "nests too deep"},
  };
  for (const auto& [bytes, says] : cases) {
    absl::StatusOr<std::unique_ptr<TensorFile>> f = TensorFile::FromBytes(bytes, "w.safetensors");
    ASSERT_FALSE(f.ok()) << says;
    const std::string msg(f.status().message());
    EXPECT_EQ(msg.rfind("w.safetensors: ", 0), 0u) << msg;
    EXPECT_NE(msg.find(says), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

// Every input that once failed a fuzzer fails cleanly here too.
TEST(Bundle, FuzzRegressionsAndSeedsAreHandled) {
  for (const char* dir : {"tests/fuzz/regressions/npz_fuzzer", "tests/fuzz/regressions/safetensors_fuzzer",
                          "tests/fuzz/seeds/npz_fuzzer", "tests/fuzz/seeds/safetensors_fuzzer"}) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      std::ifstream in(entry.path(), std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), {});
      absl::StatusOr<std::unique_ptr<TensorFile>> f = TensorFile::FromBytes(bytes, entry.path().string());
      if (!f.ok()) continue;
      for (size_t i = 0; i < (*f)->arrays().size(); ++i) {
        if ((*f)->arrays()[i].bytes > (1u << 20)) continue;
        std::string out((*f)->arrays()[i].bytes, '\0');
        (void)(*f)->ReadInto(i, reinterpret_cast<uint8_t*>(out.data()));
      }
    }
  }
}

}  // namespace
}  // namespace neuron::tensorfile
