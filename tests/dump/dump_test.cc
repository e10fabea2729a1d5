// lib/dump units: the core-dump layout (and bad input to it), path
// templates, the log ring, input-dump selection; and neuron-dump's own
// (tools/neuron-dump): SigV4, credentials, S3 URIs.
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "absl/time/civil_time.h"
#include "gtest/gtest.h"
#include "lib/dump/core_dump_format.h"
#include "lib/dump/identity.h"
#include "lib/dump/input_dump.h"
#include "lib/dump/memlog.h"
#include "tests/support/tool_runner.h"
#include "tools/neuron-dump/aws_credentials.h"
#include "tools/neuron-dump/s3_client.h"
#include "tools/neuron-dump/sigv4.h"

namespace neuron::dump {
namespace {

TEST(CoreDumpFormat, RoundTrips) {
  std::vector<Section> in(3);
  in[0].kind = SectionKind::kInfo;
  in[0].meta = {{"model", "m"}, {"program", {{"stack", {"w", "add"}}}}};
  in[1].kind = SectionKind::kBuffer;
  in[1].meta = {{"name", "x"}, {"bytes", 5}};
  in[1].data = std::string("\0\1\2\3\4", 5);
  in[2].kind = SectionKind::kMemlog;
  in[2].data = "line one\nline two\n";
  absl::StatusOr<std::string> bytes = EncodeCoreDump(in);
  ASSERT_TRUE(bytes.ok());
  EXPECT_TRUE(LooksLikeZstd(*bytes));
  absl::StatusOr<std::vector<Section>> out = DecodeCoreDump(*bytes, "f");
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].meta, in[0].meta);
  EXPECT_EQ((*out)[1].data, in[1].data);
  EXPECT_EQ((*out)[2].kind, SectionKind::kMemlog);
  EXPECT_EQ((*out)[2].data, in[2].data);
}

TEST(CoreDumpFormat, BadInputIsAnErrorNotACrash) {
  std::vector<Section> one(1);
  one[0].meta = {{"model", std::string(1000, 'x')}};
  const std::string good = *EncodeCoreDump(one);
  EXPECT_FALSE(DecodeCoreDump("", "f").ok());
  EXPECT_FALSE(DecodeCoreDump("hello", "f").ok());
  for (size_t cut = 1; cut < good.size(); cut += 7)
    EXPECT_FALSE(DecodeCoreDump(good.substr(0, cut), "f").ok()) << cut;
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) {
    std::string bad = good;
    bad[4 + rng() % (bad.size() - 4)] ^= static_cast<char>(1 + rng() % 255);
    (void)DecodeCoreDump(bad, "f");  // must not crash
  }
  // A valid frame holding a lying section length.
  std::string raw(kCoreDumpMagic, 8);
  raw += std::string("\1\0\0\0\1\0\0\0", 8);                 // version 1, 1 section
  raw += std::string("\2\0\0\0\2\0\0\0\xff\xff\xff\xff\0\0\0\0", 16);  // huge data length
  raw += "{}";
  std::vector<Section> none;
  std::string frame = *EncodeCoreDump(none);
  (void)frame;
  absl::StatusOr<std::vector<Section>> r = DecodeCoreDump(raw, "f");
  EXPECT_FALSE(r.ok());  // not zstd at all
}

