// ragged-all-to-all across forked ranks: each rank runs the module with the
// executor's collectives over its Communicator and checks its result
// against the definition computed here from every rank's operands.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/collectives/executor_collectives.h"
#include "lib/hlo/load.h"
#include "lib/hlo/verifier.h"
#include "lib/kernels/executable.h"
#include "tests/collectives/rank_harness.h"

namespace neuron::collectives {
namespace {

constexpr int kRanks = 3, kRows = 6, kCols = 2;

constexpr char kModule[] = R"(HloModule m, replica_count=3
ENTRY e {
  input = f32[6,2] parameter(0)
  output = f32[6,2] parameter(1)
  input_offsets = s64[3] parameter(2)
  send_sizes = s64[3] parameter(3)
  output_offsets = s64[3] parameter(4)
  recv_sizes = s64[3] parameter(5)
  ROOT r = f32[6,2] ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets, recv_sizes), replica_groups={}
})";

// Rank s sends (s + p) % 3 rows to peer p, its runs back to back from
// row 1; receivers stack what they get in sender order from row 0.
int64_t Sends(int s, int p) { return (s + p) % kRanks; }
int64_t InputOffset(int s, int p) {
  int64_t o = 1;
  for (int q = 0; q < p; ++q) o += Sends(s, q);
  return o;
}
int64_t OutputOffset(int s, int p) {
  int64_t o = 0;
  for (int q = 0; q < s; ++q) o += Sends(q, p);
  return o;
}
float InputValue(int rank, int64_t i) { return 100.0f * (rank + 1) + i; }

TEST(RaggedAllToAllRanks, EachRankReceivesTheRowsAddressedToIt) {
  testing::JobOptions o;
  o.base.world = kRanks;
  o.base.timeout_s = 20;
  auto results = testing::RunJob(o, [](Communicator& c) {
    const int r = c.rank();
    auto module = hlo::LoadModule(kModule, "ragged.hlo");
    if (!module.ok() || !hlo::Verify(**module).ok()) return 1;
    auto exe = kernels::Executable::Build(**module);
    if (!exe.ok()) return 2;
    std::vector<kernels::Tensor> in;
    in.emplace_back(hlo::ElementType::kF32, std::vector<int64_t>{kRows, kCols});
    in.emplace_back(hlo::ElementType::kF32, std::vector<int64_t>{kRows, kCols});
    for (int64_t i = 0; i < kRows * kCols; ++i) {
      in[0].as<float>()[i] = InputValue(r, i);
      in[1].as<float>()[i] = -1;
    }
    for (int k = 0; k < 4; ++k) in.emplace_back(hlo::ElementType::kS64, std::vector<int64_t>{kRanks});
    for (int p = 0; p < kRanks; ++p) {
      in[2].as<int64_t>()[p] = InputOffset(r, p);
      in[3].as<int64_t>()[p] = Sends(r, p);
      in[4].as<int64_t>()[p] = OutputOffset(r, p);
      in[5].as<int64_t>()[p] = Sends(p, r);
    }
    CommunicatorCollectives ops(&c);
    kernels::ExecOptions opts;
    opts.collectives = &ops;
    opts.replica_id = r;
    opts.replica_count = kRanks;
    std::vector<kernels::Tensor> out;
    absl::Status s = (*exe)->Run(in, &out, opts);
    if (!s.ok()) {
      fprintf(stderr, "rank %d: %s\n", r, std::string(s.message()).c_str());
      return 3;
    }
    // The definition: -1 except, for each sender, its rows addressed here.
    std::vector<float> want(kRows * kCols, -1);
    for (int sender = 0; sender < kRanks; ++sender)
      for (int64_t row = 0; row < Sends(sender, r); ++row)
        for (int col = 0; col < kCols; ++col)
          want[(OutputOffset(sender, r) + row) * kCols + col] =
              InputValue(sender, (InputOffset(sender, r) + row) * kCols + col);
    for (int64_t i = 0; i < kRows * kCols; ++i)
      if (out[0].as<float>()[i] != want[i]) {
        fprintf(stderr, "rank %d element %ld: %g, want %g\n", r, static_cast<long>(i), out[0].as<float>()[i], want[i]);
        return 4;
      }
    return 0;
  });
  for (size_t r = 0; r < results.size(); ++r) EXPECT_EQ(results[r].exit_code, 0) << "rank " << r;
}

}  // namespace
}  // namespace neuron::collectives
