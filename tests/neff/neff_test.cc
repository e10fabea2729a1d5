#include "lib/neff/neff.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <zstd.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <thread>

#include "neuron/version.h"
#include "tests/neff/test_archives.h"
#include "tests/support/tool_runner.h"

namespace neff {
namespace {

using neff_test::GetLe;
using neff_test::PutLe;

std::string Weights(size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

struct Fixture {
  std::string manifest = R"({"format":"neuron-tools-neff","target":"trn2","lnc":1})";
  std::string program = "program bytes";
  std::string w0 = Weights(10000, 1);
  std::string w1 = Weights(3, 2);
  std::vector<Member> Members() const {
    return {{"neff.json", manifest},
            {"program.pb", program},
            {"constants", {}, true},
            {"constants/w0.npy", w0},
            {"constants/w1.npy", w1},
            {"debug/hlo.txt", ""}};
  }
};

WriteOptions Options(bool compress, bool fast) {
  WriteOptions o;
  o.compress = compress;
  o.fast_loading = fast;
  o.name = "model";
  o.lnc_size = 2;
  return o;
}

std::string Sha256(std::string_view bytes) {
  unsigned char md[32];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<char*>(md), len);
}

void ExpectError(const absl::Status& status, NRT_STATUS code, const std::string& fragment) {
  ASSERT_FALSE(status.ok()) << "expected an error containing: " << fragment;
  EXPECT_EQ(NrtStatusOf(status), code) << status.message();
  EXPECT_NE(status.message().find(fragment), std::string::npos) << status.message();
}

struct Layout {
  const char* label;
  bool compress;
  bool fast;
  PayloadFormat format;
};
const Layout kLayouts[] = {
    {"zstd", true, false, PayloadFormat::kZstdTar},
    {"plain", false, false, PayloadFormat::kTar},
    {"fast-loading", true, true, PayloadFormat::kTar},  // fast loading wins over compress
};

TEST(Neff, RoundTripsInEveryLayout) {
  Fixture f;
  for (const Layout& layout : kLayouts) {
    SCOPED_TRACE(layout.label);
    absl::StatusOr<std::string> bytes = Write(f.Members(), Options(layout.compress, layout.fast));
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    ReadOptions ro;
    ro.validate_hash = true;
    absl::StatusOr<Package> pkg = Read(*bytes, ro);
    ASSERT_TRUE(pkg.ok()) << pkg.status();
    EXPECT_EQ(pkg->format, layout.format);
    ASSERT_EQ(pkg->entries.size(), 6u);
    EXPECT_EQ(pkg->entries[0].name, "neff.json");
    EXPECT_EQ(pkg->entries[0].data, f.manifest);
    EXPECT_TRUE(pkg->entries[2].is_directory);
    ASSERT_NE(pkg->Find("constants/w0.npy"), nullptr);
    EXPECT_EQ(pkg->Find("constants/w0.npy")->data, f.w0);
    EXPECT_EQ(pkg->Find("constants/w1.npy")->data, f.w1);
    EXPECT_EQ(pkg->Find("debug/hlo.txt")->size, 0u);
    EXPECT_EQ(pkg->Find("missing"), nullptr);
    for (const Entry& e : pkg->entries) {
      EXPECT_EQ(e.file_offset.has_value(), layout.format == PayloadFormat::kTar) << e.name;
      if (e.file_offset) {
        EXPECT_EQ(bytes->substr(*e.file_offset, e.size), e.data) << e.name;
      }
      if (layout.fast && !e.is_directory && e.size > 0) {
        EXPECT_EQ(*e.file_offset % 4096, 0u) << e.name << " is not page-aligned";
      }
    }
  }
}

TEST(Neff, HeaderRecordsWhatWasWritten) {
  Fixture f;
  WriteOptions o = Options(true, false);
  o.extra_feature_bits = kFeatureCollectives;
  std::string bytes = *Write(f.Members(), o);
  EXPECT_EQ(GetLe(bytes, 0, 8), kPkgTarSha256);
  EXPECT_EQ(GetLe(bytes, 8, 8), 1024u);
  EXPECT_EQ(GetLe(bytes, 16, 8), bytes.size() - 1024);
  EXPECT_EQ(GetLe(bytes, 24, 8), kVersionMajor);
  EXPECT_EQ(GetLe(bytes, 32, 8), kVersionMinor);
  EXPECT_EQ(bytes.substr(172, 32), Sha256(std::string_view(bytes).substr(1024)));
  EXPECT_EQ(GetLe(bytes, 544, 8), kFeatureZstdPayload | kFeatureCollectives);
  EXPECT_EQ(GetLe(bytes, 552, 4), 2u);
  absl::StatusOr<Header> h = ReadHeaderOnly(bytes);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->build_version, NEURON_TOOLS_VERSION);
  EXPECT_EQ(h->name, "model");
  EXPECT_EQ(h->num_tpb, 2u);
  EXPECT_EQ(h->requested_tpb_count, 2u);
  EXPECT_EQ(h->tpb_per_node[0], 2u);
  EXPECT_EQ(h->uuid[6] >> 4, 4);  // random uuid, version 4
  // The payload is a standard zstd frame holding a standard tar.
  EXPECT_TRUE(ZSTD_getFrameContentSize(bytes.data() + 1024, bytes.size() - 1024) > 0);
  EXPECT_EQ(GetLe(*Write(f.Members(), Options(false, true)), 544, 8), kFeatureFastLoading);
  EXPECT_EQ(GetLe(*Write(f.Members(), Options(false, false)), 544, 8), 0u);
}

TEST(Neff, OutputIsDeterministicGivenAUuid) {
  Fixture f;
  WriteOptions o = Options(true, false);
  std::string a = *Write(f.Members(), o);
  std::string b = *Write(f.Members(), o);
  EXPECT_NE(a.substr(204, 16), b.substr(204, 16));  // fresh random uuids
  o.uuid = std::array<uint8_t, 16>{1, 2, 3};
  a = *Write(f.Members(), o);
  b = *Write(f.Members(), o);
  EXPECT_EQ(a, b);
  EXPECT_EQ(static_cast<unsigned char>(a[206]), 3);
}

TEST(Neff, WriterRefusesBadMembersAndOptions) {
  const std::pair<std::string, std::string> cases[] = {
      {"/abs", "absolute path"},
      {"a/../b", "'..'"},
      {std::string(300, 'n'), "too long"},
  };
  for (const auto& [name, fragment] : cases) {
    ExpectError(Write({{name, "x"}}, WriteOptions{}).status(), NRT_INVALID, fragment);
  }
  ExpectError(Write({{"a", "1"}, {"a", "2"}}, WriteOptions{}).status(), NRT_INVALID, "duplicate");
  WriteOptions o;
  o.lnc_size = 0;
  ExpectError(Write({}, o).status(), NRT_INVALID, "lnc_size");
  o = WriteOptions{};
  o.extra_feature_bits = 0x100;
  ExpectError(Write({}, o).status(), NRT_INVALID, "0x100");
  o = WriteOptions{};
  o.name = std::string(256, 'x');
  ExpectError(Write({}, o).status(), NRT_INVALID, "name");
  o = WriteOptions{};
  o.compression_level = 1000;
  ExpectError(Write({}, o).status(), NRT_INVALID, "level");
}

TEST(Neff, EmptyPackageIsValid) {
  for (const Layout& layout : kLayouts) {
    absl::StatusOr<std::string> bytes = Write({}, Options(layout.compress, layout.fast));
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    absl::StatusOr<Package> pkg = Read(*bytes, ReadOptions{});
    ASSERT_TRUE(pkg.ok()) << pkg.status();
    EXPECT_TRUE(pkg->entries.empty());
  }
}

TEST(Neff, EveryTruncationIsInvalid) {
  Fixture f;
  std::mt19937 rng(7);
  for (const Layout& layout : kLayouts) {
    SCOPED_TRACE(layout.label);
    std::string bytes = *Write(f.Members(), Options(layout.compress, layout.fast));
    std::vector<size_t> cuts;
    for (size_t at = 0; at < bytes.size(); at += 512) cuts.push_back(at);
    for (int i = 0; i < 64; ++i) cuts.push_back(rng() % bytes.size());
    cuts.push_back(bytes.size() - 1);
    for (bool validate : {false, true}) {
      ReadOptions ro;
      ro.validate_hash = validate;
      for (size_t cut : cuts) {
        absl::StatusOr<Package> pkg = Read(std::string_view(bytes).substr(0, cut), ro);
        ASSERT_FALSE(pkg.ok()) << "truncated at " << cut << " was accepted";
        EXPECT_EQ(NrtStatusOf(pkg.status()), NRT_INVALID) << pkg.status().message();
        EXPECT_NE(pkg.status().message().find("truncated"), std::string::npos) << pkg.status().message();
      }
    }
  }
}

// Independent zstd frames (parallel decompression) read back exactly like the
// single frame older writers made, which still loads.
TEST(Neff, MultiFramePayloadMatchesSingleFrame) {
  Fixture f;
  f.w0 = Weights(100000, 3);
  WriteOptions many = Options(true, false);
  many.zstd_frame_bytes = 4096;
  WriteOptions one = Options(true, false);
  one.zstd_frame_bytes = 0;
  std::string a = *Write(f.Members(), many), b = *Write(f.Members(), one);
  std::string_view payload_a = std::string_view(a).substr(kHeaderSize);
  EXPECT_LT(ZSTD_findFrameCompressedSize(payload_a.data(), payload_a.size()), payload_a.size());
  std::string_view payload_b = std::string_view(b).substr(kHeaderSize);
  EXPECT_EQ(ZSTD_findFrameCompressedSize(payload_b.data(), payload_b.size()), payload_b.size());
  absl::StatusOr<Package> pa = Read(a, ReadOptions{}), pb = Read(b, ReadOptions{});
  ASSERT_TRUE(pa.ok()) << pa.status();
  ASSERT_TRUE(pb.ok()) << pb.status();
  ASSERT_EQ(pa->entries.size(), pb->entries.size());
  for (size_t i = 0; i < pa->entries.size(); ++i) {
    EXPECT_EQ(pa->entries[i].name, pb->entries[i].name);
    EXPECT_TRUE(pa->entries[i].data == pb->entries[i].data) << pa->entries[i].name;
  }
  EXPECT_TRUE(pa->Find("constants/w0.npy")->data == f.w0);
}

// A frame cut short inside a payload whose header size still matches (so
// only the frames can tell) fails with one error naming the file.
TEST(NeffFile, AFrameCutShortNamesTheFileAndTheFrame) {
  Fixture f;
  f.w0 = Weights(100000, 4);
  WriteOptions o = Options(true, false);
  o.zstd_frame_bytes = 16384;
  std::string bytes = *Write(f.Members(), o);
  std::string_view payload = std::string_view(bytes).substr(kHeaderSize);
  size_t first = ZSTD_findFrameCompressedSize(payload.data(), payload.size());
  ASSERT_LT(first, payload.size());
  bytes.erase(kHeaderSize + first + 100, 200);  // inside the second frame
  PutLe(bytes, kOffDataSize, bytes.size() - kHeaderSize, 8);
  ASSERT_EQ(ReadHeaderOnly(bytes)->data_size, bytes.size() - kHeaderSize);
  std::string path = neuron::testing::MakeTempDir() + "/cut.neff";
  std::ofstream(path, std::ios::binary) << bytes;
  absl::StatusOr<Package> pkg = ReadFile(path, ReadOptions{});
  ASSERT_FALSE(pkg.ok());
  EXPECT_EQ(NrtStatusOf(pkg.status()), NRT_INVALID);
  EXPECT_EQ(pkg.status().message().find(path), 0u) << pkg.status().message();
  EXPECT_NE(pkg.status().message().find("zstd frame"), std::string::npos) << pkg.status().message();
}

TEST(Neff, TrailingBytesAreInvalid) {
  std::string bytes = *Write(Fixture().Members(), Options(true, false)) + "x";
  ExpectError(Read(bytes, ReadOptions{}).status(), NRT_INVALID, "1 unexpected bytes");
}

TEST(Neff, BitFlipsNeverCrashAndHashValidationCatchesEveryPayloadFlip) {
  Fixture f;
  for (const Layout& layout : kLayouts) {
    SCOPED_TRACE(layout.label);
    const std::string clean = *Write(f.Members(), Options(layout.compress, layout.fast));
    std::string bytes = clean;
    size_t caught_without_hash = 0;
    for (size_t i = 0; i < bytes.size(); ++i) {
      const char mask = static_cast<char>(1 << (i % 8));  // a different bit at each byte
      bytes[i] ^= mask;
      ReadOptions ro;
      absl::StatusOr<Package> plain = Read(bytes, ro);
      if (!plain.ok()) {
        ++caught_without_hash;
        NRT_STATUS code = NrtStatusOf(plain.status());
        EXPECT_TRUE(code == NRT_INVALID || code == NRT_UNSUPPORTED_NEFF_VERSION)
            << i << ": " << plain.status().message();
      }
      ro.validate_hash = true;
      absl::StatusOr<Package> checked = Read(bytes, ro);
      bool in_hash_scope = i >= 1024 || (i >= 172 && i < 204);
      if (in_hash_scope) {
        ASSERT_FALSE(checked.ok()) << "flip at byte " << i << " not caught with validation";
        EXPECT_EQ(NrtStatusOf(checked.status()), NRT_INVALID) << checked.status().message();
      }
      bytes[i] ^= mask;
    }
    EXPECT_GT(caught_without_hash, 0u);
    ASSERT_EQ(bytes, clean);
  }
}

TEST(Neff, HashMismatchIsReportedAsSuch) {
  std::string bytes = *Write(Fixture().Members(), Options(false, false));
  bytes[bytes.size() - 2000] ^= 1;  // inside member data: the tar itself stays valid
  EXPECT_TRUE(Read(bytes, ReadOptions{}).ok());
  ReadOptions ro;
  ro.validate_hash = true;
  ExpectError(Read(bytes, ro).status(), NRT_INVALID, "hash mismatch");
}

std::string WithHeaderField(std::string bytes, size_t offset, uint64_t value, int width) {
  PutLe(bytes, offset, value, width);
  return bytes;
}

TEST(Neff, UnknownFeatureBitIsRefusedInTheRuntimeWords) {
  std::string bytes = *Write(Fixture().Members(), Options(true, false));
  uint64_t bits = GetLe(bytes, 544, 8);
  std::string bad = WithHeaderField(bytes, 544, bits | 0x100, 8);
  ExpectError(Read(bad, ReadOptions{}).status(), NRT_UNSUPPORTED_NEFF_VERSION,
              "NEFF version: 2.1, features: 0x100 are not supported. Currently supporting: 0x7");
  // Inspection still lists it.
  EXPECT_TRUE(ListMembers(bad).ok());
  // Contradictory payload bits are corrupt, not a version problem.
  ExpectError(Read(WithHeaderField(bytes, 544, kFeatureZstdPayload | kFeatureFastLoading, 8), ReadOptions{})
                  .status(),
              NRT_INVALID, "both");
  ExpectError(Read(WithHeaderField(*Write({}, Options(false, false)), 544, kFeatureZstdPayload, 8),
                   ReadOptions{})
                  .status(),
              NRT_INVALID, "not a zstd stream");
}

TEST(Neff, FastLoadingBitPromisesAlignment) {
  // A plain layout claiming to be fast-loading: the loader would map
  // misaligned data, so it is refused.
  std::string bytes = *Write(Fixture().Members(), Options(false, false));
  ExpectError(Read(WithHeaderField(bytes, 544, kFeatureFastLoading, 8), ReadOptions{}).status(), NRT_INVALID,
              "not 4096-byte aligned");
}

TEST(Neff, VersionRules) {
  std::string bytes = *Write(Fixture().Members(), Options(true, false));
  auto with_version = [&](uint64_t major, uint64_t minor) {
    return WithHeaderField(WithHeaderField(bytes, 24, major, 8), 32, minor, 8);
  };
  ReadOptions strict;
  ReadOptions legacy;
  legacy.allow_legacy = true;
  // Newer major: never.
  std::string newer = with_version(3, 0);
  ExpectError(Read(newer, strict).status(), NRT_UNSUPPORTED_NEFF_VERSION,
              "NEFF version mismatch supported: 2.1 received: 3.0");
  ExpectError(Read(newer, legacy).status(), NRT_UNSUPPORTED_NEFF_VERSION, "mismatch");
  // Newer minor of the same major: compatible.
  EXPECT_TRUE(Read(with_version(2, 7), strict).ok());
  // Older: legacy, only when allowed.
  for (auto [major, minor] : {std::pair<uint64_t, uint64_t>{2, 0}, {1, 0}, {1, 9}}) {
    std::string old = with_version(major, minor);
    ExpectError(Read(old, strict).status(), NRT_UNSUPPORTED_NEFF_VERSION, "legacy");
    EXPECT_NE(Read(old, strict).status().message().find("NEURON_RT_ALLOW_LEGACY_NEFF"), std::string::npos);
    EXPECT_TRUE(Read(old, legacy).ok()) << major << "." << minor;
  }
  ExpectError(Read(with_version(0, 5), legacy).status(), NRT_UNSUPPORTED_NEFF_VERSION, "received: 0.5");
  // Inspection reads any version.
  EXPECT_TRUE(Read(newer, InspectOptions()).ok());
  // Unknown packaging.
  ExpectError(Read(WithHeaderField(bytes, 0, 7, 8), InspectOptions()).status(), NRT_UNSUPPORTED_NEFF_VERSION,
              "packaging version 7");
}

TEST(Neff, LncMismatchIsRefused) {
  std::string bytes = *Write(Fixture().Members(), Options(true, false));  // LNC 2
  ReadOptions ro;
  ro.device_lnc_size = 1;
  ExpectError(Read(bytes, ro).status(), NRT_INVALID, "compiled for logical core size (LNC) 2, the device uses LNC 1");
  ro.device_lnc_size = 2;
  EXPECT_TRUE(Read(bytes, ro).ok());
}

TEST(Neff, DecompressionBombIsRefused) {
  // A tar of 64 MiB (one zero-filled member) compresses to a few KiB.
  std::string zeros(64 << 20, '\0');
  WriteOptions o;
  std::string bytes = *Write({{"constants/zeros.bin", zeros}}, o);
  ASSERT_LT(bytes.size(), 64u << 10);
  ReadOptions ro;
  ro.max_payload_bytes = 1 << 20;
  ExpectError(Read(bytes, ro).status(), NRT_INVALID, "limit");
  ro.max_payload_bytes = 65 << 20;
  EXPECT_TRUE(Read(bytes, ro).ok());
}

std::string RealStyleNeff(uint64_t pkg_version, bool gzip) {
  std::string tar = neff_test::RawTar({{"./", '5', ""},
                                       {"./neff.json", '0', R"({"version":"2.0"})"},
                                       {"./kelf-a.json", '0', "{}"},
                                       {"./sg00/", '5', ""},
                                       {"./sg00/def.json", '0', std::string(700, 'd')},
                                       {"./sg01/", '5', ""},
                                       {"./sg01/def.json", '0', "{}"}});
  std::string payload = gzip ? neff_test::Gzip(tar) : tar;
  std::string header(1024, '\0');
  PutLe(header, 0, pkg_version, 8);
  PutLe(header, 8, 1024, 8);
  PutLe(header, 16, payload.size(), 8);
  PutLe(header, 24, 2, 8);
  PutLe(header, 32, 0, 8);
  header.replace(40, 14, "2.19.8089.0+8a");
  PutLe(header, 168, 2, 4);
  unsigned char md[64];
  unsigned int len = 0;
  EVP_Digest(payload.data(), payload.size(), md, &len, pkg_version == 2 ? EVP_md5() : EVP_sha256(), nullptr);
  header.replace(172, len, std::string(reinterpret_cast<char*>(md), len));
  header.replace(220, 5, "graph");
  PutLe(header, 544, 0x80000000000000ffull, 8);
  PutLe(header, 552, 2, 4);
  return header + payload;
}

TEST(Neff, ReadsTheRealCompilersLayout) {
  for (uint64_t pkg : {uint64_t{1}, uint64_t{2}}) {
    SCOPED_TRACE(pkg);
    std::string real = RealStyleNeff(pkg, true);
    absl::StatusOr<Header> h = ReadHeaderOnly(real);
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_EQ(h->pkg_version, pkg);
    EXPECT_EQ(h->build_version, "2.19.8089.0+8a");
    EXPECT_EQ(h->lnc_size, 2u);
    EXPECT_EQ(h->feature_bits, 0x80000000000000ffull);
    EXPECT_EQ(FormatVersion(h->version_major, h->version_minor), "2.0");
    absl::StatusOr<std::vector<Entry>> members = ListMembers(real);
    ASSERT_TRUE(members.ok()) << members.status();
    std::vector<std::string> names;
    for (const Entry& e : *members) names.push_back(e.name);
    EXPECT_EQ(names, (std::vector<std::string>{"neff.json", "kelf-a.json", "sg00", "sg00/def.json", "sg01",
                                               "sg01/def.json"}));
    EXPECT_EQ((*members)[3].size, 700u);
    // Its hash (sha256 or md5 by packaging version) checks out.
    ReadOptions inspect = InspectOptions();
    inspect.validate_hash = true;
    absl::StatusOr<Package> pkg_read = Read(real, inspect);
    ASSERT_TRUE(pkg_read.ok()) << pkg_read.status();
    EXPECT_EQ(pkg_read->format, PayloadFormat::kGzipTar);
    EXPECT_EQ(pkg_read->Find("neff.json")->data, R"({"version":"2.0"})");
    // Loading it is another matter: legacy version and unknown features.
    EXPECT_EQ(NrtStatusOf(Read(real, ReadOptions{}).status()), NRT_UNSUPPORTED_NEFF_VERSION);
    real[real.size() - 10] ^= 4;
    ExpectError(Read(real, inspect).status(), NRT_INVALID, "hash mismatch");
  }
  // An uncompressed one (fast-loading output of the real compiler).
  absl::StatusOr<std::vector<Entry>> plain = ListMembers(RealStyleNeff(1, false));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->size(), 6u);
  EXPECT_TRUE((*plain)[0].file_offset.has_value());
}

