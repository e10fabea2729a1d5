// dot and convolution. Both are planned at build time into GEMM calls:
// operands are used in place when their layout already suits the GEMM
// (possibly transposed), otherwise permuted/converted into scratch owned by
// the plan. Narrow floats compute in f32, f64 in f64, integers in int64.
#ifndef NEURON_LIB_KERNELS_DOT_CONV_H_
#define NEURON_LIB_KERNELS_DOT_CONV_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/hlo/instruction.h"
#include "lib/kernels/buffer.h"

namespace neuron::kernels {

class DotKernel {
 public:
  virtual ~DotKernel() = default;
  virtual void Run(const Buf& lhs, const Buf& rhs, Buf& out) = 0;
};

// The dims of a dot operand of rank `rank` that are neither batch nor
// contracting, in order.
std::vector<int64_t> DotFreeDims(int64_t rank, const std::vector<int64_t>& batch,
                                 const std::vector<int64_t>& contracting);

// A dot operand's dims as [batch, contracting, free] and as [batch, free,
// contracting]: the two orders a GEMM reads in place (one transposed).
// Either being the identity means the operand needs no permute.
struct DotOperandOrders {
  std::vector<int64_t> contracting_first, free_first;
};
DotOperandOrders DotOperandOrdersOf(int64_t rank, const std::vector<int64_t>& batch,
                                    const std::vector<int64_t>& contracting);

// dot with general dimension numbers (batch and contracting dims anywhere).
absl::StatusOr<std::unique_ptr<DotKernel>> PlanDot(const hlo::Shape& lhs,
                                                   const hlo::Shape& rhs,
                                                   const hlo::DotDims& dims,
                                                   const hlo::Shape& out);

// convolution: dim labels, stride, padding, lhs/rhs dilation, reversal,
// feature and batch groups; im2col + GEMM per image and group.
absl::StatusOr<std::unique_ptr<DotKernel>> PlanConvolution(const hlo::Shape& input,
                                                           const hlo::Shape& kernel,
                                                           const hlo::Shape& out,
                                                           const hlo::Attributes& attrs);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_DOT_CONV_H_
