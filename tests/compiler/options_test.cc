// Option parsing: values, defaults, NEURON_CC_FLAGS precedence, shell
// splitting, usage errors with codes.
#include "gtest/gtest.h"
#include "lib/compiler/diagnostics.h"
#include "lib/compiler/options.h"

namespace neuron::compiler {
namespace {

absl::StatusOr<CompileOptions> Parse(std::vector<std::string> args, std::optional<std::string> env = std::nullopt) {
  args.insert(args.begin(), {"compile", "m.hlo"});
  auto p = ParseCommandLine(args, env);
  if (!p.ok()) return p.status();
  EXPECT_EQ(p->command, Command::kCompile);
  return p->options;
}

TEST(OptionsTest, DefaultsMatchNeuronxCc) {
  auto o = Parse({});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->input, "m.hlo");
  EXPECT_EQ(o->optlevel, 2);
  EXPECT_EQ(o->auto_cast, AutoCast::kNone);
  EXPECT_EQ(o->auto_cast_type, AutoCastType::kBf16);
  EXPECT_TRUE(o->mixed_precision_accumulation);
  EXPECT_EQ(o->output, "file.neff");
  EXPECT_EQ(o->logfile, "log-neuron-cc.txt");
  EXPECT_EQ(o->verbose, kWarning);
  EXPECT_EQ(o->lnc, 1);
  auto trn2 = Parse({"--target", "trn2"});
  ASSERT_TRUE(trn2.ok());
  EXPECT_EQ(trn2->lnc, 2);  // trn2's default LNC
}

TEST(OptionsTest, EveryOptionSetsItsField) {
  auto o = Parse({"--framework=XLA", "--target", "trn2", "--model-type", "transformer", "--auto-cast", "all",
                  "--auto-cast-type=fp8_e4m3", "--disable-mixed-precision-accumulation", "-O3", "-lnc", "1",
                  "--distribution-strategy", "llm-training", "--enable-fast-context-switch",
                  "--enable-fast-loading-neuron-binaries", "--enable-saturate-infinity", "--output", "o.neff",
                  "--logfile", "l.txt", "--verbose=35", "--fill-elided-constants", "random", "--verify-each-pass",
                  "--cache-dir", "/c", "--no-cache", "--retry-failed-compilation", "--execute-repetition=1",
                  "--enable-internal-neff-wrapper"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->target, "trn2");
  EXPECT_EQ(o->model_type, ModelType::kTransformer);
  EXPECT_EQ(o->auto_cast, AutoCast::kAll);
  EXPECT_EQ(o->auto_cast_type, AutoCastType::kFp8E4M3);
  EXPECT_FALSE(o->mixed_precision_accumulation);
  EXPECT_EQ(o->optlevel, 3);
  EXPECT_EQ(o->lnc, 1);
  EXPECT_EQ(o->distribution_strategy, "llm-training");
  EXPECT_TRUE(o->fast_context_switch);
  EXPECT_TRUE(o->fast_loading);
  EXPECT_TRUE(o->saturate_infinity);
  EXPECT_EQ(o->output, "o.neff");
  EXPECT_EQ(o->logfile, "l.txt");
  EXPECT_EQ(o->verbose, 35);
  EXPECT_EQ(o->fill_elided, ElidedFillMode::kRandom);
  EXPECT_TRUE(o->verify_each_pass);
  EXPECT_EQ(o->cache_dir, "/c");
  EXPECT_TRUE(o->no_cache);
  EXPECT_TRUE(o->retry_failed_compilation);
  EXPECT_EQ(o->ignored.size(), 2u);
}

TEST(OptionsTest, SpellingsOfOptlevelAndLnc) {
  for (auto args : std::vector<std::vector<std::string>>{{"-O1"}, {"-O", "1"}, {"--optlevel=1"}, {"--optlevel", "1"}}) {
    auto o = Parse(args);
    ASSERT_TRUE(o.ok()) << args[0];
    EXPECT_EQ(o->optlevel, 1);
  }
  for (auto args : std::vector<std::vector<std::string>>{{"--target=trn2", "-lnc=1"},
                                                         {"--target=trn2", "--logical-nc-config", "1"}}) {
    auto o = Parse(args);
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(o->lnc, 1);
  }
}

TEST(OptionsTest, NeuronCcFlagsApplyAndTheCommandLineWins) {
  auto o = Parse({"-O1"}, "--optlevel 3 --auto-cast matmult --logfile 'my log.txt'");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->optlevel, 1);                  // command line wins
  EXPECT_EQ(o->auto_cast, AutoCast::kMatmult);  // from the variable
  EXPECT_EQ(o->logfile, "my log.txt");        // quotes honoured
  auto rightmost = Parse({"-O1", "-O3"});
  ASSERT_TRUE(rightmost.ok());
  EXPECT_EQ(rightmost->optlevel, 3);
  auto bad_env = Parse({}, "--bogus-flag");
  ASSERT_FALSE(bad_env.ok());
  EXPECT_NE(bad_env.status().message().find("--bogus-flag"), std::string_view::npos);
  EXPECT_NE(bad_env.status().message().find("NEURON_CC_FLAGS"), std::string_view::npos);
  // A bad option on the command line does not blame a good NEURON_CC_FLAGS.
  auto bad_argv = Parse({"--bogus-flag"}, "-O1");
  ASSERT_FALSE(bad_argv.ok());
  EXPECT_EQ(bad_argv.status().message().find("NEURON_CC_FLAGS"), std::string_view::npos)
      << bad_argv.status();
  // Options go anywhere: before the file too.
  auto before = ParseCommandLine({"compile", "-O3", "--", "-odd-name.hlo"});
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(before->options.optlevel, 3);
  EXPECT_EQ(before->options.input, "-odd-name.hlo");
}

TEST(OptionsTest, ShellWords) {
  auto w = SplitShellWords(R"(  a "b c" 'd e' f\ g "h\"i"  )");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(*w, (std::vector<std::string>{"a", "b c", "d e", "f g", "h\"i"}));
  EXPECT_FALSE(SplitShellWords("'open").ok());
  EXPECT_TRUE(SplitShellWords("")->empty());
}

