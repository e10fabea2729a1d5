// The input classifier: NEFFs (whole or cut short), HLO text and protos
// told apart by content, and other files named for what they are.
#include "lib/compiler/input_kind.h"

#include <string>

#include "gtest/gtest.h"
#include "lib/compiler/compiler.h"
#include "lib/neff/header.h"
#include "lib/program/proto_writer.h"
#include "tests/compiler/test_util.h"

namespace neuron::compiler::testing {
namespace {

TEST(InputKindTest, NeffsWholeOrTruncated) {
  absl::StatusOr<CompileResult> r = CompileText(kMlp, CompileOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ClassifyInput(r->neff).kind, InputKind::kNeff);
  // Cut inside the header: still a NEFF, so the loader says it is truncated.
  EXPECT_EQ(ClassifyInput(r->neff.substr(0, 927)).kind, InputKind::kNeff);
  EXPECT_TRUE(neff::LooksLikeNeff(r->neff.substr(0, neff::kSignatureSize)));
  EXPECT_FALSE(neff::LooksLikeNeff(r->neff.substr(0, neff::kSignatureSize - 1)));
  // A header_size other than 1024 is not a NEFF.
  std::string wrong = r->neff;
  wrong[8] = 0x01;
  EXPECT_NE(ClassifyInput(wrong).kind, InputKind::kNeff);
}

TEST(InputKindTest, HloTextAndProto) {
  EXPECT_EQ(ClassifyInput(kMlp).kind, InputKind::kHloText);
  EXPECT_EQ(ClassifyInput(std::string("// a comment\n  /* more */\n") + kMlp).kind, InputKind::kHloText);
  std::unique_ptr<hlo::Module> module = ParseOrDie(kMlp);
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::string> proto = program::WriteModuleProto(*module);
  ASSERT_TRUE(proto.ok()) << proto.status();
  EXPECT_EQ(ClassifyInput(*proto).kind, InputKind::kHloProto);
}

TEST(InputKindTest, OtherFilesAreDescribed) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "an empty file"},
      {std::string("\x93NUMPY\x01\x00v\x00{'descr': '<f4'}", 24), "a NumPy array"},
      {std::string("PK\x03\x04rest", 8), "a zip archive"},
      {std::string("\x1f\x8b\x08\x00", 4), "gzip-compressed data"},
      {std::string("\x28\xb5\x2f\xfd\x20\x00", 6), "zstd-compressed data"},
      {std::string("\x7f" "ELF\x02\x01\x01", 7), "an ELF executable"},
      {"  {\"outputs\": []}\n", "JSON"},
      {"ENTRY main {}\n", "text that is not HLO"},
      {std::string("\x00\x01\x02\xff", 4), "4 bytes of unrecognized binary data"},
  };
  for (const auto& [bytes, what] : cases) {
    const ClassifiedInput c = ClassifyInput(bytes);
    EXPECT_EQ(c.kind, InputKind::kOther) << what;
    EXPECT_EQ(c.description.rfind(what, 0), 0u) << c.description;
  }
}

}  // namespace
}  // namespace neuron::compiler::testing
