// Damaged input never crashes: every prefix at 64 evenly spaced lengths and
// 200 random single-bit flips of a few corpus files (text and binary) must
// give either a module or one error line.
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "gtest/gtest.h"
#include "lib/hlo/load.h"
#include "lib/hlo/proto/hlo.pb.h"
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

// A module whose only instruction is a constant of `dims` (f32) carrying
// `values` values: sizes come from the input, so they must be refused
// before anything that large is allocated.
std::string ConstantModule(const std::vector<int64_t>& dims, int values) {
  xla::HloModuleProto m;
  m.set_name("big");
  m.set_entry_computation_name("main");
  m.set_entry_computation_id(1);
  xla::HloComputationProto* c = m.add_computations();
  c->set_name("main");
  c->set_id(1);
  c->set_root_id(2);
  xla::HloInstructionProto* k = c->add_instructions();
  k->set_name("huge");
  k->set_opcode("constant");
  k->set_id(2);
  k->mutable_shape()->set_element_type(11);
  for (int64_t d : dims) k->mutable_shape()->add_dimensions(d);
  *k->mutable_literal()->mutable_shape() = k->shape();
  for (int i = 0; i < values; ++i) k->mutable_literal()->add_f32s(1.0f);
  return m.SerializeAsString();
}

TEST(RobustnessTest, HugeConstantWithoutDataIsRefused) {
  for (const auto& dims : std::vector<std::vector<int64_t>>{
           {int64_t{1} << 40}, {int64_t{1} << 20, int64_t{1} << 20}, {int64_t{1} << 62, 4}, {1000}}) {
    auto m = LoadModule(ConstantModule(dims, 3), "damaged");
    ASSERT_FALSE(m.ok());
    std::string msg(m.status().message());
    EXPECT_NE(msg.find("huge"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  // The same module with the values its shape needs loads.
  EXPECT_TRUE(LoadModule(ConstantModule({3}, 3), "ok").ok());
}

TEST(RobustnessTest, HugeConstantInTextIsRefused) {
  for (std::string dims : {"1099511627776", "1048576,1048576", "4611686018427387904,4"}) {
    Exercise("HloModule m\nENTRY e {\n ROOT huge = f32[" + dims + "] constant({1, 2, 3})\n}",
             std::string("text constant f32[") + dims + "]");
    Exercise("HloModule m\nENTRY e {\n ROOT huge = f32[" + dims + "] constant({...})\n}",
             "text elided constant f32[" + dims + "]");
    Exercise("HloModule m\nENTRY e {\n ROOT huge = f32[" + dims + "] constant(0)\n}",
             std::string("text constant f32[") + dims + "]");
    Exercise("HloModule m\nENTRY e {\n ROOT huge = f32[" + dims + "] iota(), iota_dimension=0\n}",
             std::string("text iota f32[") + dims + "]");
  }
}

// Iota replica groups are a compact encoding: a dozen bytes can name 2^20
// device ids. Many instructions each expanding one must not add up to
// gigabytes; past a module-wide budget the module is refused.
TEST(RobustnessTest, IotaReplicaGroupsAreBoundedPerModule) {
  auto module = [](int instructions) {
    xla::HloModuleProto m;
    m.set_name("iota");
    m.set_entry_computation_name("main");
    m.set_entry_computation_id(1);
    xla::HloComputationProto* c = m.add_computations();
    c->set_name("main");
    c->set_id(1);
    c->set_root_id(instructions + 1);
    xla::HloInstructionProto* p = c->add_instructions();
    p->set_name("p");
    p->set_opcode("parameter");
    p->set_id(1);
    p->mutable_shape()->set_element_type(11);
    for (int i = 0; i < instructions; ++i) {
      xla::HloInstructionProto* ar = c->add_instructions();
      ar->set_name("ar" + std::to_string(i));
      ar->set_opcode("all-gather");
      ar->set_id(i + 2);
      ar->mutable_shape()->set_element_type(11);
      ar->add_operand_ids(1);
      auto* iota = ar->mutable_iota_collective_device_list();
      iota->set_num_replica_groups(1 << 20);
      iota->set_num_devices_per_group(1);
      iota->add_iota_reshape_dims(1 << 20);
      iota->add_iota_transpose_perm(0);
    }
    return m.SerializeAsString();
  };
  std::string bytes = module(70);
  EXPECT_LT(bytes.size(), 4000u);
  struct rusage before {};
  getrusage(RUSAGE_SELF, &before);
  auto m = LoadModule(bytes, "damaged");
  struct rusage after {};
  getrusage(RUSAGE_SELF, &after);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("replica groups"), std::string::npos) << m.status();
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 512 << 10) << "KiB of peak memory grew";
  // One such list is within the budget.
  EXPECT_TRUE(LoadModule(module(1), "one").ok());
}

// The text forms of the same: iota ([G,S]<=[N]) and mesh replica groups.
TEST(RobustnessTest, IotaReplicaGroupsInTextAreBoundedPerModule) {
  for (std::string groups : {"[1048576,1]<=[1048576]", "mesh[a=1024,b=1024]{a}"}) {
    std::string text = "HloModule m\nENTRY e {\n p = f32[] parameter(0)\n";
    for (int i = 0; i < 70; ++i) {
      text += " g" + std::to_string(i) + " = f32[] all-gather(p), replica_groups=" + groups +
              ", dimensions={}\n";
    }
    text += " ROOT r = f32[] add(p, p)\n}\n";
    struct rusage before {};
    getrusage(RUSAGE_SELF, &before);
    auto m = LoadModule(text, "damaged");
    struct rusage after {};
    getrusage(RUSAGE_SELF, &after);
    ASSERT_FALSE(m.ok()) << groups;
    EXPECT_NE(m.status().message().find("budget"), std::string::npos) << m.status();
    EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 512 << 10) << "KiB of peak memory grew";
  }
}

// Inputs the fuzzers once found (tests/fuzz/regressions/<fuzzer>/): each
// loads, verifies and prints without crashing or allocating beyond reason.
TEST(RobustnessTest, FuzzerRegressions) {
  std::string root = neuron::testing::SourceRoot() + "/tests/fuzz/regressions/";
  for (const char* fuzzer : {"hlo_proto_fuzzer", "hlo_text_fuzzer"}) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(root + fuzzer, ec)) {
      Exercise(ReadFile(entry.path().string()), entry.path().string());
    }
  }
}

}  // namespace
}  // namespace neuron::hlo
