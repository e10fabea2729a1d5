// The interface through which the executor runs collectives across
// devices. The runtime implements it over its simulated devices; with no
// implementation (nullptr) the executor acts as a single device, where
// every collective is the identity.
#ifndef NEURON_LIB_KERNELS_COLLECTIVES_H_
#define NEURON_LIB_KERNELS_COLLECTIVES_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "lib/hlo/opcode.h"
#include "lib/hlo/shape.h"

namespace neuron::kernels {

struct CollectiveCall {
  hlo::ElementType type = hlo::ElementType::kInvalid;
  // Groups of replica (or global device) ids; empty = all in one group.
  std::vector<std::vector<int64_t>> replica_groups;
  int64_t channel_id = -1;
  bool use_global_device_ids = false;
};

class CollectiveOps {
 public:
  virtual ~CollectiveOps() = default;
  // out = reduction (add/multiply/maximum/minimum/and/or) over the group of
  // `count` elements.
  virtual absl::Status AllReduce(const CollectiveCall& call, hlo::Opcode reduction,
                                 const void* in, void* out, int64_t count) = 0;
  // out = concatenation over the group, in group order, of each member's
  // `bytes` bytes.
  virtual absl::Status AllGather(const CollectiveCall& call, const void* in,
                                 void* out, int64_t bytes) = 0;
  // Sends `bytes` to the targets of pairs where this device is the source;
  // out receives from the pair whose target is this device, else zeros.
  virtual absl::Status CollectivePermute(
      const CollectiveCall& call,
      const std::vector<std::pair<int64_t, int64_t>>& source_target_pairs,
      const void* in, void* out, int64_t bytes) = 0;
};

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_COLLECTIVES_H_