std::string Zstd(const std::string& raw) {
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

TEST(CoreDumpFormat, SizesAreBoundedByTheInput) {
  // A zstd bomb: 64 MiB of zeros in a few kilobytes is refused under a
  // 16 MiB bound before it is held whole, and read under the default one.
  std::vector<Section> big(1);
  big[0].kind = SectionKind::kBuffer;
  big[0].data = std::string(64 << 20, '\0');
  const std::string bomb = *EncodeCoreDump(big);
  EXPECT_LT(bomb.size(), 64u << 10);
  absl::StatusOr<std::vector<Section>> r = DecodeCoreDump(bomb, "bomb.ncdump", 16 << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bomb.ncdump: not a readable core dump: inflates beyond 16777216 bytes"),
            std::string::npos)
      << r.status();
  r = DecodeCoreDump(bomb, "bomb.ncdump");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].data.size(), 64u << 20);
  // Inside a valid frame: section lengths and counts beyond the bytes there.
  const std::string head = std::string(kCoreDumpMagic, 8) + std::string("\1\0\0\0", 4);
  for (const std::string& raw :
       {head + std::string("\1\0\0\0", 4) + std::string("\2\0\0\0\2\0\0\0\xff\xff\xff\xff\xff\xff\xff\xff", 16) + "{}",
        head + std::string("\1\0\0\0", 4) + std::string("\2\0\0\0\xff\xff\xff\xff\0\0\0\0\0\0\0\0", 16) + "{}",
        head + std::string("\xff\xff\xff\xff", 4) + std::string("\2\0\0\0\2\0\0\0\0\0\0\0\0\0\0\0", 16) + "{}"}) {
    r = DecodeCoreDump(Zstd(raw), "lying.ncdump");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("lying.ncdump: not a readable core dump: section"), std::string::npos)
        << r.status();
  }
}

// Inputs core_dump_fuzzer once found (tests/fuzz/regressions/core_dump_fuzzer/).
TEST(CoreDumpFormat, FuzzerRegressions) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(
           neuron::testing::SourceRoot() + "/tests/fuzz/regressions/core_dump_fuzzer", ec)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    (void)DecodeCoreDump(bytes, "fuzz.ncdump", 16 << 20);
  }
}

TEST(Identity, ExpandsEveryTemplateVariable) {
  DumpIdentity id;
  id.time = absl::FromCivil(absl::CivilSecond(2025, 9, 17, 19, 44, 43), absl::UTCTimeZone());
  id.pid = 42;
  id.tid = 43;
  id.log_id = 7;
  id.instance_id = "i-0123456789abcdef0";
  EXPECT_EQ(ExpandPathTemplate("/tmp/neuron-core-dump/dt-%d-cid-%c", id),
            "/tmp/neuron-core-dump/dt-20250917-194443-cid-0000000000000000");
  EXPECT_EQ(ExpandPathTemplate("%p/%t/%l/%i/100%%/%q", id),
            "42/43/7/i-0123456789abcdef0/100%/%q");
  EXPECT_EQ(FlagDateTime(id.time), "2025-09-17-19-44");
  EXPECT_EQ(ExpandPathTemplate("s3://b/%d-%c", id), "s3://b/20250917-194443-0000000000000000");
}

TEST(Memlog, KeepsTheNewestLinesWithinItsSize) {
  Memlog log;
  log.SetCapacity(200);
  for (int i = 0; i < 50; ++i) log.Append(absl::StrCat("event ", i));
  const std::string s = log.Snapshot();
  EXPECT_LE(s.size(), 200u);
  EXPECT_NE(s.find("event 49\n"), std::string::npos);
  EXPECT_EQ(s.find("event 1\n"), std::string::npos);
  EXPECT_GT(log.dropped_lines(), 0u);
  log.SetCapacity(0);
  EXPECT_EQ(log.Snapshot(), "");
}

TEST(InputDump, SelectsFailuresAsTheVariableSays) {
  EXPECT_FALSE(WantsInputDump(0, NRT_TIMEOUT, true));
  EXPECT_TRUE(WantsInputDump(-1, NRT_TIMEOUT, true));
  EXPECT_FALSE(WantsInputDump(-1, NRT_SUCCESS, false));
  EXPECT_TRUE(WantsInputDump(NRT_TIMEOUT, NRT_TIMEOUT, true));
  EXPECT_FALSE(WantsInputDump(NRT_TIMEOUT, NRT_FAILURE, true));
  // A named status dumps even a numerical error that is not fatal.
  EXPECT_TRUE(WantsInputDump(NRT_EXEC_COMPLETED_WITH_NUM_ERR, NRT_EXEC_COMPLETED_WITH_NUM_ERR, false));
  EXPECT_EQ(ShellQuote("a/b.npy"), "a/b.npy");
  EXPECT_EQ(ShellQuote("#0=it's"), "'#0=it'\\''s'");
}

