// neuron-compile as a tool: commands, NEURON_CC_FLAGS, verbosity streams,
// log file, output to stdout, bad inputs (one line, exit 1, no crash),
// the compile cache (hit, failure, retry, concurrent), the error-code doc.
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>
#include <thread>

#include "gtest/gtest.h"
#include "lib/compiler/error_codes.h"
#include "lib/compiler/supported_ops.h"
#include "lib/neff/neff.h"
#include "lib/program/package.h"
#include "tests/compiler/test_util.h"
#include "tests/support/tool_runner.h"

namespace neuron::compiler {
namespace {

namespace fs = std::filesystem;
using neuron::testing::MakeTempDir;
using neuron::testing::RunTool;
using neuron::testing::ToolOptions;
using neuron::testing::ToolResult;

std::string Write(const std::string& dir, const std::string& name, std::string_view data) {
  std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary).write(data.data(), static_cast<std::streamsize>(data.size()));
  return path;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

ToolResult Compile(const std::string& dir, std::vector<std::string> args, ToolOptions opts = {}) {
  args.insert(args.begin(), "compile");
  opts.cwd = dir;
  return RunTool("neuron-compile", args, opts);
}

TEST(ToolTest, HelpVersionAndListOperators) {
  ToolResult help = RunTool("neuron-compile", {"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("list-operators"), std::string::npos);
  ToolResult chelp = RunTool("neuron-compile", {"compile", "--help"});
  EXPECT_EQ(chelp.exit_code, 0);
  EXPECT_EQ(chelp.out, CompileHelp());
  ToolResult version = RunTool("neuron-compile", {"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("neuron-compile"), std::string::npos);
  ToolResult ops = RunTool("neuron-compile", {"list-operators", "--framework", "XLA"});
  EXPECT_EQ(ops.exit_code, 0);
  EXPECT_EQ(Lines(ops.out), static_cast<int>(SupportedOperators().size() + LoweredCustomCallTargets().size()));
  EXPECT_NE(ops.out.find("\ncustom-call:__cublas$gemm\n"), std::string::npos);
  EXPECT_NE(ops.out.find("\ncustom-call:AwsNeuronRmsNorm\n"), std::string::npos);
  EXPECT_NE(ops.out.find("\ncustom-call:AwsNeuronTopK\n"), std::string::npos);
  EXPECT_NE(ops.out.find("\ndot\n"), std::string::npos);
  EXPECT_NE(ops.out.find("\nfft\n"), std::string::npos);  // the executor runs it
  EXPECT_EQ(ops.out.find("\nsend\n"), std::string::npos);
  ToolResult bad = RunTool("neuron-compile", {"compile", "x.hlo", "--bogus"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(Lines(bad.err), 2);  // the error, then the Try hint
  EXPECT_NE(bad.err.find("--bogus"), std::string::npos);
  EXPECT_NE(bad.err.find("\nTry 'neuron-compile compile --help'.\n"), std::string::npos) << bad.err;
  // The hint to check NEURON_CC_FLAGS only where the bad option came from it.
  EXPECT_EQ(bad.err.find("NEURON_CC_FLAGS"), std::string::npos) << bad.err;
  ToolOptions flags;
  flags.env["NEURON_CC_FLAGS"] = "--bogus";
  ToolResult bad_flags = RunTool("neuron-compile", {"compile", "x.hlo"}, flags);
  EXPECT_EQ(bad_flags.exit_code, 2);
  EXPECT_NE(bad_flags.err.find("check NEURON_CC_FLAGS too"), std::string::npos) << bad_flags.err;
  ToolOptions good_flags;
  good_flags.env["NEURON_CC_FLAGS"] = "-O1";
  ToolResult bad_argv = RunTool("neuron-compile", {"compile", "x.hlo", "--bogus"}, good_flags);
  EXPECT_EQ(bad_argv.exit_code, 2);
  EXPECT_EQ(bad_argv.err.find("NEURON_CC_FLAGS"), std::string::npos) << bad_argv.err;
  // No command at all is a usage error too: one line and the hint, exit 2.
  ToolResult none = RunTool("neuron-compile", {});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_TRUE(none.out.empty()) << none.out;
  EXPECT_EQ(Lines(none.err), 2) << none.err;
  EXPECT_NE(none.err.find("give a command"), std::string::npos) << none.err;
}

TEST(ToolTest, CompilesWritesNeffAndLog) {
  std::string dir = MakeTempDir();
  Write(dir, "mlp.hlo", testing::kMlp);
  ToolResult r = Compile(dir, {"mlp.hlo", "--framework", "XLA", "--target", "trn1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;  // default verbosity: warnings only
  std::string neff = ReadAll(dir + "/file.neff");  // the default output
  auto pkg = neff::Read(neff, neff::ReadOptions{});
  ASSERT_TRUE(pkg.ok()) << pkg.status();
  EXPECT_TRUE(program::Deserialize(*pkg).ok());
  std::string log = ReadAll(dir + "/log-neuron-cc.txt");  // the default log file, always full
  EXPECT_NE(log.find("pass elementwise-fusion"), std::string::npos);
  EXPECT_NE(log.find("buffer assignment"), std::string::npos);
}

TEST(ToolTest, VerbosityInfoGoesToStdoutUnlessTheNeffDoes) {
  std::string dir = MakeTempDir();
  Write(dir, "mlp.hlo", testing::kMlp);
  ToolResult info = Compile(dir, {"mlp.hlo", "--verbose", "info", "--output", "a.neff", "--logfile", ""});
  ASSERT_EQ(info.exit_code, 0);
  EXPECT_NE(info.out.find("pass cse"), std::string::npos);  // per-pass times and counts
  EXPECT_NE(info.out.find("instructions"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir + "/log-neuron-cc.txt"));
  ToolResult numeric = Compile(dir, {"mlp.hlo", "--verbose=35", "--output", "b.neff"});
  EXPECT_TRUE(numeric.out.empty());
  ToolResult to_stdout = Compile(dir, {"mlp.hlo", "--verbose", "info", "--output", "-"});
  ASSERT_EQ(to_stdout.exit_code, 0);
  EXPECT_TRUE(neff::Read(to_stdout.out, neff::ReadOptions{}).ok());  // stdout is only the NEFF
  EXPECT_NE(to_stdout.err.find("pass cse"), std::string::npos);
}

TEST(ToolTest, NeuronCcFlagsApplyAndCommandLineWins) {
  std::string dir = MakeTempDir();
  Write(dir, "mlp.hlo", testing::kMlp);
  ToolOptions env;
  env.env["NEURON_CC_FLAGS"] = "--auto-cast matmult -O1 --target trn2";
  ToolResult r = Compile(dir, {"mlp.hlo", "-O3", "--output", "x.neff"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto pkg = neff::Read(ReadAll(dir + "/x.neff"), neff::ReadOptions{});
  auto m = program::ReadManifest(*pkg);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->auto_cast, "matmult");
  EXPECT_EQ(m->optlevel, 3);
  EXPECT_EQ(m->target, "trn2");
  EXPECT_EQ(m->lnc, 2);
  env.env["NEURON_CC_FLAGS"] = "--execute-repetition=1 --enable-internal-neff-wrapper";
  EXPECT_EQ(Compile(dir, {"mlp.hlo", "--output", "y.neff"}, env).exit_code, 0);
  env.env["NEURON_CC_FLAGS"] = "--no-such-flag";
  ToolResult bad = Compile(dir, {"mlp.hlo"}, env);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--no-such-flag"), std::string::npos);
}

TEST(ToolTest, BadInputsGiveOneLineAndExitOne) {
  std::string dir = MakeTempDir();
  // A valid binary proto to damage.
  auto m = testing::ParseOrDie(testing::kMlp);
  auto r = testing::CompileText(testing::kMlp, CompileOptions{});
  ASSERT_TRUE(r.ok());
  auto pkg = neff::Read(r->neff, neff::ReadOptions{});
  std::string pb(pkg->Find("program.pb")->data);
  std::string text = testing::kMlp;
  std::vector<std::pair<std::string, std::string>> cases = {
      {"empty.pb", ""},
      {"empty.hlo", "   \n"},
      {"trunc.pb", pb.substr(0, pb.size() / 2)},
      {"trunc.hlo", text.substr(0, text.size() / 2)},
      {"garbage.pb", std::string("\x0a\xff\xff\xff\xff\x0f garbage", 14)},
  };
  for (size_t i = 0; i < pb.size(); i += std::max<size_t>(1, pb.size() / 7)) {
    std::string flipped = pb;
    flipped[i] ^= 0x5a;
    cases.push_back({"flip" + std::to_string(i) + ".pb", flipped});
  }
  for (size_t i = 10; i < text.size(); i += text.size() / 5) {
    std::string flipped = text;
    flipped[i] ^= 0x21;
    cases.push_back({"flip" + std::to_string(i) + ".hlo", flipped});
  }
  for (const auto& [name, data] : cases) {
    Write(dir, name, data);
    ToolResult t = Compile(dir, {name, "--output", "out.neff", "--logfile", ""});
    EXPECT_FALSE(t.signaled) << name;
    if (t.exit_code == 0) continue;  // a flip may leave a valid module
    EXPECT_EQ(t.exit_code, 1) << name << ": " << t.err;
    EXPECT_EQ(Lines(t.err), 1) << name << ": " << t.err;
    EXPECT_NE(t.err.find("neuron-compile: error: NCC-E"), std::string::npos) << t.err;
  }
  ToolResult missing = Compile(dir, {"nope.hlo"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("NCC-E0001"), std::string::npos);
  ToolOptions in;
  in.stdin_data = testing::kMlp;
  EXPECT_EQ(Compile(dir, {"-", "--output", "s.neff"}, in).exit_code, 0);
  ToolResult unwritable = Compile(dir, {"-", "--output", "/nonexistent/dir/x.neff"}, in);
  EXPECT_EQ(unwritable.exit_code, 1);
  EXPECT_NE(unwritable.err.find("NCC-E0301"), std::string::npos);
  // An output that is a directory: the message says so (not "Success").
  fs::create_directory(dir + "/dd");
  ToolResult into_dir = Compile(dir, {"-", "--output", "dd"}, in);
  EXPECT_EQ(into_dir.exit_code, 1);
  EXPECT_NE(into_dir.err.find("cannot write 'dd': it is a directory"), std::string::npos)
      << into_dir.err;
  EXPECT_TRUE(fs::is_directory(dir + "/dd"));
  EXPECT_TRUE(fs::is_empty(dir + "/dd")) << "no temporary file is left behind";
  // A log file in a folder that does not exist: refused, not dropped.
  ToolResult bad_log = Compile(dir, {"-", "--output", "l.neff", "--logfile", "no/such/dir/log.txt"}, in);
  EXPECT_EQ(bad_log.exit_code, 1);
  EXPECT_NE(bad_log.err.find("cannot write the log file 'no/such/dir/log.txt'"), std::string::npos)
      << bad_log.err;
  EXPECT_FALSE(fs::exists(dir + "/l.neff"));
}

TEST(ToolTest, CacheHitFailureRetryAndConcurrency) {
  std::string dir = MakeTempDir();
  std::string cache = dir + "/cache";
  Write(dir, "mlp.hlo", testing::kMlp);
  std::vector<std::string> args = {"mlp.hlo", "--cache-dir", cache, "--verbose", "info", "--logfile", ""};
  auto with_out = [&](std::string out) {
    std::vector<std::string> a = args;
    a.push_back("--output");
    a.push_back(out);
    return a;
  };
  ToolResult first = Compile(dir, with_out("1.neff"));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("Compile cache path:"), std::string::npos);
  EXPECT_EQ(first.out.find("Using a cached neff"), std::string::npos);
  ToolResult second = Compile(dir, with_out("2.neff"));
  ASSERT_EQ(second.exit_code, 0);
  EXPECT_NE(second.out.find("Using a cached neff at"), std::string::npos);
  EXPECT_EQ(ReadAll(dir + "/1.neff"), ReadAll(dir + "/2.neff"));
  // Another option: another entry.
  ToolResult o1 = Compile(dir, {"mlp.hlo", "--cache-dir", cache, "-O1", "--output", "3.neff", "--verbose", "info"});
  EXPECT_EQ(o1.out.find("Using a cached neff"), std::string::npos);
  // The entry layout.
  int entries = 0;
  for (const auto& e : fs::recursive_directory_iterator(cache)) {
    if (e.path().filename() == "model.done") {
      ++entries;
      EXPECT_TRUE(fs::exists(e.path().parent_path() / "model.neff"));
      EXPECT_TRUE(fs::exists(e.path().parent_path() / "model.log"));
      EXPECT_EQ(e.path().parent_path().filename().string().rfind("MODULE_", 0), 0u);
    }
  }
  EXPECT_EQ(entries, 2);
  // A failed compile is remembered.
  Write(dir, "bad.hlo", "HloModule bad\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT f = f32[2] fft-ish(p)\n}\n");
  ToolResult fail1 = Compile(dir, {"bad.hlo", "--cache-dir", cache, "--logfile", ""});
  EXPECT_EQ(fail1.exit_code, 1);
  EXPECT_NE(fail1.err.find("NCC-E0201"), std::string::npos);
  ToolResult fail2 = Compile(dir, {"bad.hlo", "--cache-dir", cache, "--logfile", ""});
  EXPECT_EQ(fail2.exit_code, 1);
  EXPECT_NE(fail2.err.find("Got a cached failed neff"), std::string::npos) << fail2.err;
  EXPECT_NE(fail2.err.find("NCC-E0302"), std::string::npos);
  ToolResult retry = Compile(dir, {"bad.hlo", "--cache-dir", cache, "--retry-failed-compilation", "--logfile", ""});
  EXPECT_EQ(retry.exit_code, 1);
  EXPECT_NE(retry.err.find("NCC-E0201"), std::string::npos);
  ToolResult nocache = Compile(dir, {"bad.hlo", "--cache-dir", cache, "--no-cache", "--logfile", ""});
  EXPECT_NE(nocache.err.find("NCC-E0201"), std::string::npos);
  // The environment variable names the cache too.
  ToolOptions env;
  env.env["NEURON_COMPILE_CACHE_URL"] = cache;
  ToolResult via_env = Compile(dir, {"mlp.hlo", "--output", "4.neff", "--verbose", "info", "--logfile", ""}, env);
  EXPECT_NE(via_env.out.find("Using a cached neff"), std::string::npos);
}

TEST(ToolTest, ConcurrentCompilesOfOneModuleNeverTearTheCache) {
  std::string dir = MakeTempDir();
  std::string cache = dir + "/cache";
  Write(dir, "mlp.hlo", testing::kMlp);
  std::vector<ToolResult> results(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      results[i] = Compile(dir, {"mlp.hlo", "--cache-dir", cache, "--output", "c" + std::to_string(i) + ".neff",
                                 "--logfile", ""});
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(results[i].exit_code, 0) << results[i].err;
    EXPECT_TRUE(neff::Read(ReadAll(dir + "/c" + std::to_string(i) + ".neff"), neff::ReadOptions{}).ok());
  }
  int entries = 0, temps = 0;
  for (const auto& e : fs::recursive_directory_iterator(cache)) {
    if (e.path().filename() == "model.done") ++entries;
    if (e.path().filename().string().rfind(".tmp-", 0) == 0) ++temps;
  }
  EXPECT_EQ(entries, 1);
  EXPECT_EQ(temps, 0);
}

TEST(ErrorCodesTest, DocMatchesTheTableAndCodesAreUnique) {
  std::set<std::string> codes;
  for (const ErrorCode& e : AllErrorCodes()) {
    EXPECT_TRUE(codes.insert(e.code).second) << e.code;
    EXPECT_EQ(std::string(e.code).rfind("NCC-E", 0), 0u);
    EXPECT_GT(std::strlen(e.cause), 20u) << e.code;
    EXPECT_GT(std::strlen(e.fix), 20u) << e.code;
  }
  std::string repo = neuron::testing::ToolDir() + "/..";  // out*/ sits at the repository root
  std::string doc_path = repo + "/docs/error-codes.md";
  std::string generated = RenderErrorCodesMarkdown();
  if (std::getenv("NEURON_UPDATE_DOCS")) std::ofstream(doc_path) << generated;
  EXPECT_EQ(ReadAll(doc_path), generated)
      << "docs/error-codes.md is stale: rerun with NEURON_UPDATE_DOCS=1 out/compiler_tests "
         "--gtest_filter=ErrorCodesTest.*";
}

}  // namespace
}  // namespace neuron::compiler
