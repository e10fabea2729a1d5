// gather and scatter with XLA's semantics: gather start indices are
// clamped so the slice stays in bounds; a scatter window that would leave
// the operand is skipped whole; duplicate scatter indices combine in order.
// Operand batching dims are supported.
#ifndef NEURON_LIB_KERNELS_GATHER_SCATTER_H_
#define NEURON_LIB_KERNELS_GATHER_SCATTER_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/hlo/instruction.h"
#include "lib/kernels/buffer.h"
#include "lib/kernels/scalar_fn.h"

namespace neuron::kernels {

void Gather(const Buf& operand, const Buf& indices, const hlo::GatherDims& dims,
            const std::vector<int64_t>& slice_sizes, Buf& out);

class ScatterKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ScatterKernel>> Plan(const hlo::Instruction& instr);
  // ins: operands..., indices, updates...; outs: one per operand.
  void Run(const std::vector<const Buf*>& ins, const std::vector<Buf*>& outs);

 private:
  hlo::ScatterDims dims_;
  int n_ = 1;
  std::unique_ptr<ScalarFn> fn_;
  hlo::Opcode fast_op_ = hlo::Opcode::kUnknown;
  bool overwrite_ = false;  // combiner returns the update
};

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_GATHER_SCATTER_H_
