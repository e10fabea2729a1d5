#include "lib/neff/compression.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <random>

#include "lib/neff/error.h"
#include "tests/neff/test_archives.h"

namespace neff {
namespace {

std::string RandomText(size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>('a' + rng() % 6);  // compressible, not trivial
  return out;
}

std::string ZstdViaSink(const std::string& input, uint64_t frame_bytes = kZstdFrameBytes) {
  std::string out;
  StringSink sink(&out);
  absl::StatusOr<std::unique_ptr<ZstdSink>> zstd = ZstdSink::Create(&sink, 3, input.size(), frame_bytes);
  EXPECT_TRUE(zstd.ok());
  // In uneven pieces, as the tar writer feeds it.
  for (size_t at = 0; at < input.size(); at += 777) {
    EXPECT_TRUE((*zstd)->Append(std::string_view(input).substr(at, 777)).ok());
  }
  EXPECT_TRUE((*zstd)->Finish().ok());
  return out;
}

TEST(Zstd, StreamedFrameRoundTripsAndDeclaresItsSize) {
  std::string input = RandomText(3 << 20, 1);
  std::string compressed = ZstdViaSink(input);
  EXPECT_TRUE(LooksLikeZstd(compressed));
  EXPECT_LT(compressed.size(), input.size());
  EXPECT_EQ(ZSTD_getFrameContentSize(compressed.data(), compressed.size()), input.size());
  absl::StatusOr<SharedBytes> out = DecompressZstd(compressed, 1ull << 30);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->view() == input);
}

TEST(Zstd, EmptyInput) {
  std::string compressed = ZstdViaSink("");
  absl::StatusOr<SharedBytes> out = DecompressZstd(compressed, 100);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->size, 0u);
}

TEST(Zstd, DecompressionBombIsRefusedBeforeInflating) {
  std::string zeros(64 << 20, '\0');
  std::string bomb(ZSTD_compressBound(zeros.size()), '\0');
  bomb.resize(ZSTD_compress(bomb.data(), bomb.size(), zeros.data(), zeros.size(), 3));
  ASSERT_LT(bomb.size(), 64u << 10);  // a tiny file...
  absl::StatusOr<SharedBytes> out = DecompressZstd(bomb, 1 << 20);  // ...with a 1 MiB budget
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(NrtStatusOf(out.status()), NRT_INVALID);
  EXPECT_NE(out.status().message().find("limit"), std::string::npos) << out.status().message();
  EXPECT_TRUE(DecompressZstd(bomb, 64 << 20).ok());
}

TEST(Zstd, FrameWithoutDeclaredSizeIsRefused) {
  std::string input = RandomText(10000, 2);
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
  std::string out(ZSTD_compressBound(input.size()), '\0');
  ZSTD_outBuffer ob{out.data(), out.size(), 0};
  ZSTD_inBuffer ib{input.data(), input.size(), 0};
  // Streaming without a pledged size leaves the size out of the frame.
  ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_continue);
  ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_end);
  ZSTD_freeCCtx(cctx);
  out.resize(ob.pos);
  ASSERT_EQ(ZSTD_getFrameContentSize(out.data(), out.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  absl::StatusOr<SharedBytes> result = DecompressZstd(out, 1 << 30);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("does not declare its size"), std::string::npos);
}

TEST(Zstd, TruncatedOrCorruptStreamsFail) {
  std::string compressed = ZstdViaSink(RandomText(200000, 3));
  for (size_t cut : {size_t{5}, compressed.size() / 2, compressed.size() - 1}) {
    absl::StatusOr<SharedBytes> out = DecompressZstd(compressed.substr(0, cut), 1 << 30);
    ASSERT_FALSE(out.ok()) << "cut at " << cut;
    EXPECT_EQ(NrtStatusOf(out.status()), NRT_INVALID);
  }
  std::string flipped = compressed;
  flipped[flipped.size() / 2] ^= 0x10;
  EXPECT_FALSE(DecompressZstd(flipped, 1 << 30).ok());  // the frame checksum catches it
  EXPECT_FALSE(DecompressZstd("not zstd at all", 1 << 30).ok());
}

// Frame sizes of a stream, walking its frame headers.
std::vector<unsigned long long> FrameContentSizes(std::string_view stream) {
  std::vector<unsigned long long> sizes;
  while (!stream.empty()) {
    size_t n = ZSTD_findFrameCompressedSize(stream.data(), stream.size());
    EXPECT_FALSE(ZSTD_isError(n));
    if (ZSTD_isError(n)) break;
    sizes.push_back(ZSTD_getFrameContentSize(stream.data(), n));
    stream.remove_prefix(n);
  }
  return sizes;
}

