// The shared option parser: GNU permutation, "--", "-" as an operand,
// "=" values, bundling, usage errors naming the option, subcommands, the
// generated --help.
#include "lib/support/options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace neuron::cli {
namespace {

// A tool with -p, -j, -n N, --out FILE, --level[=L], -s H..., -lnc N.
struct Seen {
  bool print = false, json = false;
  std::string n, out, level = "unset", lnc;
  std::vector<std::string> hosts;
};

Command TestCommand(Seen* seen) {
  Command c;
  c.tool = "tool";
  c.usage = "FILE [options]";
  c.description = "Does things.";
  c.options = {
      {'p', "print", Arg::kNone, "", "print",
       [seen](std::string_view) { seen->print = true; return absl::OkStatus(); }},
      {'j', "json", Arg::kNone, "", "json",
       [seen](std::string_view) { seen->json = true; return absl::OkStatus(); }},
      {'n', "count", Arg::kRequired, "N", "a count\nsecond line",
       [seen](std::string_view v) {
         if (v.find_first_not_of("0123456789") != std::string_view::npos || v.empty()) {
           return absl::InvalidArgumentError("expected a number");
         }
         seen->n = std::string(v);
         return absl::OkStatus();
       }},
      {0, "out", Arg::kRequired, "FILE", "output",
       [seen](std::string_view v) { seen->out = std::string(v); return absl::OkStatus(); }, "file"},
      {0, "level", Arg::kOptional, "L", "level",
       [seen](std::string_view v) { seen->level = std::string(v); return absl::OkStatus(); }},
      {'s', "hosts", Arg::kOneOrMore, "H", "hosts",
       [seen](std::string_view v) { seen->hosts.emplace_back(v); return absl::OkStatus(); }, {}, {},
       [](std::string_view w) { return w != "stop"; }},
      {0, "logical", Arg::kRequired, "N", "lnc",
       [seen](std::string_view v) { seen->lnc = std::string(v); return absl::OkStatus(); }, "1 2",
       {"-lnc", "--lnc_alias"}},
  };
  c.min_operands = 1;
  c.max_operands = 2;
  c.missing_operand = "no FILE given";
  return c;
}

ParsedArgs Parse(const Command& c, std::vector<std::string> args) { return ParseArgs(c, args); }

TEST(Options, OptionsAnywhereAmongOperands) {
  Seen seen;
  Command c = TestCommand(&seen);
  ParsedArgs p = Parse(c, {"a", "-p", "b", "--out", "o.txt"});
  ASSERT_EQ(p.action, ParsedArgs::kRun) << p.error;
  EXPECT_EQ(p.operands, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(seen.print);
  EXPECT_EQ(seen.out, "o.txt");
}

TEST(Options, DoubleDashEndsOptionsAndDashIsAnOperand) {
  Seen seen;
  Command c = TestCommand(&seen);
  ParsedArgs p = Parse(c, {"-", "--", "-p"});
  ASSERT_EQ(p.action, ParsedArgs::kRun) << p.error;
  EXPECT_EQ(p.operands, (std::vector<std::string>{"-", "-p"}));
  EXPECT_FALSE(seen.print);
}

TEST(Options, ValueSpellings) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"f", "--count=12"}, {"f", "--count", "12"}, {"f", "-n12"},
        {"f", "-n", "12"}, {"f", "-pjn12"}}) {
    Seen seen;
    Command c = TestCommand(&seen);
    ParsedArgs p = Parse(c, args);
    ASSERT_EQ(p.action, ParsedArgs::kRun) << args[1] << ": " << p.error;
    EXPECT_EQ(seen.n, "12") << args[1];
  }
  Seen seen;
  Command c = TestCommand(&seen);
  // A required value may start with '-' ("-" is stdout to many tools).
  ASSERT_EQ(Parse(c, {"f", "--out", "-"}).action, ParsedArgs::kRun);
  EXPECT_EQ(seen.out, "-");
  // An optional value only with '='.
  ASSERT_EQ(Parse(c, {"f", "--level"}).action, ParsedArgs::kRun);
  EXPECT_EQ(seen.level, "");
  ASSERT_EQ(Parse(c, {"f", "--level=3"}).action, ParsedArgs::kRun);
  EXPECT_EQ(seen.level, "3");
}

TEST(Options, BundledShortFlags) {
  Seen seen;
  Command c = TestCommand(&seen);
  ParsedArgs p = Parse(c, {"-pj", "f"});
  ASSERT_EQ(p.action, ParsedArgs::kRun) << p.error;
  EXPECT_TRUE(seen.print);
  EXPECT_TRUE(seen.json);
}

TEST(Options, AliasesAndSingleDashLongNames) {
  Seen seen;
  Command c = TestCommand(&seen);
  ASSERT_EQ(Parse(c, {"f", "-lnc", "2"}).action, ParsedArgs::kRun);
  EXPECT_EQ(seen.lnc, "2");
  ASSERT_EQ(Parse(c, {"f", "-lnc=1"}).action, ParsedArgs::kRun);
  EXPECT_EQ(seen.lnc, "1");
  ASSERT_EQ(Parse(c, {"f", "--lnc_alias", "3"}).action, ParsedArgs::kRun);
  EXPECT_EQ(seen.lnc, "3");
}

