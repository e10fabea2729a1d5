// Damaged input never crashes: every prefix at 64 evenly spaced lengths and
// 200 random single-bit flips of a few corpus files (text and binary) must
// give either a module or one error line.
#include <fstream>
#include <random>
#include <sstream>

#include "gtest/gtest.h"
#include "lib/hlo/load.h"
#include "lib/hlo/printer.h"
#include "lib/hlo/verifier.h"
#include "tests/support/tool_runner.h"

namespace neuron::hlo {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Loads, and when that works also verifies and prints, so damaged modules
// reach the later stages too.
void Exercise(const std::string& bytes, const std::string& what) {
  auto m = LoadModule(bytes, "damaged");
  if (!m.ok()) {
    std::string msg(m.status().message());
    EXPECT_FALSE(msg.empty()) << what;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << what << ": " << msg;
    EXPECT_EQ(msg.rfind("damaged", 0), 0u) << what << ": " << msg;
    return;
  }
  (void)Verify(**m);
  (void)PrintModule(**m);
}

void Damage(const std::string& file) {
  std::string bytes = ReadFile(neuron::testing::SharedDir() + "/hlo/" + file);
  ASSERT_FALSE(bytes.empty()) << file;
  for (int i = 0; i < 64; ++i) {
    size_t len = bytes.size() * i / 64;
    Exercise(bytes.substr(0, len), file + " truncated to " + std::to_string(len));
  }
  std::mt19937 rng(12345);
  for (int i = 0; i < 200; ++i) {
    std::string flipped = bytes;
    size_t bit = rng() % (bytes.size() * 8);
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    Exercise(flipped, file + " with bit " + std::to_string(bit) + " flipped");
  }
}

TEST(RobustnessTest, TruncatedAndBitFlippedText) {
  NEURON_REQUIRE_SHARED();
  Damage("xla__tests_collective_ops_test__AllReduce_TupleAllReduce.hlo");
  Damage("xla__backends_cpu_benchmarks_hlo_argsort_axis_1024x512_bf16.hlo");
  Damage("xla__tests_scatter_test__TensorFlowScatterNdS64.hlo");
}

TEST(RobustnessTest, TruncatedAndBitFlippedProto) {
  NEURON_REQUIRE_SHARED();
  Damage("xla__tests_aot_gpu_collective_ReduceScatter.hlo.pb");
  Damage("xla__tests_aot_cpu_elementwise_SimpleAdd.HloModuleProtoWithConfig.pb");
  Damage("xla__hlo_tools_tests_hlo_opt_hlo_protobinary.HloProto.hlo.pb");
}

TEST(RobustnessTest, EmptyAndGarbageInput) {
  for (const std::string& bytes : {std::string(), std::string("\0", 1), std::string("\xff\xff\xff"),
                                   std::string("HloModule"), std::string("HloModule m, x={"),
                                   std::string(100000, '('), "HloModule m\nENTRY e {\n ROOT c = f32[" +
                                   std::string(5000, '1') + "] constant(0)\n}"}) {
    Exercise(bytes, "garbage");
  }
}

}  // namespace
}  // namespace neuron::hlo
