#include "lib/neff/tar.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "lib/neff/error.h"
#include "tests/neff/test_archives.h"
#include "tests/support/tool_runner.h"

namespace neff {
namespace {

using neff_test::RawMember;
using neff_test::RawTar;

std::string WriteArchive(const std::vector<std::pair<std::string, std::string>>& files,
                         TarWriterOptions options = {}) {
  std::string out;
  StringSink sink(&out);
  TarWriter writer(&sink, options);
  for (const auto& [name, data] : files) EXPECT_TRUE(writer.AddFile(name, data).ok()) << name;
  EXPECT_TRUE(writer.Finish().ok());
  EXPECT_EQ(writer.offset(), out.size());
  return out;
}

// "<length> key=value\n", the length counting its own digits.
std::string PaxRecord(const std::string& key_value) {
  size_t body = key_value.size() + 2;
  size_t length = body + std::to_string(body).size();
  if (std::to_string(length).size() != std::to_string(body).size()) ++length;
  return std::to_string(length) + " " + key_value + "\n";
}

void ExpectRejected(const std::string& archive, const std::string& fragment) {
  absl::StatusOr<std::vector<TarEntry>> entries = ParseTar(archive);
  ASSERT_FALSE(entries.ok()) << "accepted an archive that should fail with: " << fragment;
  EXPECT_EQ(NrtStatusOf(entries.status()), NRT_INVALID);
  EXPECT_NE(entries.status().message().find(fragment), std::string::npos) << entries.status().message();
}

TEST(Tar, WriterOutputParsesBack) {
  std::string big(5000, 'b');
  std::string archive = WriteArchive({{"neff.json", "{}"}, {"constants/w.npy", big}, {"empty", ""}});
  EXPECT_EQ(archive.size() % 512, 0u);
  absl::StatusOr<std::vector<TarEntry>> entries = ParseTar(archive);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].name, "neff.json");
  EXPECT_EQ(archive.substr((*entries)[0].data_offset, 2), "{}");
  EXPECT_EQ((*entries)[1].name, "constants/w.npy");
  EXPECT_EQ((*entries)[1].size, 5000u);
  EXPECT_EQ(archive.substr((*entries)[1].data_offset, 5000), big);
  EXPECT_EQ((*entries)[2].size, 0u);
}

TEST(Tar, LongNamesUseThePrefixField) {
  std::string dir(120, 'd');
  std::string name = dir + "/" + std::string(90, 'f');
  ASSERT_TRUE(CheckMemberName(name).ok());
  std::string archive = WriteArchive({{name, "x"}});
  EXPECT_EQ(archive.substr(345, 120), dir);  // ustar prefix field
  absl::StatusOr<std::vector<TarEntry>> entries = ParseTar(archive);
  ASSERT_TRUE(entries.ok()) << entries.status();
  EXPECT_EQ((*entries)[0].name, name);
}

TEST(Tar, WriterRejectsUnsafeOrUnrepresentableNames) {
  const std::pair<std::string, std::string> cases[] = {
      {"/etc/passwd", "absolute path"},
      {"../escape", "'..'"},
      {"a/../../b", "'..'"},
      {"", "empty name"},
      {"a//b", "empty or '.'"},
      {"./a", "empty or '.'"},
      {std::string("a\0b", 3), "NUL"},
      {std::string(101, 'x'), "too long"},
      {std::string(156, 'p') + "/" + "f", "too long"},
      {std::string(300, 'x'), "too long"},
  };
  for (const auto& [name, fragment] : cases) {
    absl::Status status = CheckMemberName(name);
    ASSERT_FALSE(status.ok()) << name;
    EXPECT_EQ(NrtStatusOf(status), NRT_INVALID);
    EXPECT_NE(status.message().find(fragment), std::string::npos) << status.message();
  }
  std::string out;
  StringSink sink(&out);
  TarWriter writer(&sink, {});
  ASSERT_TRUE(writer.AddFile("a", "1").ok());
  absl::Status dup = writer.AddFile("a", "2");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.message().find("tar member 'a': duplicate"), std::string::npos);
}

TEST(Tar, ReaderRejectsHostileMembers) {
  ExpectRejected(RawTar({{"/etc/passwd", '0', "x"}}), "absolute path");
  ExpectRejected(RawTar({{"a/../../etc", '0', "x"}}), "'..'");
  ExpectRejected(RawTar({{"..", '5', ""}}), "'..'");
  ExpectRejected(RawTar({{"x", '0', "1"}, {"./x", '0', "2"}}), "duplicate");
  ExpectRejected(RawTar({{"link", '2', ""}}), "tar member 'link': type '2' is not a regular file");
  ExpectRejected(RawTar({{"hard", '1', ""}}), "type '1'");
  ExpectRejected(RawTar({{"dev", '3', ""}}), "type '3'");
  ExpectRejected(RawTar({{"bad", '0', "x", "", true}}), "checksum mismatch");
  ExpectRejected(RawTar({{"x", '0', "data"}}, /*end_marker=*/false), "no end-of-archive marker");
  ExpectRejected(RawTar({{"x", '0', "data"}}) + "junk" + std::string(508, '\0'), "after its end-of-archive");
  // A size larger than what follows the header.
  std::string archive = RawTar({{"x", '0', std::string(600, 'a')}});
  ExpectRejected(archive.substr(0, 512 + 512), "exceeds");
  ExpectRejected(std::string(512, 'z') + std::string(1024, '\0'), "checksum mismatch");
}

