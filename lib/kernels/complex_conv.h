// Complex convolution as four real ones: (a + ib) * (c + id) =
// (ac - bd) + i(ad + bc), each product through the real convolution kernel
// with the same geometry.
#ifndef NEURON_LIB_KERNELS_COMPLEX_CONV_H_
#define NEURON_LIB_KERNELS_COMPLEX_CONV_H_

#include <memory>

#include "absl/status/statusor.h"
#include "lib/hlo/instruction.h"
#include "lib/kernels/dot_conv.h"

namespace neuron::kernels {

// input, kernel and out all c64 or all c128; otherwise Unimplemented.
absl::StatusOr<std::unique_ptr<DotKernel>> PlanComplexConvolution(const hlo::Shape& input,
                                                                  const hlo::Shape& kernel,
                                                                  const hlo::Shape& out,
                                                                  const hlo::Attributes& attrs);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_COMPLEX_CONV_H_
