// ragged-all-to-all on one device (a replica group of one): the result is
// the output operand with the input rows the device sends itself written
// at the offset it names. (Across ranks: tests/collectives.)
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace neuron::kernels::testing {
namespace {

using ET = hlo::ElementType;

constexpr char kModule[] = R"(HloModule m
ENTRY e {
  input = f32[5,2] parameter(0)
  output = f32[6,2] parameter(1)
  input_offsets = s32[1] parameter(2)
  send_sizes = s32[1] parameter(3)
  output_offsets = s32[1] parameter(4)
  recv_sizes = s32[1] parameter(5)
  ROOT r = f32[6,2] ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets, recv_sizes), replica_groups={{0}}
})";

std::vector<Tensor> Operands(const std::vector<double>& input, const std::vector<double>& output, int64_t from,
                             int64_t rows, int64_t to) {
  return {MakeTensor(ET::kF32, {5, 2}, input), MakeTensor(ET::kF32, {6, 2}, output),
          MakeTensor(ET::kS32, {1}, {static_cast<double>(from)}), MakeTensor(ET::kS32, {1}, {static_cast<double>(rows)}),
          MakeTensor(ET::kS32, {1}, {static_cast<double>(to)}), MakeTensor(ET::kS32, {1}, {static_cast<double>(rows)})};
}

TEST(RaggedAllToAllTest, OneDeviceCopiesItsOwnRowsIntoTheOutput) {
  std::vector<double> input(10), output(12);
  for (int i = 0; i < 10; ++i) input[i] = i + 1;
  for (int i = 0; i < 12; ++i) output[i] = -1 - i;
  const int64_t from = 1, rows = 3, to = 2;
  // The definition: output, with rows [to, to+rows) taken from input's
  // rows [from, from+rows).
  std::vector<double> want = output;
  for (int64_t r = 0; r < rows; ++r)
    for (int c = 0; c < 2; ++c) want[(to + r) * 2 + c] = input[(from + r) * 2 + c];
  auto got = RunText(kModule, Operands(input, output, from, rows, to));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(Values((*got)[0]), want);
}

TEST(RaggedAllToAllTest, RowsOutOfRangeAreAnErrorNotAWrite) {
  std::vector<double> input(10, 1), output(12, 0);
  for (auto [from, rows, to] : {std::tuple{4, 2, 0}, {0, 2, 5}, {-1, 1, 0}, {0, -1, 0}}) {
    auto got = RunText(kModule, Operands(input, output, from, rows, to));
    ASSERT_FALSE(got.ok()) << from << " " << rows << " " << to;
    EXPECT_NE(std::string(got.status().message()).find("ragged-all-to-all"), std::string::npos) << got.status();
  }
}

TEST(RaggedAllToAllTest, MorePeersThanTheGroupAsksForSeveralRanks) {
  auto got = RunText(R"(HloModule m, replica_count=4
ENTRY e {
  input = f32[4] parameter(0)
  output = f32[4] parameter(1)
  o = s32[4] parameter(2)
  ROOT r = f32[4] ragged-all-to-all(input, output, o, o, o, o), replica_groups={}
})",
                     {MakeTensor(ET::kF32, {4}, {}), MakeTensor(ET::kF32, {4}, {}), MakeTensor(ET::kS32, {4}, {})});
  ASSERT_FALSE(got.ok());
  EXPECT_NE(std::string(got.status().message()).find("neuron-exec -r 4"), std::string::npos) << got.status();
}

TEST(RaggedAllToAllTest, ShapesAreVerified) {
  auto exe = BuildText(R"(HloModule m
ENTRY e {
  input = f32[5,2] parameter(0)
  output = f32[6,3] parameter(1)
  o = s32[1] parameter(2)
  ROOT r = f32[6,3] ragged-all-to-all(input, output, o, o, o, o), replica_groups={{0}}
})");
  ASSERT_FALSE(exe.ok());
  EXPECT_NE(std::string(exe.status().message()).find("differ only in dimension 0"), std::string::npos) << exe.status();
}

}  // namespace
}  // namespace neuron::kernels::testing