TEST(Zstd, SplitsIntoIndependentFramesThatRoundTrip) {
  std::string input = RandomText(1000000, 5);
  std::string framed = ZstdViaSink(input, 300000);
  EXPECT_EQ(FrameContentSizes(framed), (std::vector<unsigned long long>{300000, 300000, 300000, 100000}));
  // A standard reader of concatenated frames (zstd -d) gets the input back...
  std::string plain(input.size(), '\0');
  EXPECT_EQ(ZSTD_decompress(plain.data(), plain.size(), framed.data(), framed.size()), input.size());
  EXPECT_TRUE(plain == input);
  // ...and so does ours, as from the single frame older writers made.
  for (const std::string& stream : {framed, ZstdViaSink(input, UINT64_MAX)}) {
    absl::StatusOr<SharedBytes> out = DecompressZstd(stream, 1 << 30);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(out->view() == input);
  }
  EXPECT_EQ(FrameContentSizes(ZstdViaSink(input, UINT64_MAX)).size(), 1u);
}

TEST(Zstd, FrameCountMatchesExactMultiples) {
  std::string input = RandomText(600000, 6);
  EXPECT_EQ(FrameContentSizes(ZstdViaSink(input, 300000)).size(), 2u);  // no empty third frame
  absl::StatusOr<SharedBytes> out = DecompressZstd(ZstdViaSink(input, 300000), 1 << 30);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->view() == input);
}

TEST(Zstd, AFrameCutShortOrCorruptFailsWithOneError) {
  std::string input = RandomText(1000000, 7);
  std::string framed = ZstdViaSink(input, 300000);
  size_t first = ZSTD_findFrameCompressedSize(framed.data(), framed.size());
  size_t second = ZSTD_findFrameCompressedSize(framed.data() + first, framed.size() - first);
  // The stream ends inside the second frame.
  absl::StatusOr<SharedBytes> out = DecompressZstd(framed.substr(0, first + second / 2), 1 << 30);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(NrtStatusOf(out.status()), NRT_INVALID);
  EXPECT_NE(out.status().message().find("frame 2"), std::string::npos) << out.status().message();
  EXPECT_NE(out.status().message().find("truncated"), std::string::npos) << out.status().message();
  // A flipped byte inside the third frame: its checksum (or block) fails.
  std::string flipped = framed;
  flipped[first + second + 1000] ^= 0x10;
  out = DecompressZstd(flipped, 1 << 30);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(NrtStatusOf(out.status()), NRT_INVALID);
  EXPECT_NE(out.status().message().find("frame 3"), std::string::npos) << out.status().message();
  // Garbage after complete frames is not a frame.
  EXPECT_FALSE(DecompressZstd(framed + "junk", 1 << 30).ok());
}

TEST(Zstd, SizesBeyondThePledgeAreRefused) {
  std::string out;
  StringSink sink(&out);
  absl::StatusOr<std::unique_ptr<ZstdSink>> zstd = ZstdSink::Create(&sink, 3, 10, 4);
  ASSERT_TRUE(zstd.ok());
  EXPECT_TRUE((*zstd)->Append("0123456789").ok());
  EXPECT_FALSE((*zstd)->Append("x").ok());
  absl::StatusOr<std::unique_ptr<ZstdSink>> short_one = ZstdSink::Create(&sink, 3, 10, 4);
  ASSERT_TRUE(short_one.ok());
  EXPECT_TRUE((*short_one)->Append("01234").ok());
  EXPECT_FALSE((*short_one)->Finish().ok());
}

TEST(Gzip, InflatesWithinTheLimit) {
  std::string input = RandomText(2 << 20, 4);
  std::string gz = neff_test::Gzip(input);
  EXPECT_TRUE(LooksLikeGzip(gz));
  absl::StatusOr<SharedBytes> out = InflateGzip(gz, 1ull << 30);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->view() == input);
  absl::StatusOr<SharedBytes> limited = InflateGzip(gz, 1 << 20);
  ASSERT_FALSE(limited.ok());
  EXPECT_EQ(NrtStatusOf(limited.status()), NRT_INVALID);
  EXPECT_NE(limited.status().message().find("limit of 1048576"), std::string::npos);
  // Exactly at the limit is fine.
  EXPECT_TRUE(InflateGzip(gz, input.size()).ok());
}

TEST(Gzip, TruncatedOrCorruptStreamsFail) {
  std::string gz = neff_test::Gzip(RandomText(100000, 5));
  for (size_t cut : {size_t{1}, size_t{10}, gz.size() / 2, gz.size() - 1}) {
    absl::StatusOr<SharedBytes> out = InflateGzip(gz.substr(0, cut), 1 << 30);
    ASSERT_FALSE(out.ok()) << "cut at " << cut;
    EXPECT_EQ(NrtStatusOf(out.status()), NRT_INVALID);
  }
  std::string bad = gz;
  bad[gz.size() - 6] ^= 1;  // the CRC32 trailer
  EXPECT_FALSE(InflateGzip(bad, 1 << 30).ok());
}

}  // namespace
}  // namespace neff
