// -lnc 2: how the program's work is split across the two physical cores of
// a logical core. Each large dot, convolution, fusion or elementwise op of
// the entry computation is cut in two along the outermost dimension of its
// result that is at least 2 long; every result dimension of these ops is
// parallel (a dot's contracting dimensions are not in its result), so the
// halves are independent. The runtime runs the halves on two threads.
#ifndef NEURON_LIB_COMPILER_SHARDING_PLAN_H_
#define NEURON_LIB_COMPILER_SHARDING_PLAN_H_

#include <vector>

#include "lib/hlo/module.h"
#include "lib/program/manifest.h"

namespace neuron::compiler {

// Ops with fewer result elements than this are not worth splitting.
inline constexpr int64_t kMinShardElements = 1024;

std::vector<program::ShardSplit> PlanSharding(const hlo::Module& module, int lnc);

}  // namespace neuron::compiler

#endif  // NEURON_LIB_COMPILER_SHARDING_PLAN_H_
