// The executor's collectives interface over forked ranks.
#include "lib/collectives/executor_collectives.h"

#include <vector>

#include "gtest/gtest.h"
#include "tests/collectives/rank_harness.h"

namespace neuron::collectives {
namespace {

TEST(ExecutorCollectives, AllReduceAllGatherPermuteAcrossRanks) {
  testing::JobOptions o;
  o.base.world = 2;
  o.base.timeout_s = 20;
  auto results = testing::RunJob(o, [](Communicator& c) {
    CommunicatorCollectives ops(&c);
    const int r = c.rank();
    kernels::CollectiveCall call;
    call.type = hlo::ElementType::kF32;
    std::vector<float> in = {1.0f + r, 10.0f * (r + 1)}, out(2);
    if (!ops.AllReduce(call, hlo::Opcode::kAdd, in.data(), out.data(), 2).ok()) return 1;
    if (out[0] != 3.0f || out[1] != 30.0f) return 2;
    if (!ops.AllReduce(call, hlo::Opcode::kMaximum, in.data(), out.data(), 2).ok()) return 3;
    if (out[0] != 2.0f || out[1] != 20.0f) return 4;
    // Singleton groups: each rank keeps its own values.
    call.replica_groups = {{0}, {1}};
    if (!ops.AllReduce(call, hlo::Opcode::kMultiply, in.data(), out.data(), 2).ok()) return 5;
    if (out[0] != in[0]) return 6;
    call.replica_groups = {};
    std::vector<float> gathered(4);
    if (!ops.AllGather(call, in.data(), gathered.data(), 8).ok()) return 7;
    if (gathered != std::vector<float>{1, 10, 2, 20}) return 8;
    if (!ops.CollectivePermute(call, {{0, 1}}, in.data(), out.data(), 8).ok()) return 9;
    if (r == 1 && (out[0] != 1.0f || out[1] != 10.0f)) return 10;
    if (r == 0 && (out[0] != 0.0f || out[1] != 0.0f)) return 11;
    call.type = hlo::ElementType::kPred;
    uint8_t p = static_cast<uint8_t>(r), q = 9;
    if (!ops.AllReduce(call, hlo::Opcode::kAnd, &p, &q, 1).ok() || q != 0) return 12;
    if (!ops.AllReduce(call, hlo::Opcode::kOr, &p, &q, 1).ok() || q != 1) return 13;
    call.type = hlo::ElementType::kF8E5M2;
    if (ops.AllReduce(call, hlo::Opcode::kAdd, &p, &q, 1).ok()) return 14;
    return 0;
  });
  for (size_t r = 0; r < results.size(); ++r) EXPECT_EQ(results[r].exit_code, 0) << "rank " << r;
}

TEST(ExecutorCollectives, TypeAndReductionMapping) {
  EXPECT_EQ(FromHloType(hlo::ElementType::kBF16), DataType::kBF16);
  EXPECT_EQ(FromHloType(hlo::ElementType::kPred), DataType::kU8);
  EXPECT_FALSE(FromHloType(hlo::ElementType::kS4).has_value());
  EXPECT_EQ(FromHloReduction(hlo::Opcode::kAdd, hlo::ElementType::kF32), ReduceOp::kSum);
  EXPECT_FALSE(FromHloReduction(hlo::Opcode::kAnd, hlo::ElementType::kS32).has_value());
  EXPECT_FALSE(FromHloReduction(hlo::Opcode::kSubtract, hlo::ElementType::kF32).has_value());
}

}  // namespace
}  // namespace neuron::collectives
