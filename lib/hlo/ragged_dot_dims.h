// ragged-dot's three modes and the lhs dimensions that index group_sizes,
// shared by shape inference and the kernel so both read the dimension
// numbers one way (XLA's / JAX's ragged_dot_general definition).
#ifndef NEURON_LIB_HLO_RAGGED_DOT_DIMS_H_
#define NEURON_LIB_HLO_RAGGED_DOT_DIMS_H_

#include <cstdint>
#include <vector>

#include "lib/hlo/instruction.h"

namespace neuron::hlo {

// Where lhs's ragged dimension lies: a free (non-contracting) dimension,
// with one rhs group dimension, [b,m,k] x [g,b,k,n] -> [b,m,n]; a
// contracting one, [b,m,k] x [b,k,n] -> [g,b,m,n]; a batch one (then the
// result is the plain dot's).
enum class RaggedDotMode { kNonContracting, kContracting, kBatch };

// Needs d.lhs_ragged to hold one dimension.
RaggedDotMode RaggedDotModeOf(const DotDims& d);

// The lhs dimensions, in order, that group_sizes [prefix..., g] is indexed
// by besides the group: the batch dimensions, then the free (or
// contracting) dimensions outer to the ragged one; for batch mode, the
// batch dimensions before it. A group_sizes of rank 1 applies to all.
std::vector<int64_t> RaggedDotGroupPrefix(const DotDims& d, int64_t lhs_rank);

}  // namespace neuron::hlo

#endif  // NEURON_LIB_HLO_RAGGED_DOT_DIMS_H_
