// Reduce (variadic, any reducer), and the kernel interface it shares with
// the windowed reductions (window_ops.h). Simple reducers (add/multiply/
// maximum/minimum/and/or of the two parameters) take a typed fast path
// that accumulates floats in double; others run the reducer computation on
// lanes of outputs, bf16/f16 accumulators held in f32.
#ifndef NEURON_LIB_KERNELS_REDUCE_OPS_H_
#define NEURON_LIB_KERNELS_REDUCE_OPS_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/hlo/instruction.h"
#include "lib/kernels/buffer.h"

namespace neuron::kernels {

class ReduceLikeKernel {
 public:
  virtual ~ReduceLikeKernel() = default;
  // ins: operands then init values (reduce, reduce-window); for
  // select-and-scatter: operand, source, init.
  virtual void Run(const std::vector<const Buf*>& ins, const std::vector<Buf*>& outs,
                   int threads) = 0;
};

absl::StatusOr<std::unique_ptr<ReduceLikeKernel>> PlanReduce(const hlo::Instruction& instr);

// One operand of `type` shaped `in`, reduced over `dims` by a simple
// reducer (`op(p0, p1)`: add, multiply, maximum, minimum, and, or), which
// accumulates in double (int64 for integers) and stores in whatever type
// the output Buf has: an f64 output keeps partial results exact for a
// caller that combines them (fused_reduce.h). Fails for other reducers.
absl::StatusOr<std::unique_ptr<ReduceLikeKernel>> PlanSimpleReduce(hlo::ElementType type,
                                                                   const hlo::Shape& in,
                                                                   const std::vector<int64_t>& dims,
                                                                   const hlo::Computation& reducer);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_REDUCE_OPS_H_