TEST(OptionsTest, UsageErrorsCarryCodesAndNameTheOption) {
  struct Case {
    std::vector<std::string> args;
    const char* needle;
    const char* code;
  } cases[] = {
      {{"--target", "trn9"}, "trn9", "NCC-E0101"},
      {{"--auto-cast", "some"}, "some", "NCC-E0101"},
      {{"-O4"}, "4", "NCC-E0101"},
      {{"--nope"}, "--nope", "NCC-E0101"},
      {{"--output"}, "--output", "NCC-E0101"},
      {{"--verbose", "loud"}, "loud", "NCC-E0101"},
      {{"--framework", "TF"}, "TF", "NCC-E0101"},
      {{"-lnc", "2"}, "trn2", "NCC-E0102"},  // lnc on trn1 (default target)
      {{"--target", "inf2", "-lnc", "1"}, "inf2", "NCC-E0102"},
  };
  for (const Case& c : cases) {
    auto o = Parse(c.args);
    ASSERT_FALSE(o.ok()) << c.args[0];
    EXPECT_NE(o.status().message().find(c.needle), std::string_view::npos) << o.status();
    EXPECT_EQ(ErrorCodeOf(o.status()), c.code) << o.status();
  }
  EXPECT_FALSE(ParseCommandLine({"compile"}).ok());                    // no file
  EXPECT_FALSE(ParseCommandLine({"compile", "a.hlo", "b.hlo"}).ok());  // two files
  EXPECT_FALSE(ParseCommandLine({"frobnicate"}).ok());
  EXPECT_FALSE(ParseCommandLine({"list-operators", "--framework", "TF"}).ok());
}

TEST(OptionsTest, CommandsAndCacheUrl) {
  EXPECT_FALSE(ParseCommandLine({}).ok());  // no command is a usage error
  EXPECT_EQ(ParseCommandLine({"help"})->command, Command::kHelp);
  EXPECT_EQ(ParseCommandLine({"-V"})->command, Command::kVersion);
  EXPECT_EQ(ParseCommandLine({"--version"})->command, Command::kVersion);
  EXPECT_EQ(ParseCommandLine({"list-operators", "--framework", "XLA"})->command, Command::kListOperators);
  EXPECT_EQ(ParseCommandLine({"compile", "--help"})->command, Command::kCompileHelp);
  auto local = ParseCommandLine({"compile", "m"}, std::nullopt, "/var/tmp/cache");
  EXPECT_EQ(local->options.cache_dir, "/var/tmp/cache");
  auto flag_wins = ParseCommandLine({"compile", "m", "--cache_dir=/mine"}, std::nullopt, "/var/tmp/cache");
  EXPECT_EQ(flag_wins->options.cache_dir, "/mine");
  auto s3 = ParseCommandLine({"compile", "m"}, std::nullopt, "s3://bucket/x");
  EXPECT_EQ(s3->options.cache_dir, "");
}

TEST(OptionsTest, HelpListsEveryOption) {
  std::string help = CompileHelp();
  for (const char* opt : {"--framework", "--target", "--model-type", "--auto-cast", "--auto-cast-type",
                          "--enable-mixed-precision-accumulation", "--disable-mixed-precision-accumulation",
                          "--optlevel", "-lnc", "--logical-nc-config", "--distribution-strategy",
                          "--enable-fast-context-switch", "--enable-fast-loading-neuron-binaries",
                          "--enable-saturate-infinity", "--output", "--logfile", "--verbose", "--cache-dir",
                          "--no-cache", "--retry-failed-compilation", "--fill-elided-constants",
                          "--verify-each-pass", "--name", "--execute-repetition", "NEURON_CC_FLAGS"}) {
    EXPECT_NE(help.find(opt), std::string::npos) << opt;
  }
}

}  // namespace
}  // namespace neuron::compiler