TEST(Tar, ReaderNormalizesNamesFromOtherTools) {
  std::string archive =
      RawTar({{"./", '5', ""}, {"./sg00/", '5', ""}, {"./sg00/def.json", '0', "{}"}, {"b", '\0', "1"}});
  absl::StatusOr<std::vector<TarEntry>> entries = ParseTar(archive);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].name, "sg00");
  EXPECT_TRUE((*entries)[0].is_directory);
  EXPECT_EQ((*entries)[1].name, "sg00/def.json");
  EXPECT_EQ((*entries)[2].name, "b");  // the old '\0' regular-file type
}

TEST(Tar, PaxPathAndSizeOverrideTheNextHeader) {
  std::string long_name = std::string(150, 'p') + "/" + std::string(150, 'q');
  std::string archive = RawTar({{"PaxHeader/x", 'x', PaxRecord("mtime=1") + PaxRecord("path=" + long_name)},
                                {"short", '0', "data"}});
  absl::StatusOr<std::vector<TarEntry>> entries = ParseTar(archive);
  ASSERT_TRUE(entries.ok()) << entries.status();
  EXPECT_EQ((*entries)[0].name, long_name);
  // A pax path may not smuggle in what the ustar name could not.
  ExpectRejected(RawTar({{"PaxHeader/x", 'x', PaxRecord("path=../../escape")}, {"ok", '0', "x"}}), "'..'");
  ExpectRejected(RawTar({{"PaxHeader/x", 'x', "99 path=x\n"}, {"ok", '0', "x"}}), "record length");
  ExpectRejected(RawTar({{"PaxHeader/x", 'x', PaxRecord("path=x")}}), "extended header with no member");
}

TEST(Tar, FastLoadingPaddingAlignsDataAndStaysInvisible) {
  TarWriterOptions options;
  options.align = 4096;
  options.base_offset = 1024;
  std::vector<std::pair<std::string, std::string>> files;
  for (int i = 0; i < 9; ++i) files.push_back({"m" + std::to_string(i), std::string(i * 700 + 1, 'a' + i)});
  std::string archive = WriteArchive(files, options);
  absl::StatusOr<std::vector<TarEntry>> entries = ParseTar(archive);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), files.size());  // padding is not a member
  for (size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ((1024 + (*entries)[i].data_offset) % 4096, 0u) << files[i].first;
    EXPECT_EQ(archive.substr((*entries)[i].data_offset, files[i].second.size()), files[i].second);
  }
}

TEST(Tar, GnuTarAgreesWithOurArchives) {
  if (std::system("tar --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "NOTICE: no tar on PATH";
  std::string dir = neuron::testing::MakeTempDir();
  TarWriterOptions options;
  options.align = 4096;
  options.base_offset = 1024;
  std::string archive = WriteArchive({{"neff.json", "{}"}, {"constants/w.npy", std::string(3000, 'w')}}, options);
  std::ofstream(dir + "/a.tar", std::ios::binary) << archive;
  std::string cmd = "cd " + dir + " && tar xf a.tar && tar tf a.tar > list && cat constants/w.npy | wc -c > size";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream list(dir + "/list");
  std::string l1, l2, l3;
  std::getline(list, l1);
  std::getline(list, l2);
  EXPECT_EQ(l1, "neff.json");
  EXPECT_EQ(l2, "constants/w.npy");
  EXPECT_FALSE(std::getline(list, l3)) << "unexpected member " << l3;
  std::ifstream size(dir + "/size");
  int n = 0;
  size >> n;
  EXPECT_EQ(n, 3000);
  // And the other way: an archive GNU tar made (with its "./" names).
  cmd = "cd " + dir + " && mkdir -p in/sg00 && echo hi > in/sg00/def.json && tar cf b.tar -C in .";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream b(dir + "/b.tar", std::ios::binary);
  std::string theirs((std::istreambuf_iterator<char>(b)), std::istreambuf_iterator<char>());
  absl::StatusOr<std::vector<TarEntry>> entries = ParseTar(theirs);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].name, "sg00");
  EXPECT_EQ((*entries)[1].name, "sg00/def.json");
  EXPECT_EQ(theirs.substr((*entries)[1].data_offset, 3), "hi\n");
}

TEST(Tar, NumbersUseOctalOrBase256) {
  EXPECT_EQ(EncodeTarNumber(0644, 8), std::string("0000644\0", 8));
  EXPECT_EQ(*DecodeTarNumber(std::string("0000644\0", 8)), 0644u);
  EXPECT_EQ(*DecodeTarNumber("   17 \0"), 017u);
  uint64_t nine_gib = 9ull << 30;  // beyond 11 octal digits
  std::string field = EncodeTarNumber(nine_gib, 12);
  ASSERT_EQ(field.size(), 12u);
  EXPECT_EQ(static_cast<unsigned char>(field[0]), 0x80);
  EXPECT_EQ(*DecodeTarNumber(field), nine_gib);
  EXPECT_EQ(*DecodeTarNumber(EncodeTarNumber(077777777777ull, 12)), 077777777777ull);
  EXPECT_FALSE(DecodeTarNumber("12389").ok());
  EXPECT_FALSE(DecodeTarNumber(std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 12)).ok());
}

}  // namespace
}  // namespace neff