std::vector<std::string> DirectoryNames(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(d);
  return names;
}

TEST(NeffFile, WriteFileThenReadFileMapsMembers) {
  Fixture f;
  std::string dir = neuron::testing::MakeTempDir();
  std::string path = dir + "/m.neff";
  for (const Layout& layout : kLayouts) {
    SCOPED_TRACE(layout.label);
    WriteOptions o = Options(layout.compress, layout.fast);
    o.uuid = std::array<uint8_t, 16>{9};
    ASSERT_TRUE(WriteFile(path, f.Members(), o).ok());
    EXPECT_EQ(DirectoryNames(dir), std::vector<std::string>{"m.neff"});  // no temp file left
    std::ifstream in(path, std::ios::binary);
    std::string on_disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(on_disk, *Write(f.Members(), o));  // streaming and in-memory agree
    ReadOptions ro;
    ro.validate_hash = true;
    absl::StatusOr<Package> pkg = ReadFile(path, ro);
    ASSERT_TRUE(pkg.ok()) << pkg.status();
    EXPECT_NE(pkg->storage, nullptr);
    EXPECT_EQ(pkg->Find("constants/w0.npy")->data, f.w0);
  }
  // The package outlives the file's name.
  absl::StatusOr<Package> pkg = ReadFile(path, ReadOptions{});
  ASSERT_TRUE(pkg.ok());
  ASSERT_EQ(unlink(path.c_str()), 0);
  EXPECT_EQ(pkg->Find("constants/w1.npy")->data, f.w1);
}