TEST(Options, OneOrMoreTakesWordsUntilAnOptionOrARefusal) {
  Seen seen;
  Command c = TestCommand(&seen);
  ParsedArgs p = Parse(c, {"-s", "a", "b", "stop", "-p"});
  ASSERT_EQ(p.action, ParsedArgs::kRun) << p.error;
  EXPECT_EQ(seen.hosts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(p.operands, (std::vector<std::string>{"stop"}));
  ASSERT_EQ(p.spans.size(), 3u);  // a, b, and -p
  EXPECT_EQ(p.spans[0].first, 0u);
  EXPECT_EQ(p.spans[1].first, 0u);
  EXPECT_EQ(p.spans[1].count, 3u);
  EXPECT_EQ(Parse(c, {"f", "-s", "-p"}).action, ParsedArgs::kError);
}

TEST(Options, UsageErrorsNameTheOption) {
  Seen seen;
  Command c = TestCommand(&seen);
  struct Case {
    std::vector<std::string> args;
    std::string error;
  } cases[] = {
      {{"f", "--bogus"}, "unknown option '--bogus'"},
      {{"f", "-x"}, "unknown option '-x'"},
      {{"f", "-px"}, "unknown option '-x'"},
      {{"f", "--count"}, "option '--count' needs a value"},
      {{"f", "-n"}, "option '-n' needs a value"},
      {{"f", "--json=yes"}, "option '--json' takes no value"},
      {{"f", "--count", "many"}, "--count 'many': expected a number"},
      {{"f", "-nmany"}, "-n 'many': expected a number"},
      {{}, "no FILE given"},
      {{"a", "b", "c"}, "unexpected argument 'c'"},
  };
  for (const Case& k : cases) {
    ParsedArgs p = Parse(c, k.args);
    EXPECT_EQ(p.action, ParsedArgs::kError) << k.error;
    EXPECT_EQ(p.error, k.error);
  }
}

TEST(Options, UsageErrorPrintsTwoLinesAndReturns2) {
  Seen seen;
  Command c = TestCommand(&seen);
  ParsedArgs p;
  ::testing::internal::CaptureStderr();
  const int rc = ParseCommandLine(c, {"f", "--bogus"}, &p);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 2);
  EXPECT_EQ(err, "tool: error: unknown option '--bogus'\nTry 'tool --help'.\n");
}

TEST(Options, HelpVersionAndCompletionStopParsing) {
  Seen seen;
  Command c = TestCommand(&seen);
  EXPECT_EQ(Parse(c, {"--help", "--bogus"}).action, ParsedArgs::kHelp);
  EXPECT_EQ(Parse(c, {"-h"}).action, ParsedArgs::kHelp);
  EXPECT_EQ(Parse(c, {"--version"}).action, ParsedArgs::kVersion);
  EXPECT_EQ(Parse(c, {"--bash-completion"}).action, ParsedArgs::kCompletion);
  c.version_short = 'V';
  EXPECT_EQ(Parse(c, {"-V"}).action, ParsedArgs::kVersion);
}

TEST(Options, HelpListsEveryVisibleOptionAligned) {
  Seen seen;
  Command c = TestCommand(&seen);
  c.notes = "Trailing notes.";
  const std::string help = HelpText(c);
  EXPECT_EQ(help.rfind("usage: tool FILE [options]\n\nDoes things.\n", 0), 0u) << help;
  for (const char* row : {"  -p, --print", "  -n, --count N", "      --out FILE", "      --level[=L]",
                          "  -s, --hosts H...", "      -lnc, --logical N", "  -h, --help",
                          "      --version"}) {
    EXPECT_NE(help.find(std::string("\n") + row + " "), std::string::npos) << row << "\n" << help;
  }
  EXPECT_EQ(help.find("--lnc_alias"), std::string::npos);
  EXPECT_EQ(help.find("--bash-completion"), std::string::npos);
  // Help texts start in one column; a continuation line lines up with them.
  const size_t a = help.find("a count");
  const size_t b = help.find("second line");
  ASSERT_NE(b, std::string::npos);
  EXPECT_EQ(a - help.rfind('\n', a), b - help.rfind('\n', b));
  EXPECT_NE(help.find("\nTrailing notes.\n"), std::string::npos);
}

TEST(Options, Subcommands) {
  Seen top, sub_seen;
  Command root;
  root.tool = "tool";
  root.usage = "COMMAND";
  root.options = {{'p', "print", Arg::kNone, "", "print",
                   [&](std::string_view) { top.print = true; return absl::OkStatus(); }}};
  root.max_operands = 0;
  Command sub = TestCommand(&sub_seen);
  sub.name = "run";
  root.subcommands.push_back(sub);
  ParsedArgs p = Parse(root, {"-p", "run", "f", "-p"});
  ASSERT_EQ(p.action, ParsedArgs::kRun) << p.error;
  EXPECT_EQ(p.command->name, "run");
  EXPECT_TRUE(top.print);
  EXPECT_TRUE(sub_seen.print);
  EXPECT_EQ(p.operands, (std::vector<std::string>{"f"}));
  p = Parse(root, {"walk"});
  EXPECT_EQ(p.action, ParsedArgs::kError);
  EXPECT_EQ(p.error, "unknown command 'walk' (run)");
  p = Parse(root, {"run", "--help"});
  EXPECT_EQ(p.action, ParsedArgs::kHelp);
  EXPECT_EQ(p.command->name, "run");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(ParseCommandLine(root, {"run", "f", "--nope"}, &p), 2);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("Try 'tool run --help'."),
            std::string::npos);
  const std::string help = HelpText(root);
  EXPECT_NE(help.find("\n  run FILE [options]"), std::string::npos) << help;
}

}  // namespace
}  // namespace neuron::cli
