#include "lib/neff/header.h"

#include <gtest/gtest.h>

#include "lib/neff/error.h"
#include "tests/neff/test_archives.h"

namespace neff {
namespace {

using neff_test::GetLe;

Header Distinct() {
  Header h;
  h.pkg_version = 0x0102030405060708ull;
  h.data_size = 0x1112131415161718ull;
  h.version_major = 0x21;
  h.version_minor = 0x2223;
  h.build_version = "2.19.1234.0+abcdef";
  h.num_tpb = 0x31323334;
  for (size_t i = 0; i < h.hash.size(); ++i) h.hash[i] = static_cast<uint8_t>(0x40 + i);
  for (size_t i = 0; i < h.uuid.size(); ++i) h.uuid[i] = static_cast<uint8_t>(0x80 + i);
  h.name = "my-model";
  h.requested_tpb_count = 0x51525354;
  for (size_t i = 0; i < h.tpb_per_node.size(); ++i) h.tpb_per_node[i] = static_cast<uint8_t>(0xa0 + i);
  h.feature_bits = 0x6162636465666768ull;
  h.lnc_size = 0x71727374;
  return h;
}

TEST(NeffHeader, FieldsSitAtTheDocumentedOffsets) {
  absl::StatusOr<std::string> bytes = EncodeHeader(Distinct());
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  const std::string& b = *bytes;
  ASSERT_EQ(b.size(), 1024u);
  // Offsets written out literally, as in the documentation table.
  EXPECT_EQ(GetLe(b, 0, 8), 0x0102030405060708ull);
  EXPECT_EQ(static_cast<unsigned char>(b[0]), 0x08);  // little-endian
  EXPECT_EQ(GetLe(b, 8, 8), 1024u);
  EXPECT_EQ(GetLe(b, 16, 8), 0x1112131415161718ull);
  EXPECT_EQ(GetLe(b, 24, 8), 0x21u);
  EXPECT_EQ(GetLe(b, 32, 8), 0x2223u);
  EXPECT_EQ(b.substr(40, 19), std::string("2.19.1234.0+abcdef\0", 19));
  EXPECT_EQ(GetLe(b, 168, 4), 0x31323334u);
  EXPECT_EQ(static_cast<unsigned char>(b[172]), 0x40);
  EXPECT_EQ(static_cast<unsigned char>(b[203]), 0x40 + 31);
  EXPECT_EQ(static_cast<unsigned char>(b[204]), 0x80);
  EXPECT_EQ(static_cast<unsigned char>(b[219]), 0x80 + 15);
  EXPECT_EQ(b.substr(220, 9), std::string("my-model\0", 9));
  EXPECT_EQ(GetLe(b, 476, 4), 0x51525354u);
  EXPECT_EQ(static_cast<unsigned char>(b[480]), 0xa0);
  EXPECT_EQ(static_cast<unsigned char>(b[543]), 0xa0 + 63);
  EXPECT_EQ(GetLe(b, 544, 8), 0x6162636465666768ull);
  EXPECT_EQ(GetLe(b, 552, 4), 0x71727374u);
  EXPECT_EQ(b.substr(556), std::string(468, '\0'));
}

TEST(NeffHeader, DecodeInvertsEncode) {
  Header in = Distinct();
  absl::StatusOr<Header> out = DecodeHeader(*EncodeHeader(in));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->pkg_version, in.pkg_version);
  EXPECT_EQ(out->data_size, in.data_size);
  EXPECT_EQ(out->version_major, in.version_major);
  EXPECT_EQ(out->version_minor, in.version_minor);
  EXPECT_EQ(out->build_version, in.build_version);
  EXPECT_EQ(out->num_tpb, in.num_tpb);
  EXPECT_EQ(out->hash, in.hash);
  EXPECT_EQ(out->uuid, in.uuid);
  EXPECT_EQ(out->name, in.name);
  EXPECT_EQ(out->requested_tpb_count, in.requested_tpb_count);
  EXPECT_EQ(out->tpb_per_node, in.tpb_per_node);
  EXPECT_EQ(out->feature_bits, in.feature_bits);
  EXPECT_EQ(out->lnc_size, in.lnc_size);
}

TEST(NeffHeader, StringsMustFitTheirFieldsWithATerminator) {
  Header h;
  h.name = std::string(255, 'n');
  EXPECT_TRUE(EncodeHeader(h).ok());
  h.name = std::string(256, 'n');
  absl::StatusOr<std::string> bad = EncodeHeader(h);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(NrtStatusOf(bad.status()), NRT_INVALID);
  EXPECT_NE(bad.status().message().find("name"), std::string::npos);
  h.name = "ok";
  h.build_version = std::string(128, 'v');
  EXPECT_FALSE(EncodeHeader(h).ok());
  h.build_version = std::string("a\0b", 3);
  EXPECT_FALSE(EncodeHeader(h).ok());
}

TEST(NeffHeader, FullLengthForeignStringsDecodeWithoutTerminator) {
  std::string bytes = *EncodeHeader(Header{});
  bytes.replace(220, 256, std::string(256, 'x'));
  absl::StatusOr<Header> h = DecodeHeader(bytes);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->name, std::string(256, 'x'));
}

TEST(NeffHeader, ShortInputAndWrongHeaderSizeAreInvalid) {
  std::string bytes = *EncodeHeader(Header{});
  absl::StatusOr<Header> h = DecodeHeader(bytes.substr(0, 1023));
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(NrtStatusOf(h.status()), NRT_INVALID);
  EXPECT_NE(h.status().message().find("truncated"), std::string::npos);
  neff_test::PutLe(bytes, 8, 512, 8);
  h = DecodeHeader(bytes);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(NrtStatusOf(h.status()), NRT_INVALID);
  EXPECT_NE(h.status().message().find("header_size is 512"), std::string::npos);
}

TEST(NeffHeader, Formatting) {
  EXPECT_EQ(DescribeFeatures(0), "none");
  EXPECT_EQ(DescribeFeatures(kFeatureZstdPayload | kFeatureCollectives), "zstd,collectives");
  EXPECT_EQ(DescribeFeatures(kFeatureFastLoading | 0x100), "fast-loading,0x100");
  std::array<uint8_t, 16> uuid{};
  for (size_t i = 0; i < 16; ++i) uuid[i] = static_cast<uint8_t>(i * 17);
  EXPECT_EQ(FormatUuid(uuid), "00112233-4455-6677-8899-aabbccddeeff");
  EXPECT_EQ(FormatVersion(2, 1), "2.1");
  EXPECT_EQ(HashLength(kPkgTgzMd5), 16u);
  EXPECT_EQ(HashLength(kPkgTarSha256), 32u);
}

TEST(NeffError, CarriesTheNrtStatusThroughContext) {
  absl::Status s = NeffError(NRT_UNSUPPORTED_NEFF_VERSION, "too new");
  EXPECT_EQ(NrtStatusOf(s), NRT_UNSUPPORTED_NEFF_VERSION);
  absl::Status wrapped = WithContext(s, "model.neff");
  EXPECT_EQ(wrapped.message(), "model.neff: too new");
  EXPECT_EQ(NrtStatusOf(wrapped), NRT_UNSUPPORTED_NEFF_VERSION);
  EXPECT_EQ(NrtStatusOf(absl::OkStatus()), NRT_SUCCESS);
  EXPECT_EQ(NrtStatusOf(absl::InternalError("x")), NRT_FAILURE);
}

}  // namespace
}  // namespace neff
