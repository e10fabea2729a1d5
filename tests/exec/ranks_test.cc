// neuron-exec running one job over several ranks: HLO collectives across
// processes (forked by -r, started by mpirun, or by NEURON_RANK), results
// checked against the single-process arithmetic.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <complex>
#include <fstream>
#include <sstream>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "lib/literal_io/npy_literal.h"
#include "lib/literal_io/literal_text.h"
#include "tests/device/fast_temp_dir.h"
#include "tests/runtime/test_neff.h"
#include "tests/support/svg_text.h"
#include "tests/support/tool_runner.h"

namespace neuron::testing {
namespace {

// Gradients all-reduced (sum), features all-gathered, and the replica id.
constexpr char kDataParallelHlo[] = R"(HloModule dp
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  g = f32[5] parameter(0)
  sum = f32[5] all-reduce(g), replica_groups={}, to_apply=add
  gathered = f32[20] all-gather(g), replica_groups={}, dimensions={0}
  id = u32[] replica-id()
  ROOT t = (f32[5], f32[20], u32[]) tuple(sum, gathered, id)
}
)";

constexpr int kRanks = 4;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// host:port of a loopback port free right now, for rank 0 to listen on.
std::string FreeLoopbackAddress() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
}

class RanksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FastTempDir();
    options_.env["NEURON_SIM_ROOT"] = dir_ + "/sim";
    options_.env["NEURON_SIM_INSTANCE_TYPE"] = "trn1.32xlarge";  // 32 cores: one per rank
    options_.env["NEURON_RT_LOG_LEVEL"] = "WARN";
    options_.env["NEURON_RT_EXEC_TIMEOUT"] = "20";
    absl::StatusOr<std::string> bytes = BuildTestNeff(kDataParallelHlo);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    neff_ = WriteTestFile(dir_, "dp.neff", *bytes);
    // Rank k's gradient: k * 10 + i.
    for (int k = 0; k < kRanks; ++k) {
      std::string text = "5xf32=";
      for (int i = 0; i < 5; ++i) text += (i ? "," : "") + std::to_string(k * 10 + i);
      absl::StatusOr<hlo::Literal> v = literal_io::ParseInlineTensor(text);
      ASSERT_TRUE(v.ok());
      WriteTestFile(dir_, "g" + std::to_string(k) + ".npy", literal_io::NpyBytes(*v));
    }
  }

  std::vector<double> ReadOutput(int rank, int k) {
    absl::StatusOr<hlo::Literal> v =
        literal_io::ReadNpyFile(dir_ + "/out/rank" + std::to_string(rank) + "/out" + std::to_string(k) + ".npy");
    EXPECT_TRUE(v.ok()) << v.status();
    std::vector<double> out;
    if (!v.ok()) return out;
    const hlo::Literal& lit = *v;
    for (int64_t i = 0; i < lit.element_count(); ++i) out.push_back(lit.GetDouble(i));
    return out;
  }

  // Every rank's outputs match the arithmetic of all ranks' inputs.
  void ExpectResults(int world) {
    for (int r = 0; r < world; ++r) {
      std::vector<double> sum = ReadOutput(r, 0), gathered = ReadOutput(r, 1), id = ReadOutput(r, 2);
      ASSERT_EQ(sum.size(), 5u);
      for (int i = 0; i < 5; ++i) {
        double want = 0;
        for (int k = 0; k < world; ++k) want += k * 10 + i;
        EXPECT_EQ(sum[i], want) << "rank " << r << " element " << i;
      }
      ASSERT_EQ(gathered.size(), 20u);
      for (int k = 0; k < world; ++k)
        for (int i = 0; i < 5; ++i) EXPECT_EQ(gathered[k * 5 + i], k * 10 + i) << "rank " << r;
      ASSERT_EQ(id.size(), 1u);
      EXPECT_EQ(id[0], r);
    }
  }

  std::string dir_;
  std::string neff_;
  ToolOptions options_;
};

