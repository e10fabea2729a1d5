// batch-norm-training, batch-norm-inference and batch-norm-grad: statistics
// over every dimension but feature_index, computed in double.
#ifndef NEURON_LIB_KERNELS_BATCH_NORM_H_
#define NEURON_LIB_KERNELS_BATCH_NORM_H_

#include <vector>

#include "lib/hlo/opcode.h"
#include "lib/kernels/buffer.h"

namespace neuron::kernels {

// ins/outs as the HLO operands and (flattened) results of `op`.
void BatchNorm(hlo::Opcode op, double epsilon, int64_t feature_index,
               const std::vector<const Buf*>& ins, const std::vector<Buf*>& outs);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_BATCH_NORM_H_
