// custom-calls with a known meaning: vendor GEMM targets (`__cublas$gemm`,
// `__cublas$lt$matmul`, `__onednn$matmul`) run as dot, vendor convolution
// targets (`__cudnn$convForward`, `__cudnn$convBiasActivationForward`) as
// convolution (+ bias, + relu). Every other target is refused by name.
#ifndef NEURON_LIB_KERNELS_CUSTOM_CALLS_H_
#define NEURON_LIB_KERNELS_CUSTOM_CALLS_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/hlo/instruction.h"
#include "lib/kernels/buffer.h"

namespace neuron::kernels {

class CustomCallKernel {
 public:
  virtual ~CustomCallKernel() = default;
  virtual void Run(const std::vector<const Buf*>& ins, const std::vector<Buf*>& outs) = 0;
};

absl::StatusOr<std::unique_ptr<CustomCallKernel>> PlanCustomCall(const hlo::Instruction& instr);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_CUSTOM_CALLS_H_
