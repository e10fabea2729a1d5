// The executor's collectives (kernels::CollectiveOps) over a Communicator,
// so HLO all-reduce, all-gather, reduce-scatter and collective-permute run
// across ranks. Replica (or global device) id i is rank i of the
// communicator; one device per rank.
#ifndef NEURON_LIB_COLLECTIVES_EXECUTOR_COLLECTIVES_H_
#define NEURON_LIB_COLLECTIVES_EXECUTOR_COLLECTIVES_H_

#include <optional>

#include "lib/collectives/communicator.h"
#include "lib/kernels/collectives.h"

namespace neuron::collectives {

// The engine's type for an HLO element type (pred as uint8); nullopt when
// the engine has none (sub-byte, fp8, complex, tokens).
std::optional<DataType> FromHloType(hlo::ElementType type);
// add, multiply, maximum, minimum, and (min over 0/1), or (max over 0/1).
std::optional<ReduceOp> FromHloReduction(hlo::Opcode op, hlo::ElementType type);

class CommunicatorCollectives : public kernels::CollectiveOps {
 public:
  explicit CommunicatorCollectives(Communicator* comm) : comm_(comm) {}

  absl::Status AllReduce(const kernels::CollectiveCall& call, hlo::Opcode reduction,
                         const void* in, void* out, int64_t count) override;
  absl::Status AllGather(const kernels::CollectiveCall& call, const void* in,
                         void* out, int64_t bytes) override;
  absl::Status CollectivePermute(
      const kernels::CollectiveCall& call,
      const std::vector<std::pair<int64_t, int64_t>>& source_target_pairs,
      const void* in, void* out, int64_t bytes) override;

 private:
  Communicator* comm_;
};

}  // namespace neuron::collectives

#endif  // NEURON_LIB_COLLECTIVES_EXECUTOR_COLLECTIVES_H_
