// neuron-exec and neuron-load given HLO instead of a NEFF (compiled in
// memory with neuron-compile's options and cache), and given files that
// are neither (each named for what it is).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/hlo/load.h"
#include "lib/program/proto_writer.h"
#include "lib/literal_io/npy_literal.h"
#include "lib/literal_io/literal_text.h"
#include "nlohmann/json.hpp"
#include "tests/device/fast_temp_dir.h"
#include "tests/runtime/test_neff.h"
#include "tests/support/tool_runner.h"

namespace neuron::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// x * y + x: fused into one instruction at -O2 and -O3, so its result name
// only survives when taken from the HLO as written.
constexpr char kFusedHlo[] = R"(HloModule fma
ENTRY main {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  m = f32[2,3] multiply(x, y)
  ROOT r = f32[2,3] add(m, x)
}
)";

constexpr char kPairHlo[] = R"(HloModule pair
ENTRY main {
  x = f32[3] parameter(0)
  n = f32[3] negate(x)
  d = f32[3] add(x, x)
  ROOT t = (f32[3], f32[3]) tuple(n, d)
}
)";

class ModelInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FastTempDir();
    options_.env["NEURON_SIM_ROOT"] = dir_ + "/sim";
    options_.env["NEURON_RT_LOG_LEVEL"] = "WARN";
  }

  ToolResult Exec(const std::vector<std::string>& args, const ToolOptions* o = nullptr) {
    return RunTool("neuron-exec", args, o ? *o : options_);
  }

  // One error line naming `needle`, exit status 1.
  static void ExpectRefused(const ToolResult& r, const std::string& tool, const std::string& needle) {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind(tool + ": error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  }

  std::string dir_;
  ToolOptions options_;
};

TEST_F(ModelInputTest, HloTextRunsDirectly) {
  const std::string hlo = WriteTestFile(dir_, "fma.txt", kFusedHlo);  // the name says nothing
  ToolResult r = Exec({hlo, "-i", "x=2x3xf32=1,2,3,4,5,6", "-i", "y=2x3xf32=2", "-p", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["input_kind"], "hlo-text");
  EXPECT_EQ(j["target"], "trn1");  // the simulated device's
  EXPECT_EQ(j["outputs"][0]["printed"], "2x3xf32=[3 6 9][12 15 18]");
  ToolResult load = RunTool("neuron-load", {hlo}, options_);
  ASSERT_EQ(load.exit_code, 0) << load.err;
  EXPECT_NE(load.out.find("(compiled from HLO), 2 inputs, 1 outputs"), std::string::npos) << load.out;
}

TEST_F(ModelInputTest, HloProtoAndStdinRunDirectly) {
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::LoadModule(kFusedHlo, "fma");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::string> proto = program::WriteModuleProto(**module);
  ASSERT_TRUE(proto.ok()) << proto.status();
  const std::string pb = WriteTestFile(dir_, "fma.hlo", *proto);  // binary despite its name
  ToolResult r = Exec({pb, "-i", "x=2x3xf32=1", "-i", "y=2x3xf32=3", "-p", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["input_kind"], "hlo-proto");
  EXPECT_EQ(json::parse(r.out)["outputs"][0]["printed"], "2x3xf32=[4 4 4][4 4 4]");
  // A path that is a pipe is read once: /dev/stdin here, as <(...) would be.
  absl::StatusOr<std::string> neff = BuildTestNeff(kFusedHlo);
  ASSERT_TRUE(neff.ok()) << neff.status();
  for (const std::string& bytes : {*neff, std::string(kFusedHlo)}) {
    ToolOptions o = options_;
    o.stdin_data = bytes;
    ToolResult piped = Exec({"/dev/stdin", "-i", "x=2x3xf32=1", "-i", "y=2x3xf32=3", "-p"}, &o);
    ASSERT_EQ(piped.exit_code, 0) << piped.err;
    EXPECT_EQ(piped.out, "result[0]: 2x3xf32=[4 4 4][4 4 4]\n");
  }
  for (const std::string& bytes : {std::string(kFusedHlo), *proto}) {
    ToolOptions o = options_;
    o.stdin_data = bytes;
    ToolResult piped = Exec({"-", "-i", "x=2x3xf32=1", "-i", "y=2x3xf32=3", "-p"}, &o);
    ASSERT_EQ(piped.exit_code, 0) << piped.err;
    EXPECT_EQ(piped.out, "result[0]: 2x3xf32=[4 4 4][4 4 4]\n");
    ToolResult loaded = RunTool("neuron-load", {"-", "--json", "--cores", "0-1"}, o);
    ASSERT_EQ(loaded.exit_code, 0) << loaded.err;
    EXPECT_EQ(json::parse(loaded.out)["cores"].size(), 2u);
  }
}

// The names users see are the HLO's: the root for a single result,
// output<k> for the leaves of a tuple; the same at every level.
TEST_F(ModelInputTest, OutputNamesAreTheHlosAtEveryLevel) {
  const std::string fused = WriteTestFile(dir_, "fma.hlo", kFusedHlo);
  const std::string pair = WriteTestFile(dir_, "pair.hlo", kPairHlo);
  for (const char* level : {"-O1", "-O2", "-O3"}) {
    SCOPED_TRACE(level);
    ToolResult r = Exec({fused, level, "--random-inputs", "--output-dir", dir_ + "/o"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::ifstream in(dir_ + "/o/outputs.json");
    json j = json::parse(in);
    ASSERT_EQ(j["outputs"].size(), 1u);
    EXPECT_EQ(j["outputs"][0]["name"], "r");
    // -o and --expect find the result by that name.
    ToolResult named = Exec({fused, level, "--random-inputs", "-o", "r=" + dir_ + "/r.npy"});
    EXPECT_EQ(named.exit_code, 0) << named.err;
    ToolResult t = Exec({pair, level, "-i", "x=3xf32=1,2,3", "--json", "-p"});
    ASSERT_EQ(t.exit_code, 0) << t.err;
    json tj = json::parse(t.out);
    ASSERT_EQ(tj["outputs"].size(), 2u);
    EXPECT_EQ(tj["outputs"][0]["name"], "output0");
    EXPECT_EQ(tj["outputs"][1]["name"], "output1");
    EXPECT_EQ(tj["outputs"][1]["printed"], "3xf32=[2 4 6]");
  }
}

TEST_F(ModelInputTest, TargetAndOptlevelAreNeuronCompiles) {
  const std::string hlo = WriteTestFile(dir_, "fma.hlo", kFusedHlo);
  // Another generation than the device's: refused at load, saying so.
  ToolResult other = Exec({hlo, "--target", "trn2", "--random-inputs"});
  ExpectRefused(other, "neuron-exec", "compiled for trn2");
  EXPECT_NE(other.err.find("NEURON_SIM_INSTANCE_TYPE=trn2"), std::string::npos) << other.err;
  // Without --target the NEFF is for the simulated device, LNC included.
  ToolOptions trn2 = options_;
  trn2.env["NEURON_SIM_INSTANCE_TYPE"] = "trn2.3xlarge";
  ToolResult on_trn2 = Exec({hlo, "--random-inputs", "--json"}, &trn2);
  ASSERT_EQ(on_trn2.exit_code, 0) << on_trn2.err;
  EXPECT_EQ(json::parse(on_trn2.out)["target"], "trn2");
  // NEURON_CC_FLAGS applies, the command line wins.
  ToolOptions flags = options_;
  flags.env["NEURON_CC_FLAGS"] = "--target trn2";
  EXPECT_EQ(Exec({hlo, "--random-inputs"}, &flags).exit_code, 1);
  EXPECT_EQ(Exec({hlo, "--random-inputs", "--target", "trn1"}, &flags).exit_code, 0);
  for (const char* bad : {"--target=trn9", "-O7", "--optlevel=0"}) {
    for (const char* tool : {"neuron-exec", "neuron-load"}) {
      ToolResult r = RunTool(tool, {hlo, bad}, options_);
      EXPECT_EQ(r.exit_code, 2) << tool << " " << bad;
      EXPECT_NE(r.err.find("expected"), std::string::npos) << r.err;
    }
  }
}

// The compile cache is neuron-compile's: the entry an HLO input was
// compiled into is the one the next run uses.
TEST_F(ModelInputTest, CompileCacheIsUsed) {
  const std::string cache = dir_ + "/cache";
  options_.env["NEURON_COMPILE_CACHE_URL"] = cache;
  const std::string hlo = WriteTestFile(dir_, "fma.hlo", kFusedHlo);
  const std::vector<std::string> args = {hlo, "-i", "x=2x3xf32=1", "-i", "y=2x3xf32=3", "-p"};
  ToolResult first = Exec(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, "result[0]: 2x3xf32=[4 4 4][4 4 4]\n");
  std::vector<fs::path> neffs;
  for (const auto& e : fs::recursive_directory_iterator(cache)) {
    if (e.path().filename() == "model.neff") neffs.push_back(e.path());
  }
  ASSERT_EQ(neffs.size(), 1u);
  // Swap the cached NEFF for one that subtracts: the next run must use it.
  absl::StatusOr<std::string> sub = BuildTestNeff(R"(HloModule fma
ENTRY main {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  ROOT r = f32[2,3] subtract(x, y)
}
)");
  ASSERT_TRUE(sub.ok()) << sub.status();
  WriteTestFile(neffs[0].parent_path().string(), "model.neff", *sub);
  ToolResult second = Exec(args);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, "result[0]: 2x3xf32=[-2 -2 -2][-2 -2 -2]\n");
}

// A module that does not compile fails with one line, the compiler's
// message; a cached failure too (no warning line before it).
TEST_F(ModelInputTest, CompileErrorsAreOneLine) {
  options_.env["NEURON_COMPILE_CACHE_URL"] = dir_ + "/cache";
  const std::string bad = WriteTestFile(dir_, "bad.hlo", R"(HloModule bad
ENTRY main {
  x = f32[4] parameter(0)
  ROOT y = f32[4] frobnicate(x)
}
)");
  ExpectRefused(Exec({bad, "--random-inputs"}), "neuron-exec",
                "cannot compile " + bad + ": NCC-E0201: unsupported operator 'frobnicate'");
  ToolResult cached = RunTool("neuron-load", {bad}, options_);
  ExpectRefused(cached, "neuron-load", "cached failure");
  EXPECT_NE(cached.err.find("frobnicate"), std::string::npos) << cached.err;
  ToolOptions flags = options_;
  flags.env["NEURON_CC_FLAGS"] = "--no-such-option";
  ExpectRefused(Exec({WriteTestFile(dir_, "ok.hlo", kFusedHlo), "--random-inputs"}, &flags), "neuron-exec",
                "NEURON_CC_FLAGS: ");
}

TEST_F(ModelInputTest, OtherFilesAreNamedForWhatTheyAre) {
  const std::string npy = WriteTestFile(dir_, "x.npy", literal_io::NpyBytes(*literal_io::ParseInlineTensor("2xf32=1")));
  const std::string empty = WriteTestFile(dir_, "empty.neff", "");
  const std::string gz = WriteTestFile(dir_, "m.neff", std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00", 8));
  const std::string zst = WriteTestFile(dir_, "m.zst", std::string("\x28\xb5\x2f\xfd\x00\x00", 6));
  const std::string js = WriteTestFile(dir_, "m.json", "{\"hlo\": 1}\n");
  const std::string text = WriteTestFile(dir_, "notes.hlo", "ENTRY main {}\n");
  const std::string junk = WriteTestFile(dir_, "junk", std::string("\x01\x02\x03\xff\xfe", 5));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {npy, "x.npy: a NumPy array"},
      {empty, "empty.neff: an empty file"},
      {gz, "m.neff: gzip-compressed data"},
      {zst, "m.zst: zstd-compressed data"},
      {ToolDir() + "/neuron-exec", "an ELF executable"},
      {js, "m.json: JSON"},
      {text, "notes.hlo: text that is not HLO (HLO text starts with 'HloModule')"},
      {junk, "junk: 5 bytes of unrecognized binary data"},
      {dir_, "it is a directory"},
      {dir_ + "/absent", "absent: cannot open: No such file or directory"},
  };
  for (const auto& [file, needle] : cases) {
    SCOPED_TRACE(file);
    ExpectRefused(Exec({file, "--random-inputs"}), "neuron-exec", needle);
    ExpectRefused(RunTool("neuron-load", {file}, options_), "neuron-load", needle);
  }
  ToolOptions o = options_;
  o.stdin_data = "";
  ExpectRefused(Exec({"-", "--random-inputs"}, &o), "neuron-exec", "<stdin>: an empty file, not a NEFF or HLO module");
  // A NEFF cut short is still a NEFF, and says how short.
  absl::StatusOr<std::string> neff = BuildTestNeff(kAddHlo);
  ASSERT_TRUE(neff.ok()) << neff.status();
  const std::string cut = WriteTestFile(dir_, "cut.neff", neff->substr(0, 927));
  ExpectRefused(Exec({cut, "--random-inputs"}), "neuron-exec", "NEFF is truncated: 927 bytes");
}

// cholesky and triangular-solve options travel in the NEFF's program: a
// batched lower=true gives L (zeros above), lower=false U = L^T (zeros
// below), as the oracle does; a left-side transposed solve runs (it read
// the options as defaults, so wrote past its result).
TEST_F(ModelInputTest, LinearAlgebraOptionsReachTheKernels) {
  const std::string hlo = WriteTestFile(dir_, "la.hlo", R"(HloModule la
ENTRY main {
  a = f32[2,3,3] parameter(0)
  b = f32[2,3,1] parameter(1)
  l = f32[2,3,3] cholesky(a), lower=true
  u = f32[2,3,3] cholesky(a), lower=false
  x = f32[2,3,1] triangular-solve(l, b), left_side=true, lower=true, unit_diagonal=false, transpose_a=TRANSPOSE
  ROOT t = (f32[2,3,3], f32[2,3,3], f32[2,3,1]) tuple(l, u, x)
}
)");
  ToolResult r = Exec({hlo, "-i", "a=2x3x3xf32=4,2,2,2,5,3,2,3,6,9,3,3,3,5,1,3,1,7", "-i",
                       "b=2x3x1xf32=4,3,2,4,2,0", "-p"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "result[0]: 2x3x3xf32=[2 0 0][1 2 0][1 1 2][3 0 0][1 2 0][1 0 2.44949]\n"
            "result[1]: 2x3x3xf32=[2 1 1][0 2 1][0 0 2][3 1 1][0 2 0][0 0 2.44949]\n"
            "result[2]: 2x3x1xf32=[1][1][1][1][1][0]\n");
}

}  // namespace
}  // namespace neuron::testing
