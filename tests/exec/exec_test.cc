// neuron-exec and neuron-load end to end: the tools run as child processes
// against a device tree of their own, on NEFFs built in-process (and, where
// neuron-compile is built, compiled by it).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "lib/device/core_lock.h"
#include "lib/literal_io/npy_literal.h"
#include "lib/literal_io/literal_text.h"
#include "nlohmann/json.hpp"
#include "tests/device/core_holder.h"
#include "tests/device/fast_temp_dir.h"
#include "tests/runtime/test_neff.h"
#include "tests/support/svg_text.h"
#include "tests/support/tool_runner.h"

namespace neuron::testing {
namespace {

using nlohmann::json;

class ExecToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FastTempDir();
    options_.env["NEURON_SIM_ROOT"] = dir_ + "/sim";
    options_.env["NEURON_RT_LOG_LEVEL"] = "WARN";  // console only, no syslog
  }

  std::string WriteNeff(const char* hlo, const std::string& name,
                        const TestNeffOptions& o = {}) {
    absl::StatusOr<std::string> bytes = BuildTestNeff(hlo, o);
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    return WriteTestFile(dir_, name, bytes.ok() ? *bytes : "");
  }

  std::string WriteNpy(const std::string& name, const std::string& inline_tensor) {
    absl::StatusOr<hlo::Literal> value = literal_io::ParseInlineTensor(inline_tensor);
    EXPECT_TRUE(value.ok()) << value.status();
    return WriteTestFile(dir_, name, literal_io::NpyBytes(*value));
  }

  ToolResult Exec(const std::vector<std::string>& args) {
    return RunTool("neuron-exec", args, options_);
  }

