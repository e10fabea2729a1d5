// Runs an ExprProgram over whole tensors: tiles of ExprProgram::kTile
// elements are loaded (converted to the compute domain, splatted or
// gathered for broadcasts), evaluated and stored, so intermediate values
// never leave the cache. Large tensors are split across the host threads.
#ifndef NEURON_LIB_KERNELS_ELEMENTWISE_KERNEL_H_
#define NEURON_LIB_KERNELS_ELEMENTWISE_KERNEL_H_

#include <memory>
#include <vector>

#include "lib/kernels/buffer.h"
#include "lib/kernels/expr_program.h"

namespace neuron::kernels {

class ElementwiseKernel {
 public:
  explicit ElementwiseKernel(ExprProgram program);

  // params: the program's parameters by number; outs: one per output.
  void Run(const std::vector<const Buf*>& params, const std::vector<Buf*>& outs,
           const ExprRunContext& ctx, int threads);

  const ExprProgram& program() const { return program_; }

 private:
  struct ThreadState {
    ExprScratch scratch;
    std::vector<std::vector<uint64_t>> tiles;  // per input
    std::vector<uint8_t> gather;               // raw bytes for mapped inputs
    std::vector<const void*> in_ptrs;
    std::vector<const void*> out_regs;
    std::vector<int8_t> nonfinite;  // per output, seen in this range
  };
  void RunRange(ThreadState& ts, int64_t begin, int64_t end,
                const std::vector<const Buf*>& params, const std::vector<Buf*>& outs,
                const ExprRunContext& ctx);

  ExprProgram program_;
  std::vector<ThreadState> threads_;
};

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_ELEMENTWISE_KERNEL_H_
