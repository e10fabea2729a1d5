// ragged-all-to-all: every member of a replica group sends a run of rows
// (along dimension 0) of its input to each member, which writes them into
// its copy of the output operand at an offset the sender names. Over the
// CollectiveOps interface it is an all-gather of the inputs and of the
// offset/size arrays, after which each member copies what is addressed to
// it; a group of one is a local copy.
#ifndef NEURON_LIB_KERNELS_RAGGED_ALL_TO_ALL_H_
#define NEURON_LIB_KERNELS_RAGGED_ALL_TO_ALL_H_

#include <vector>

#include "absl/status/status.h"
#include "lib/kernels/buffer.h"
#include "lib/kernels/collectives.h"

namespace neuron::kernels {

struct RaggedAllToAllOperands {
  const Buf* input = nullptr;
  const Buf* output = nullptr;  // the result starts as this
  const Buf* input_offsets = nullptr;
  const Buf* send_sizes = nullptr;
  const Buf* output_offsets = nullptr;
  // recv_sizes is what the receiver expects; the senders' sizes decide.
};

// `position` and `group_size`: this device's place in its replica group.
// coll may be nullptr only for a group of one. Rows out of range are an
// error, not a write past a buffer.
absl::Status RaggedAllToAll(CollectiveOps* coll, const CollectiveCall& call, int64_t position, int64_t group_size,
                            const RaggedAllToAllOperands& in, Buf& out);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_RAGGED_ALL_TO_ALL_H_
