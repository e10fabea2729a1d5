// input_output_alias: the text form read and written, checked against the
// entry, and which outputs can be written into their donated input's buffer.
#include "lib/hlo/input_output_alias.h"

#include "gtest/gtest.h"
#include "lib/hlo/module.h"
#include "lib/hlo/printer.h"
#include "lib/hlo/text_parser.h"
#include "lib/hlo/verifier.h"

namespace neuron::hlo {
namespace {

TEST(InputOutputAliasTest, ReadsAndWritesTheTextForm) {
  absl::StatusOr<std::vector<InputOutputAlias>> a =
      ParseInputOutputAlias("{ {0}: (0, {}, may-alias), {1, 2}: (3, {1}, must-alias), {}: (1, {}) }");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->size(), 3u);
  EXPECT_EQ((*a)[1].output_index, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ((*a)[1].parameter, 3);
  EXPECT_EQ((*a)[1].parameter_index, (std::vector<int64_t>{1}));
  EXPECT_TRUE((*a)[1].must_alias);
  EXPECT_FALSE((*a)[2].must_alias);
  absl::StatusOr<std::vector<InputOutputAlias>> again = ParseInputOutputAlias(FormatInputOutputAlias(*a));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *a);
  EXPECT_TRUE(ParseInputOutputAlias("{}")->empty());
}

TEST(InputOutputAliasTest, MalformedTextSaysWhatWasExpected) {
  for (const char* bad : {"", "{", "{ {0}: (0, {}, maybe) }", "{ {0} (0, {}) }", "{ {-1}: (0, {}) }",
                          "{ {0}: (-2, {}) }", "{ {0}: (99999999999999999999, {}) }", "{ {0}: (0, {}) } x"}) {
    absl::StatusOr<std::vector<InputOutputAlias>> a = ParseInputOutputAlias(bad);
    EXPECT_FALSE(a.ok()) << bad;
    EXPECT_NE(a.status().message().find("input_output_alias"), std::string::npos) << a.status();
  }
  // In a module, the parser names the line.
  auto m = ParseText("HloModule m, input_output_alias={ {0}: (0, {}, sometimes) }\n"
                     "ENTRY e { ROOT p = f32[2] parameter(0) }\n",
                     "m.hlo");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("sometimes"), std::string::npos) << m.status();
}

std::unique_ptr<Module> Parse(const std::string& alias, const std::string& body) {
  auto m = ParseText("HloModule m, input_output_alias=" + alias +
                         "\nadd { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }"
                         "\nENTRY e {\n" + body + "\n}\n",
                     "m.hlo");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

TEST(InputOutputAliasTest, TheVerifierChecksEachAliasAgainstTheEntry) {
  const std::string body = R"(
  w = f32[4] parameter(0)
  g = f32[4] parameter(1)
  n = f32[4] subtract(w, g)
  s = f32[2] slice(n), slice={[0:2]}
  ROOT t = (f32[4], f32[2]) tuple(n, s))";
  EXPECT_TRUE(Verify(*Parse("{ {0}: (0, {}, may-alias) }", body)).ok());
  // Another shape of the same bytes is a bitcast XLA accepts.
  EXPECT_TRUE(Verify(*Parse("{ {}: (0, {}) }", "w = f32[4] parameter(0)\nROOT r = f32[2,2] reshape(w)")).ok());
  struct Case {
    const char* alias;
    const char* says;
  } cases[] = {
      {"{ {1}: (0, {}, may-alias) }", "f32[2]"},              // sizes differ
      {"{ {2}: (0, {}, may-alias) }", "no array"},            // no such output
      {"{ {0}: (5, {}, may-alias) }", "2 parameters"},        // no such parameter
      {"{ {0}: (0, {1}, may-alias) }", "no array"},           // not a tuple
      {"{ {0}: (0, {}), {0}: (1, {}) }", "aliased twice"},    // one output twice
  };
  for (const Case& c : cases) {
    absl::Status s = Verify(*Parse(c.alias, body));
    EXPECT_FALSE(s.ok()) << c.alias;
    EXPECT_NE(s.message().find(c.says), std::string::npos) << c.alias << ": " << s;
  }
}

TEST(InputOutputAliasTest, ThePrinterKeepsTheAliases) {
  auto m = Parse("{ {0}: (0, {}, must-alias) }", "w = f32[4] parameter(0)\nROOT n = f32[4] negate(w)");
  const std::string printed = PrintModule(*m);
  auto again = ParseText(printed, "printed.hlo");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->config().input_output_alias, m->config().input_output_alias);
}

// The alias of output {} (an array root) or {0} (a tuple's first) to
// parameter 0.
bool InPlace(const std::string& body) {
  const bool tuple = body.find("tuple(") != std::string::npos;
  const std::string alias = tuple ? "{ {0}: (0, {}, may-alias) }" : "{ {}: (0, {}, may-alias) }";
  std::unique_ptr<Module> m = Parse(alias, body);
  return AliasRunsInPlace(*m->entry(), m->config().input_output_alias.at(0));
}

TEST(InputOutputAliasTest, OnlyLaneByLaneLastReadersRunInPlace) {
  // An optimizer's update reads each weight once, where it writes it.
  EXPECT_TRUE(InPlace(R"(
  w = f32[4] parameter(0)
  g = f32[4] parameter(1)
  ROOT n = f32[4] subtract(w, g))"));
  // The output is the input, unchanged.
  EXPECT_TRUE(InPlace("w = f32[4] parameter(0)\nROOT t = (f32[4]) tuple(w)"));
  // A cache updated in place.
  EXPECT_TRUE(InPlace(R"(
  c = f32[8] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[8] dynamic-update-slice(c, u, i))"));
  // Read again after the output is made: the input must survive.
  EXPECT_FALSE(InPlace(R"(
  w = f32[4] parameter(0)
  n = f32[4] negate(w)
  e = f32[4] exponential(w)
  ROOT t = (f32[4], f32[4]) tuple(n, e))"));
  // Returned as another output too.
  EXPECT_FALSE(InPlace(R"(
  w = f32[4] parameter(0)
  n = f32[4] negate(w)
  ROOT t = (f32[4], f32[4]) tuple(n, w))"));
  // Reads other lanes than it writes.
  EXPECT_FALSE(InPlace(R"(
  w = f32[2,2] parameter(0)
  ROOT t = f32[2,2] transpose(w), dimensions={1,0})"));
  EXPECT_FALSE(InPlace(R"(
  w = f32[2,2] parameter(0)
  ROOT d = f32[2,2] dot(w, w), lhs_contracting_dims={1}, rhs_contracting_dims={0})"));
  // Read earlier by a reduction: done before the output is made.
  EXPECT_TRUE(InPlace(R"(
  w = f32[4] parameter(0)
  z = f32[] constant(0)
  s = f32[] reduce(w, z), dimensions={0}, to_apply=add
  b = f32[4] broadcast(s), dimensions={}
  ROOT n = f32[4] subtract(w, b))"));
}

}  // namespace
}  // namespace neuron::hlo