TEST_F(RanksTest, ForkedRanksRunCollectivesAcrossProcesses) {
  ToolResult r = RunTool("neuron-exec", {neff_, "-r", "4", "-i", "g=" + dir_ + "/g%r.npy", "--output-dir", dir_ + "/out", "--print"}, options_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << r.out;  // rank 0 alone prints
  ExpectResults(kRanks);
}

// --plot: %r gives each rank a picture of its own; without it rank 0 draws.
TEST_F(RanksTest, EachRankDrawsItsPictureWithPercentR) {
  ToolResult r = RunTool("neuron-exec", {neff_, "-r", "2", "-i", "g=" + dir_ + "/g%r.npy", "-n",
                                         "5", "--plot", dir_ + "/lat%r.svg"}, options_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int k = 0; k < 2; ++k) {
    const std::string svg = ReadFile(dir_ + "/lat" + std::to_string(k) + ".svg");
    EXPECT_TRUE(IsWholeSvg(svg)) << k;
    EXPECT_NE(SvgVisibleText(svg).find("(rank " + std::to_string(k) + ")"), std::string::npos)
        << SvgVisibleText(svg);
  }
  r = RunTool("neuron-exec", {neff_, "-r", "2", "-i", "g=" + dir_ + "/g%r.npy", "-n", "5",
                              "--plot", dir_ + "/one.svg"}, options_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(SvgVisibleText(ReadFile(dir_ + "/one.svg")).find("(rank 0)"), std::string::npos);
}

TEST_F(RanksTest, RanksStartedOneByOneWithNeuronRank) {
  const std::string comm_id = FreeLoopbackAddress();
  std::vector<std::thread> ranks;
  std::vector<ToolResult> results(2);
  for (int k = 0; k < 2; ++k) {
    ranks.emplace_back([&, k] {
      ToolOptions o = options_;
      o.env["NEURON_RANK"] = std::to_string(k);
      o.env["NEURON_WORLD_SIZE"] = "2";
      o.env["NEURON_LOCAL_RANK"] = std::to_string(k);
      o.env["NEURON_RT_ROOT_COMM_ID"] = comm_id;
      results[k] = RunTool("neuron-exec", {neff_, "-i", "g=" + dir_ + "/g%r.npy", "--output-dir", dir_ + "/out"}, o);
    });
  }
  for (auto& t : ranks) t.join();
  for (int k = 0; k < 2; ++k) ASSERT_EQ(results[k].exit_code, 0) << "rank " << k << ": " << results[k].err;
  ExpectResults(2);
}

TEST_F(RanksTest, MpirunStartsTheRanks) {
  if (system("command -v mpirun >/dev/null 2>&1") != 0) GTEST_SKIP() << "mpirun is not installed (Debian: openmpi-bin)";
  ToolOptions o = options_;
  o.env["OMPI_ALLOW_RUN_AS_ROOT"] = "1";
  o.env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1";
  o.env["NEURON_RT_ROOT_COMM_ID"] = FreeLoopbackAddress();
  const std::string exec = ToolDir() + "/neuron-exec";
  ToolResult r = RunTool("/bin/sh",
                         {"-c", "exec mpirun --oversubscribe -np 4 -x NEURON_SIM_ROOT -x NEURON_SIM_INSTANCE_TYPE -x "
                                "NEURON_RT_ROOT_COMM_ID -x NEURON_RT_EXEC_TIMEOUT " +
                                    exec + " " + neff_ + " -i g=" + dir_ + "/g%r.npy --output-dir " + dir_ + "/out"},
                         o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectResults(kRanks);
}

// Element types the collectives engine does not reduce itself (4-bit ints,
// complex) are gathered and folded with the HLO reducer on every rank.
TEST_F(RanksTest, ReducersTheEngineLacksFoldGatheredInputs) {
  constexpr char kHlo[] = R"(HloModule fallback
mx {
  a = s4[] parameter(0)
  b = s4[] parameter(1)
  ROOT m = s4[] maximum(a, b)
}
mulc {
  a = c64[] parameter(0)
  b = c64[] parameter(1)
  ROOT m = c64[] multiply(a, b)
}
ENTRY main {
  id = u32[] replica-id()
  idf = f32[] convert(id)
  io = f32[4] iota(), iota_dimension=0
  b = f32[4] broadcast(idf), dimensions={}
  v = f32[4] add(io, b)
  s = s4[4] convert(v)
  m = s4[4] all-reduce(s), replica_groups={}, to_apply=mx
  c = c64[4] complex(v, b)
  p = c64[4] all-reduce(c), replica_groups={}, to_apply=mulc
  ROOT t = (s4[4], c64[4]) tuple(m, p)
}
)";
  absl::StatusOr<std::string> bytes = BuildTestNeff(kHlo);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  const std::string neff = WriteTestFile(dir_, "fallback.neff", *bytes);
  constexpr int kWorld = 3;
  ToolResult r = RunTool("neuron-exec", {neff, "-r", std::to_string(kWorld), "--output-dir", dir_ + "/out"}, options_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int rank = 0; rank < kWorld; ++rank) {
    const std::string base = dir_ + "/out/rank" + std::to_string(rank) + "/out";
    absl::StatusOr<hlo::Literal> m = literal_io::ReadNpyFile(base + "0.npy");
    absl::StatusOr<hlo::Literal> p = literal_io::ReadNpyFile(base + "1.npy");
    ASSERT_TRUE(m.ok()) << m.status();
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_EQ(m->element_count(), 4);
    ASSERT_EQ(p->element_count(), 4);
    // Rank k contributes v = i + k to the max and (i + k) + k*i to the product.
    for (int i = 0; i < 4; ++i) {
      std::complex<double> product = 1;
      for (int k = 0; k < kWorld; ++k) product *= std::complex<double>(i + k, k);
      EXPECT_EQ(m->GetInt(i), i + kWorld - 1) << "rank " << rank << " element " << i;
      EXPECT_EQ(p->GetDouble(i), product.real()) << "rank " << rank << " element " << i;
      EXPECT_EQ(p->GetImag(i), product.imag()) << "rank " << rank << " element " << i;
    }
  }
}

TEST_F(RanksTest, TooFewCoresOrBadLaunchesFailAtOnceWithOneLine) {
  ToolOptions o = options_;
  o.env["NEURON_SIM_INSTANCE_TYPE"] = "trn1.2xlarge";  // 2 cores
  ToolResult r = RunTool("neuron-exec", {neff_, "-r", "4", "--random-inputs"}, o);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("-r 4 needs 4 NeuronCores, but 2 are visible"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

  r = RunTool("neuron-exec", {neff_, "-r", "2", "--cores", "0-1", "--random-inputs"}, options_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--cores cannot be combined"), std::string::npos) << r.err;

  r = RunTool("neuron-exec", {neff_, "-r", "0"}, options_);
  EXPECT_EQ(r.exit_code, 2) << r.err;

  o = options_;
  o.env["NEURON_RANK"] = "0";
  o.env["NEURON_WORLD_SIZE"] = "2";
  r = RunTool("neuron-exec", {neff_, "--random-inputs"}, o);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("NEURON_RT_ROOT_COMM_ID is not set"), std::string::npos) << r.err;

  o.env["NEURON_WORLD_SIZE"] = "x";
  r = RunTool("neuron-exec", {neff_, "--random-inputs"}, o);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("NEURON_WORLD_SIZE"), std::string::npos) << r.err;
}

TEST_F(RanksTest, ALostRankEndsTheJobWithATimeoutNamingIt) {
  // Rank 1 of 2 never starts: rank 0 gives up after NEURON_RT_EXEC_TIMEOUT.
  ToolOptions o = options_;
  o.env["NEURON_RANK"] = "0";
  o.env["NEURON_WORLD_SIZE"] = "2";
  o.env["NEURON_RT_EXEC_TIMEOUT"] = "1";
  o.env["NEURON_RT_ROOT_COMM_ID"] = FreeLoopbackAddress();
  ToolResult r = RunTool("neuron-exec", {neff_, "--random-inputs"}, o);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("NRT_TIMEOUT"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rank 1 did not join"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace neuron::testing