// The worked example of the AWS SigV4 documentation (GET Object with Range).
TEST(SigV4, MatchesTheAwsDocumentationExample) {
  AwsCredentials c{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "", "test"};
  SignRequest r;
  r.method = "GET";
  r.path = "/test.txt";
  r.headers["host"] = "examplebucket.s3.amazonaws.com";
  r.headers["range"] = "bytes=0-9";
  r.payload_sha256 = Sha256Hex("");
  r.region = "us-east-1";
  r.time = absl::FromCivil(absl::CivilSecond(2013, 5, 24, 0, 0, 0), absl::UTCTimeZone());
  EXPECT_EQ(Sign(&r, c),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  EXPECT_EQ(Md5Base64(""), "1B2M2Y8AsgTpgAmY7PhCfg==");
  EXPECT_EQ(UriEncode("a b/c~d", true), "a%20b/c~d");
  EXPECT_EQ(CanonicalQuery({{"uploadId", "x y"}, {"partNumber", "2"}}), "partNumber=2&uploadId=x%20y");
}

GetEnv EnvOf(std::map<std::string, std::string> vars) {
  return [vars](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

TEST(Credentials, EnvironmentThenProfileFiles) {
  const std::string dir = testing::MakeTempDir();
  std::ofstream(dir + "/credentials") << "[default]\naws_access_key_id = AKID1\n"
                                         "aws_secret_access_key = SECRET1\n"
                                         "[dev]\naws_access_key_id=AKID2\naws_secret_access_key=SECRET2\n";
  std::ofstream(dir + "/config") << "[profile dev]\nregion = eu-west-3\n";
  auto c = LoadCredentials(EnvOf({{"AWS_ACCESS_KEY_ID", "A"}, {"AWS_SECRET_ACCESS_KEY", "S"},
                                  {"AWS_SESSION_TOKEN", "T"}}));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->session_token, "T");
  EXPECT_EQ(c->source, "environment");
  const std::map<std::string, std::string> files = {
      {"AWS_SHARED_CREDENTIALS_FILE", dir + "/credentials"}, {"AWS_CONFIG_FILE", dir + "/config"}};
  c = LoadCredentials(EnvOf(files));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->access_key_id, "AKID1");
  auto dev = files;
  dev["AWS_PROFILE"] = "dev";
  c = LoadCredentials(EnvOf(dev));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->secret_access_key, "SECRET2");
  EXPECT_EQ(c->source.find("SECRET"), std::string::npos);
  EXPECT_EQ(ResolveRegion(EnvOf(dev), ""), "eu-west-3");
  EXPECT_EQ(ResolveRegion(EnvOf(dev), "ap-south-1"), "ap-south-1");
  dev["AWS_REGION"] = "us-west-2";
  EXPECT_EQ(ResolveRegion(EnvOf(dev), ""), "us-west-2");
  auto missing = files;
  missing["AWS_PROFILE"] = "nope";
  c = LoadCredentials(EnvOf(missing));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(std::string(c.status().message()).find("nope"), std::string::npos);
  EXPECT_FALSE(LoadCredentials(EnvOf({{"AWS_ACCESS_KEY_ID", "A"}})).ok());
}

TEST(S3Uri, ParsesAndRefusesBadBuckets) {
  auto l = ParseS3Uri("s3://my-bucket/a/b/");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->bucket, "my-bucket");
  EXPECT_EQ(l->key, "a/b/");
  EXPECT_FALSE(ParseS3Uri("http://x/y").ok());
  EXPECT_FALSE(ParseS3Uri("s3://ab").ok());
  EXPECT_FALSE(ParseS3Uri("s3://Upper/x").ok());
  EXPECT_EQ(XmlValue("<Error><Code>NoSuchKey</Code></Error>", "Code"), "NoSuchKey");
  EXPECT_EQ(XmlValue("<a>", "Code"), "");
}

}  // namespace
}  // namespace neuron::dump