TEST(NeffFile, ReadsFromAPipe) {
  std::string dir = neuron::testing::MakeTempDir();
  std::string fifo = dir + "/pipe.neff";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Fixture f;
  std::string bytes = *Write(f.Members(), Options(true, false));
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << bytes; });
  absl::StatusOr<Package> pkg = ReadFile(fifo, ReadOptions{});
  writer.join();
  ASSERT_TRUE(pkg.ok()) << pkg.status();
  EXPECT_EQ(pkg->Find("constants/w0.npy")->data, f.w0);
}

TEST(NeffFile, ErrorsNameThePath) {
  std::string dir = neuron::testing::MakeTempDir();
  ExpectError(ReadFile(dir + "/absent.neff", ReadOptions{}).status(), NRT_INVALID, "absent.neff: cannot open");
  std::ofstream(dir + "/short.neff") << "tiny";
  ExpectError(ReadFile(dir + "/short.neff", ReadOptions{}).status(), NRT_INVALID, "short.neff: NEFF is truncated");
  std::ofstream(dir + "/empty.neff");
  ExpectError(ReadFile(dir + "/empty.neff", ReadOptions{}).status(), NRT_INVALID, "truncated");
  absl::Status status = WriteFile(dir + "/no/such/dir/x.neff", {}, WriteOptions{});
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("no/such/dir/x.neff"), std::string::npos) << status.message();
  // A failed write leaves an existing NEFF untouched and no temp file.
  std::string path = dir + "/keep.neff";
  ASSERT_TRUE(WriteFile(path, {{"a", "1"}}, WriteOptions{}).ok());
  EXPECT_FALSE(WriteFile(path, {{"../bad", "1"}}, WriteOptions{}).ok());
  absl::StatusOr<Package> kept = ReadFile(path, ReadOptions{});
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->Find("a")->data, "1");
  for (const std::string& n : DirectoryNames(dir)) EXPECT_EQ(n.find(".tmp."), std::string::npos) << n;
}

}  // namespace
}  // namespace neff