  // Exactly one line on stderr, starting with the tool's error prefix.
  static void ExpectOneErrorLine(const ToolResult& r, const std::string& tool,
                                 const std::string& needle) {
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind(tool + ": error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  }

  std::string dir_;
  ToolOptions options_;
};

TEST_F(ExecToolTest, InputsByNameAndPositionInlineAndNpy) {
  const std::string neff = WriteNeff(kAddHlo, "add.neff");
  const std::string x = WriteNpy("x.npy", "2x3xf32=1,2,3,4,5,6");
  ToolResult r = Exec({neff, "--input", "x=" + x, "-i", "#1=2x3xf32=[10 20 30][40 50 60]", "--print"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "result[0]: 2x3xf32=[11 22 33][44 55 66]\n");
  // '%' before a name is accepted, and #0 works too.
  r = Exec({neff, "-i", "%x=2x3xf32=1", "-i", "#1=" + x, "-p"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "result[0]: 2x3xf32=[2 3 4][5 6 7]\n");
}

TEST_F(ExecToolTest, InputErrorsAreOneLine) {
  const std::string neff = WriteNeff(kAddHlo, "add.neff");
  ToolResult missing = Exec({neff, "-i", "x=2x3xf32=1"});
  EXPECT_EQ(missing.exit_code, 1);
  ExpectOneErrorLine(missing, "neuron-exec", "input #1 'y' 2x3xf32 is not given");
  ToolResult unknown = Exec({neff, "-i", "z=2x3xf32=1", "--random-inputs"});
  EXPECT_EQ(unknown.exit_code, 1);
  ExpectOneErrorLine(unknown, "neuron-exec", "the model has no input 'z' (inputs: #0 'x' 2x3xf32");
  ToolResult shape = Exec({neff, "-i", "x=3xf32=1,2,3", "--random-inputs"});
  EXPECT_EQ(shape.exit_code, 1);
  ExpectOneErrorLine(shape, "neuron-exec", "the value given is 3xf32");
  ToolResult file = Exec({neff, "-i", "x=" + dir_ + "/nope.npy", "--random-inputs"});
  EXPECT_EQ(file.exit_code, 1);
  ExpectOneErrorLine(file, "neuron-exec", "nope.npy: cannot open");
  WriteTestFile(dir_, "bad.npy", "\x93NUMPY garbage");
  ToolResult bad = Exec({neff, "-i", "x=" + dir_ + "/bad.npy", "--random-inputs"});
  EXPECT_EQ(bad.exit_code, 1);
  ExpectOneErrorLine(bad, "neuron-exec", "bad.npy");
  // A malformed inline value is named as one, not as a file to open.
  ToolResult dtype = Exec({neff, "-i", "x=2x3xfloat32=1", "--random-inputs"});
  EXPECT_EQ(dtype.exit_code, 1);
  ExpectOneErrorLine(dtype, "neuron-exec", "unknown element type 'float32'");
  EXPECT_EQ(dtype.err.find("cannot open"), std::string::npos) << dtype.err;
  // A file whose name holds '=' is still read as a file.
  const std::string odd = WriteNpy("a=b.npy", "2x3xf32=1");
  ToolResult odd_file = Exec({neff, "-i", "x=" + odd, "--random-inputs"});
  EXPECT_EQ(odd_file.exit_code, 0) << odd_file.err;
}

TEST_F(ExecToolTest, RandomInputsAreReproducibleWithTheSeed) {
  const std::string neff = WriteNeff(kAddHlo, "add.neff");
  ToolResult a = Exec({neff, "--random-inputs", "--seed", "5", "-p"});
  ToolResult b = Exec({neff, "--random-inputs", "--seed", "5", "-p"});
  ToolResult c = Exec({neff, "--random-inputs", "--seed", "6", "-p"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
}

TEST_F(ExecToolTest, OutputDirWritesNpyFilesAndOutputsJson) {
  const char* kTwoOutputs = R"(HloModule two
ENTRY main {
  x = f32[3] parameter(0)
  n = f32[3] negate(x)
  b = bf16[3] convert(x)
  ROOT t = (f32[3], bf16[3]) tuple(n, b)
}
)";
  const std::string neff = WriteNeff(kTwoOutputs, "two.neff");
  const std::string out = dir_ + "/out/nested";
  ToolResult r = Exec({neff, "-i", "x=3xf32=1,2.5,-3", "--output-dir", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<hlo::Literal> out0 = literal_io::ReadNpyFile(out + "/out0.npy");
  ASSERT_TRUE(out0.ok()) << out0.status();
  EXPECT_EQ(literal_io::FormatTensor(*out0), "3xf32=[-1 -2.5 3]");
  absl::StatusOr<hlo::Literal> out1 = literal_io::ReadNpyFile(out + "/out1.npy");
  ASSERT_TRUE(out1.ok()) << out1.status();
  EXPECT_EQ(out1->shape().type, hlo::ElementType::kF32);  // bf16 stored as f32
  EXPECT_EQ(literal_io::FormatTensor(*out1), "3xf32=[1 2.5 -3]");
  std::ifstream in(out + "/outputs.json");
  json j = json::parse(in);
  ASSERT_EQ(j["outputs"].size(), 2u);
  EXPECT_EQ(j["outputs"][0]["position"], 0);
  EXPECT_EQ(j["outputs"][0]["name"], "output0");  // tuple leaves: the SDK's names
  EXPECT_EQ(j["outputs"][0]["file"], "out0.npy");
  EXPECT_EQ(j["outputs"][1]["name"], "output1");
  EXPECT_EQ(j["outputs"][1]["dtype"], "bfloat16");
  EXPECT_EQ(j["outputs"][1]["stored_as"], "float32");
  EXPECT_EQ(j["outputs"][1]["shape"], json({3}));
}

TEST_F(ExecToolTest, InfeedFromFilesAndOutfeedToADirectory) {
  // Two infeeds in a row (a tuple and an array) and two outfeeds: values
  // are taken and written in execution order.
  const char* kFeeds = R"(HloModule feeds
ENTRY main {
  p = f32[3] parameter(0)
  t0 = token[] after-all()
  in1 = ((f32[3], s32[2]), token[]) infeed(t0)
  d1 = (f32[3], s32[2]) get-tuple-element(in1), index=0
  a = f32[3] get-tuple-element(d1), index=0
  k = s32[2] get-tuple-element(d1), index=1
  t1 = token[] get-tuple-element(in1), index=1
  in2 = (f32[3], token[]) infeed(t1)
  b = f32[3] get-tuple-element(in2), index=0
  t2 = token[] get-tuple-element(in2), index=1
  s = f32[3] add(a, b)
  t3 = token[] outfeed(s, t2), outfeed_shape=f32[3]
  t4 = token[] outfeed(k, t3), outfeed_shape=s32[2]
  ROOT r = f32[3] multiply(s, p)
}
)";
  const std::string neff = WriteNeff(kFeeds, "feeds.neff");
  const std::string a = WriteNpy("a.npy", "3xf32=1,2,3");
  const std::string k = WriteNpy("k.npy", "2xs32=7,-8");
  const std::string b = WriteNpy("b.npy", "3xf32=10,20,30");
  const std::string out = dir_ + "/outfeed";
  ToolResult r = Exec({neff, "-i", "#0=3xf32=2,2,2", "--infeed", a, "--infeed", k, "--infeed", b,
                       "--outfeed-dir", out, "-p"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("3xf32=[22 44 66]"), std::string::npos) << r.out;
  absl::StatusOr<hlo::Literal> o0 = literal_io::ReadNpyFile(out + "/outfeed0.npy");
  ASSERT_TRUE(o0.ok()) << o0.status();
  EXPECT_EQ(literal_io::FormatTensor(*o0), "3xf32=[11 22 33]");
  absl::StatusOr<hlo::Literal> o1 = literal_io::ReadNpyFile(out + "/outfeed1.npy");
  ASSERT_TRUE(o1.ok()) << o1.status();
  EXPECT_EQ(literal_io::FormatTensor(*o1), "2xs32=[7 -8]");

  // Too few values, a wrong shape, no outfeed directory: one line each
  // (besides the core dump's warning, which a failed execution writes).
  options_.env["NEURON_RT_LOG_LEVEL"] = "ERROR";
  ToolResult few = Exec({neff, "-i", "#0=3xf32=2,2,2", "--infeed", a, "--infeed", k,
                         "--outfeed-dir", out});
  EXPECT_NE(few.exit_code, 0);
  ExpectOneErrorLine(few, "neuron-exec", "used up");
  ToolResult wrong = Exec({neff, "-i", "#0=3xf32=2,2,2", "--infeed", k, "--infeed", k,
                           "--infeed", b, "--outfeed-dir", out});
  EXPECT_NE(wrong.exit_code, 0);
  ExpectOneErrorLine(wrong, "neuron-exec", k + ": infeed 'in1' wants f32[3], the file holds s32[2]");
  ToolResult nowhere = Exec({neff, "-i", "#0=3xf32=2,2,2", "--infeed", a, "--infeed", k,
                             "--infeed", b});
  EXPECT_NE(nowhere.exit_code, 0);
  ExpectOneErrorLine(nowhere, "neuron-exec", "--outfeed-dir DIR");
}

// With --random-inputs and no --infeed files, infeeds draw their values
// as inputs do: in the inputs' range, the same for the same seed, not the
// parameters' own values.
TEST_F(ExecToolTest, RandomInputsFeedInfeedsToo) {
  const char* kFeed = R"(HloModule feed
ENTRY main {
  p = f32[64] parameter(0)
  t0 = token[] after-all()
  in = (f32[64], token[]) infeed(t0)
  v = f32[64] get-tuple-element(in), index=0
  t1 = token[] get-tuple-element(in), index=1
  t2 = token[] outfeed(p, t1), outfeed_shape=f32[64]
  ROOT r = f32[64] copy(v)
}
)";
  const std::string neff = WriteNeff(kFeed, "feed.neff");
  std::vector<std::string> draws;
  for (const char* seed : {"5", "5", "6"}) {
    const std::string out = dir_ + "/r" + std::to_string(draws.size());
    ToolResult r = Exec({neff, "--random-inputs", "--seed", seed, "--output-dir", out,
                         "--outfeed-dir", out + "/feed"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    absl::StatusOr<hlo::Literal> v = literal_io::ReadNpyFile(out + "/out0.npy");
    ASSERT_TRUE(v.ok()) << v.status();
    absl::StatusOr<hlo::Literal> p = literal_io::ReadNpyFile(out + "/feed/outfeed0.npy");
    ASSERT_TRUE(p.ok()) << p.status();
    const float* f = reinterpret_cast<const float*>(v->data().data());
    for (int i = 0; i < 64; ++i) {
      EXPECT_GE(f[i], -1.0f);
      EXPECT_LE(f[i], 1.0f);
    }
    EXPECT_NE(v->data(), p->data()) << "the infeed repeated the parameter's values";
    draws.push_back(literal_io::FormatTensor(*v));
  }
  EXPECT_EQ(draws[0], draws[1]);
  EXPECT_NE(draws[0], draws[2]);
}

TEST_F(ExecToolTest, OutputToStdoutIsAnNpy) {
  const std::string neff = WriteNeff(kAddHlo, "add.neff");
  ToolResult r = Exec({neff, "-i", "x=2x3xf32=1", "-i", "y=2x3xf32=2", "-o", "sum=-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<hlo::Literal> v = literal_io::ParseNpyTensor(r.out, "stdout");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(literal_io::FormatTensor(*v), "2x3xf32=[3 3 3][3 3 3]");
}

// Output paths in the way say what is wrong with them, not "Success".
TEST_F(ExecToolTest, OutputPathsThatCannotBeWrittenAreNamed) {
  const std::string neff = WriteNeff(kAddHlo, "add.neff");
  const std::string dir = dir_ + "/dd";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  ToolResult into_dir = Exec({neff, "--random-inputs", "-o", "sum=" + dir});
  EXPECT_EQ(into_dir.exit_code, 1);
  ExpectOneErrorLine(into_dir, "neuron-exec", "cannot write '" + dir + "': it is a directory");
  const std::string file = WriteTestFile(dir_, "plain", "x");
  ToolResult over_file = Exec({neff, "--random-inputs", "--output-dir", file});
  EXPECT_EQ(over_file.exit_code, 1);
  ExpectOneErrorLine(over_file, "neuron-exec", "--output-dir: '" + file + "' is not a directory");
  ToolResult missing = Exec({neff, "--random-inputs", "-o", "sum=" + dir_ + "/no/such/r.npy"});
  EXPECT_EQ(missing.exit_code, 1);
  ExpectOneErrorLine(missing, "neuron-exec", "its directory does not exist");
}

// Complex tensors go in and come out as numpy's complex64 ('<c8').
TEST_F(ExecToolTest, ComplexNpyRoundTrips) {
  constexpr char kSquare[] = R"(HloModule sq
ENTRY main {
  z = c64[3] parameter(0)
  ROOT s = c64[3] multiply(z, z)
}
)";
  const std::string neff = WriteNeff(kSquare, "square.neff");
  hlo::Literal z = hlo::Literal::Zeros(hlo::Shape::Array(hlo::ElementType::kC64, {3}));
  for (int i = 0; i < 3; ++i) z.SetComplex(i, i + 1, -2 * i);
  const std::string in = WriteTestFile(dir_, "z.npy", literal_io::NpyBytes(z));
  ToolResult r = Exec({neff, "-i", "z=" + in, "-o", "s=-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<hlo::Literal> v = literal_io::ParseNpyTensor(r.out, "stdout");
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->shape().type, hlo::ElementType::kC64);
  for (int i = 0; i < 3; ++i) {
    const double re = i + 1, im = -2 * i;
    EXPECT_EQ(v->GetDouble(i), re * re - im * im) << i;
    EXPECT_EQ(v->GetImag(i), 2 * re * im) << i;
  }
}

TEST_F(ExecToolTest, ExpectPassesAndFailsNamingTheWorstElement) {
  const std::string neff = WriteNeff(kAddHlo, "add.neff");
  const std::string good = WriteNpy("good.npy", "2x3xf32=2,3,4,5,6,7");
  const std::string bad = WriteNpy("bad.npy", "2x3xf32=2,3,4,5,9,7.001");
  const std::vector<std::string> inputs = {"-i", "x=2x3xf32=1,2,3,4,5,6", "-i", "y=2x3xf32=1"};
  std::vector<std::string> args = {neff};
  args.insert(args.end(), inputs.begin(), inputs.end());
  std::vector<std::string> pass = args;
  pass.insert(pass.end(), {"--expect", "sum=" + good});
  ToolResult ok = Exec(pass);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("[SUCCESS]"), std::string::npos) << ok.out;
  std::vector<std::string> fail = args;
  fail.insert(fail.end(), {"--expect", "#0=" + bad, "--rtol", "0", "--atol", "0.01"});
  ToolResult r = Exec(fail);
  EXPECT_EQ(r.exit_code, 1);
  ExpectOneErrorLine(r, "neuron-exec", "1 of 6 elements differ; worst at [1,1]: got 6, expected 9");
  // Within a loose tolerance the same file passes.
  fail.back() = "4";
  EXPECT_EQ(Exec(fail).exit_code, 0);
}

TEST_F(ExecToolTest, JsonIsOneDocument) {
  const std::string neff = WriteNeff(kAddHlo, "add.neff");
  ToolResult r = Exec({neff, "--random-inputs", "--json", "-p", "-n", "5", "-w", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["model"], "add");
  EXPECT_EQ(j["status"], "NRT_SUCCESS");
  EXPECT_EQ(j["inputs"][1]["name"], "y");
  EXPECT_EQ(j["inputs"][1]["source"], "random");
  EXPECT_EQ(j["outputs"][0]["name"], "sum");
  EXPECT_TRUE(j["outputs"][0]["printed"].is_string());
  EXPECT_EQ(j["benchmark"]["count"], 5);
  EXPECT_EQ(j["benchmark"]["warmup"], 1);
  const json& lat = j["benchmark"]["latency_us"];
  EXPECT_LE(lat["min"].get<double>(), lat["p50"].get<double>());
  EXPECT_LE(lat["p50"].get<double>(), lat["max"].get<double>());
}

// A program that loops (a generate loop) is timed per trip as well: the
// trips of its outermost loop, and the loop's own time over them.
TEST_F(ExecToolTest, BenchmarkReportsTimePerLoopTrip) {
  const char* loop = R"(HloModule loop
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(7)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[4] get-tuple-element(s), index=1
  w = f32[4] add(v, v)
  ROOT t = (s32[], f32[4]) tuple(j, w)
}
ENTRY main {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[4]) tuple(z, x)
  l = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(l), index=1
})";
  const std::string neff = WriteNeff(loop, "loop.neff");
  ToolResult r = Exec({neff, "--random-inputs", "--json", "-n", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json b = json::parse(r.out)["benchmark"];
  EXPECT_EQ(b["loop_trips"], 7);
  const json& per_trip = b["per_trip_us"];
  EXPECT_LE(per_trip["min"].get<double>(), per_trip["max"].get<double>());
  // The loop's own time over its trips: within each execution's latency.
  EXPECT_GT(per_trip["min"].get<double>(), 0.0);
  EXPECT_LE(per_trip["max"].get<double>() * 7, b["latency_us"]["max"].get<double>() + 0.01);
  ToolResult text = Exec({neff, "--random-inputs", "-n", "5"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("per loop trip (7 trips an execution)"), std::string::npos) << text.out;
  // A program without a loop has no per-trip figures.
  ToolResult plain = Exec({WriteNeff(kAddHlo, "add.neff"), "--random-inputs", "--json", "-n", "3"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_FALSE(json::parse(plain.out)["benchmark"].contains("loop_trips"));
}

TEST_F(ExecToolTest, PlotDrawsEachCoresLatencyDistribution) {
  const std::string neff = WriteNeff(kAddHlo, "add.neff");
  const std::string svg_path = dir_ + "/latency.svg";
  ToolResult r = Exec({neff, "--random-inputs", "--cores", "0-1", "-n", "50", "--json",
                       "--plot", svg_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // stdout is still one JSON document: PLplot printed nothing there.
  const json doc = json::parse(r.out);
  std::ifstream in(svg_path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string svg = ss.str();
  EXPECT_TRUE(IsWholeSvg(svg)) << svg.substr(0, 200);
  const std::string text = SvgVisibleText(svg);
  for (const char* word : {"nc0:", "nc1:", "p50", "p90", "p99", "50 iterations per core"}) {
    EXPECT_NE(text.find(word), std::string::npos) << word << " in:\n" << text;
  }
  // The legend's figures are the ones the tool reported for that core.
  const json& nc1 = doc["benchmark"]["per_core"][1];
  ASSERT_EQ(nc1["core"], 1);
  const std::string p50 = absl::StrFormat("%.4g us", nc1["latency_us"]["p50"].get<double>());
  EXPECT_NE(text.find("nc1: p50 " + p50), std::string::npos) << text;
}

TEST_F(ExecToolTest, PlotNeedsTheBenchmarkAndAWritablePath) {
  const std::string neff = WriteNeff(kAddHlo, "add.neff");
  ToolResult no_bench = Exec({neff, "--random-inputs", "--plot", dir_ + "/a.svg"});
  EXPECT_EQ(no_bench.exit_code, 2);
  EXPECT_NE(no_bench.err.find("--iterations"), std::string::npos) << no_bench.err;
  EXPECT_EQ(Exec({neff, "--random-inputs", "-n", "3", "--plot", "-"}).exit_code, 2);
  const std::string bad = dir_ + "/no-such-dir/a.svg";
  ToolResult unwritable = Exec({neff, "--random-inputs", "-n", "3", "--plot", bad});
  EXPECT_EQ(unwritable.exit_code, 1);
  ExpectOneErrorLine(unwritable, "neuron-exec", bad);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/no-such-dir"));
}

// PLplot without its drivers would end the process with its own chatter.
TEST_F(ExecToolTest, PlotWithoutPlplotDriversIsOneErrorLine) {
  const std::string neff = WriteNeff(kAddHlo, "add.neff");
  const std::string no_drivers = dir_ + "/no-drivers";
  std::filesystem::create_directories(no_drivers);
  options_.env["PLPLOT_DRV_DIR"] = no_drivers;
  ToolResult r = Exec({neff, "--random-inputs", "-n", "3", "--plot", dir_ + "/a.svg"});
  EXPECT_EQ(r.exit_code, 1);
  ExpectOneErrorLine(r, "neuron-exec", "--plot '" + dir_ + "/a.svg': cannot draw the picture: PLplot");
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/a.svg"));
}

TEST_F(ExecToolTest, BenchmarkOnSeveralCoresReportsEachCore) {
  const std::string neff = WriteNeff(kAddHlo, "add.neff");
  ToolResult r = Exec({neff, "--random-inputs", "--cores", "0-1", "-n", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nc0: latency (us): min"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nc1: latency (us): min"), std::string::npos) << r.out;
  // Warm-up by default: a tenth of the iterations, at least one.
  EXPECT_NE(r.out.find("20 iterations (2 warmup) on 2 cores"), std::string::npos) << r.out;
  ToolResult none = Exec({neff, "--random-inputs", "-n", "3", "-w", "0"});
  EXPECT_NE(none.out.find("3 iterations (0 warmup)"), std::string::npos) << none.out;
  ToolResult one = Exec({neff, "--random-inputs", "-n", "3"});
  EXPECT_NE(one.out.find("3 iterations (1 warmup)"), std::string::npos) << one.out;
}

// A model whose buffers cannot fit this host's memory (8 TiB of
// intermediates) fails at load with one line naming both figures and
// NRT_RESOURCE, at once, instead of committing memory until the OOM killer
// ends the process.
// A train step donating its weights (input_output_alias): neuron-exec runs
// it in place, in the input's own tensor, and the file the weights came
// from is left as it was. An output that reads its input's other lanes
// (reverse) is still right: that input is read from a copy.
TEST_F(ExecToolTest, DonatedInputsRunInPlaceAndTheirFilesStayUntouched) {
  const std::string hlo = WriteTestFile(dir_, "step.hlo", R"(HloModule step, input_output_alias={ {0}: (0, {}, may-alias), {1}: (2, {}, may-alias) }
ENTRY main {
  w = f32[4] parameter(0)
  g = f32[4] parameter(1)
  m = f32[4] parameter(2)
  n = f32[4] subtract(w, g)
  r = f32[4] reverse(m), dimensions={0}
  ROOT t = (f32[4], f32[4]) tuple(n, r)
})");
  const std::string w = WriteNpy("w.npy", "4xf32=10,20,30,40");
  const std::string m = WriteNpy("m.npy", "4xf32=1,2,3,4");
  std::ifstream before_in(w, std::ios::binary);
  const std::string before((std::istreambuf_iterator<char>(before_in)), std::istreambuf_iterator<char>());
  ToolResult r = Exec({hlo, "-i", "w=" + w, "-i", "g=4xf32=1,2,3,4", "-i", "m=" + m, "--print"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "result[0]: 4xf32=[9 18 27 36]\nresult[1]: 4xf32=[4 3 2 1]\n");
  std::ifstream after_in(w, std::ios::binary);
  const std::string after((std::istreambuf_iterator<char>(after_in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(before, after);
  // neuron-load shows the plan's parts: the update lives in its input.
  ToolResult load = RunTool("neuron-load", {hlo, "--json"}, options_);
  ASSERT_EQ(load.exit_code, 0) << load.err;
  json j = json::parse(load.out);
  EXPECT_EQ(j["plan"]["aliased"], 16) << load.out;
  EXPECT_EQ(j["plan"]["inputs"], 48) << load.out;
  EXPECT_EQ(j["plan"]["outputs"], 32) << load.out;
}

TEST_F(ExecToolTest, AModelTooBigForTheHostFailsAtLoad) {
  const std::string neff = WriteNeff(R"(
HloModule too_big
ENTRY main {
  p = f32[1024] parameter(0)
  e = f32[1024] exponential(p)
  big = f32[1073741824,1024] broadcast(e), dimensions={1}
  big2 = f32[1073741824,1024] multiply(big, big)
  ROOT r = f32[1,1024] slice(big2), slice={[0:1], [0:1024]}
})", "too_big.neff");
  ToolResult r = Exec({neff, "--random-inputs"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("of host memory on the simulated device, and this host has"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("TiB"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("NRT_RESOURCE"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// The aggregate is every measured execution over the window in which the
// cores ran together: at most the sum of the per-core rates (the window is at
// least each core's own), and not dragged below the slowest core by the
// one-off first execution (warm-ups stay outside the window).
TEST_F(ExecToolTest, BenchmarkAggregateCountsOnlyTheMeasuredWindow) {
  const std::string neff = WriteNeff(kAddHlo, "add.neff");
  const auto started = std::chrono::steady_clock::now();
  ToolResult r = Exec({neff, "--random-inputs", "--cores", "0-1", "-n", "400", "--json"});
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json b = json::parse(r.out)["benchmark"];
  ASSERT_EQ(b["per_core"].size(), 2u) << r.out;
  double sum = 0;
  for (const json& core : b["per_core"]) {
    EXPECT_EQ(core["count"], 400);
    sum += core["throughput_per_s"].get<double>();
  }
  EXPECT_EQ(b["count"], 800);
  // The aggregate is the measured executions over the common window, which
  // lies inside the process's life and covers each core's own window (so
  // it cannot beat the cores' sum). Structural checks only: timings on a
  // loaded machine vary too much for any ratio between cores.
  const double total = b["throughput_per_s"].get<double>();
  const double window = b["window_s"].get<double>();
  EXPECT_GT(window, 0) << r.out;
  EXPECT_LT(window, elapsed_s) << r.out;
  EXPECT_NEAR(total * window, 800, 800 * 1e-3) << r.out;
  EXPECT_LE(total, sum * 1.0001) << r.out;
}

// Parallel jobs on one simulated instance: without --cores or
// NEURON_RT_VISIBLE_CORES a tool takes the first free core, and names the
// holders only when every core is held.
TEST_F(ExecToolTest, TakesTheFirstFreeCore) {
  const std::string neff = WriteNeff(kAddHlo, "add.neff");
  const std::string root = dir_ + "/sim";
  const pid_t nc0 = HoldCores(root, "trn1.2xlarge", {0}, "first job", 1);
  ToolResult second = Exec({neff, "--random-inputs", "--json"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(json::parse(second.out)["cores"], json::array({1})) << second.out;
  ToolResult load = RunTool("neuron-load", {neff, "--json"}, options_);
  EXPECT_EQ(load.exit_code, 0) << load.err;
  // An explicit choice is kept: nc0 is held, so it fails naming the holder.
  ToolOptions visible = options_;
  visible.env["NEURON_RT_VISIBLE_CORES"] = "0-1";
  ToolResult fixed = RunTool("neuron-exec", {neff, "--random-inputs"}, visible);
  EXPECT_EQ(fixed.exit_code, 1);
  ExpectOneErrorLine(fixed, "neuron-exec", "first job");
  // Every core held: one line naming both holders.
  const pid_t nc1 = HoldCores(root, "trn1.2xlarge", {1}, "second job", 1);
  ToolResult none = Exec({neff, "--random-inputs"});
  EXPECT_EQ(none.exit_code, 1);
  ExpectOneErrorLine(none, "neuron-exec", "every visible NeuronCore is held");
  EXPECT_NE(none.err.find("first job"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("second job"), std::string::npos) << none.err;
  Reap(nc0);
  Reap(nc1);
}

TEST_F(ExecToolTest, UsageErrorsExit2) {
  EXPECT_EQ(Exec({}).exit_code, 2);
  EXPECT_EQ(Exec({"a.neff", "b.neff"}).exit_code, 2);
  EXPECT_EQ(Exec({"a.neff", "--bogus"}).exit_code, 2);
  EXPECT_EQ(Exec({"a.neff", "-i", "noequals"}).exit_code, 2);
  EXPECT_EQ(Exec({"a.neff", "-n", "0"}).exit_code, 2);
  EXPECT_EQ(Exec({"a.neff", "--cores", "3-1"}).exit_code, 2);
  ToolResult r = Exec({"a.neff", "--rtol", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("neuron-exec: error: --rtol 'x'", 0), 0u) << r.err;
  EXPECT_EQ(Exec({"--help"}).exit_code, 0);
  EXPECT_EQ(RunTool("neuron-load", {"--bogus"}, options_).exit_code, 2);
  EXPECT_EQ(RunTool("neuron-load", {}, options_).exit_code, 2);
}

TEST_F(ExecToolTest, BadNeffsGiveTheirOneLineError) {
  absl::StatusOr<std::string> good = BuildTestNeff(kAddHlo);
  ASSERT_TRUE(good.ok());
  std::string corrupt = *good;
  corrupt[corrupt.size() / 2 + 512] ^= 0x20;
  TestNeffOptions trn2, legacy;
  trn2.target = "trn2";
  legacy.version_major = 1;
  struct Case {
    std::string file;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {WriteTestFile(dir_, "truncated.neff", good->substr(0, good->size() / 2)), "(NRT_INVALID)"},
      {WriteTestFile(dir_, "corrupt.neff", corrupt), "hash mismatch"},
      {WriteNeff(kAddHlo, "trn2.neff", trn2), "compiled for trn2"},
      {WriteNeff(kAddHlo, "legacy.neff", legacy), "(NRT_UNSUPPORTED_NEFF_VERSION)"},
      {dir_ + "/missing.neff", "missing.neff"},
  };
  options_.env["NEURON_RT_VALIDATE_HASH"] = "1";
  for (const Case& c : cases) {
    for (const char* tool : {"neuron-exec", "neuron-load"}) {
      const bool exec = std::string(tool) == "neuron-exec";
      ToolResult r = exec ? RunTool(tool, {c.file, "--random-inputs"}, options_)
                          : RunTool(tool, {c.file}, options_);
      EXPECT_EQ(r.exit_code, 1) << tool << " " << c.file;
      EXPECT_FALSE(r.signaled);
      ExpectOneErrorLine(r, tool, c.needle);
    }
  }
}

TEST_F(ExecToolTest, NeuronLoadReportsCostAndTimes) {
  TestNeffOptions fast;
  fast.fast_loading = true;
  const std::string neff = WriteNeff(kAddHlo, "add.neff", fast);
  ToolResult r = RunTool("neuron-load", {neff}, options_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("model 'add' for trn1, 2 inputs, 1 outputs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nc0: weights"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("I/O tensors 72 B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(read "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nc0: debug info: built 3 entries"), std::string::npos) << r.out;
  ToolOptions no_debug = options_;
  no_debug.env["NEURON_RT_DISABLE_DEBUG_INFO"] = "1";
  ToolResult skipped = RunTool("neuron-load", {neff}, no_debug);
  ASSERT_EQ(skipped.exit_code, 0) << skipped.err;
  EXPECT_NE(skipped.out.find("nc0: debug info: skipped (NEURON_RT_DISABLE_DEBUG_INFO=1)"),
            std::string::npos)
      << skipped.out;
  ToolResult j = RunTool("neuron-load", {"-", "--cores", "0-1", "--json"},
                         [&] {
                           ToolOptions o = options_;
                           std::ifstream in(neff, std::ios::binary);
                           std::stringstream ss;
                           ss << in.rdbuf();
                           o.stdin_data = ss.str();
                           return o;
                         }());
  ASSERT_EQ(j.exit_code, 0) << j.err;
  json doc = json::parse(j.out);
  ASSERT_EQ(doc["cores"].size(), 2u);
  EXPECT_EQ(doc["cores"][1]["core"], 1);
  EXPECT_EQ(doc["cores"][0]["io_tensors"], 72);
  EXPECT_TRUE(doc["cores"][0]["load_ms"]["decompress"].is_number());
  EXPECT_EQ(doc["cores"][0]["debug_info_entries"], 3);
}

TEST_F(ExecToolTest, AHeldCoreIsRefusedNamingTheHolder) {
  const std::string neff = WriteNeff(kEndlessHlo, "endless.neff");
  // A neuron-exec stuck in an endless loop holds core 0 until its timeout.
  options_.env["NEURON_RT_EXEC_TIMEOUT"] = "2";
  ToolResult holder;
  std::thread t([&] { holder = Exec({neff, "-i", "x=s32=0"}); });
  // Wait until it holds the core, as neuron-ls would see it.
  bool held = false;
  for (int i = 0; i < 3000 && !held; ++i) {
    usleep(10000);
    held = !device::ReadHolders(options_.env["NEURON_SIM_ROOT"]).empty();
  }
  ASSERT_TRUE(held);
  // Asked for that core by name (without --cores it would take nc1).
  ToolResult second = Exec({neff, "-i", "x=s32=0", "--cores", "0"});
  t.join();
  EXPECT_EQ(second.exit_code, 1);
  ExpectOneErrorLine(second, "neuron-exec", "NeuronCore(s) not available - Requested:nc0-nc0");
  EXPECT_NE(second.err.find("(NRT_RESOURCE)"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("neuron-exec"), std::string::npos);
  EXPECT_EQ(holder.exit_code, 1);
  EXPECT_NE(holder.err.find("(NRT_TIMEOUT)"), std::string::npos) << holder.err;
}

TEST_F(ExecToolTest, FailOnNanExitsOne) {
  const std::string neff = WriteNeff(kLogHlo, "log.neff");
  ToolResult quiet = Exec({neff, "-i", "x=4xf32=-1,0,1,2"});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  options_.env["NEURON_RT_NUMERICAL_ERRORS_VERBOSITY"] = "debug";
  ToolResult warned = Exec({neff, "-i", "x=4xf32=-1,0,1,2", "--json"});
  EXPECT_EQ(warned.exit_code, 0) << warned.err;
  EXPECT_EQ(json::parse(warned.out)["status"], "NRT_EXEC_COMPLETED_WITH_NUM_ERR");
  EXPECT_NE(warned.err.find("first produced by HLO instruction 'l'"), std::string::npos)
      << warned.err;
  options_.env["NEURON_FAIL_ON_NAN"] = "1";
  ToolResult failed = Exec({neff, "-i", "x=4xf32=-1,0,1,2"});
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_NE(failed.err.find("neuron-exec: error: Numerical error"), std::string::npos) << failed.err;
}

// neuron-compile piped into neuron-exec through '-'.
TEST_F(ExecToolTest, PipeFromNeuronCompile) {
  if (access((ToolDir() + "/neuron-compile").c_str(), X_OK) != 0) {
    GTEST_SKIP() << "NOTICE: neuron-compile is not built; skipping the pipe test";
  }
  const std::string hlo = WriteTestFile(dir_, "add.hlo", kAddHlo);
  ToolResult compiled = RunTool("neuron-compile", {"compile", hlo, "--target", "trn1", "-o", "-"}, options_);
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  ToolOptions o = options_;
  o.stdin_data = compiled.out;
  ToolResult r = RunTool("neuron-exec", {"-", "-i", "x=2x3xf32=1", "-i", "y=2x3xf32=2", "--print"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "result[0]: 2x3xf32=[3 3 3][3 3 3]\n");
}

}  // namespace
}  // namespace neuron::testing
