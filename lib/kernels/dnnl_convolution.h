// Convolutions on oneDNN's convolution primitive: for the common windows
// (1 to 3 spatial dims, strides, non-negative padding, kernel dilation,
// feature groups) a 3x3, 64-channel, 56x56 layer at batch 8 runs 2.5x
// faster than im2col + GEMM in f32, and 4x in bf16 on AMX. Operands and
// result are read and written where they lie, in whatever dim order the
// HLO's dim_labels gave them (NHWC/HWIO from JAX, NCHW/OIHW from
// PyTorch): oneDNN runs on the activations in place when it has a fast
// kernel for their layout, and otherwise reorders them to its own inside
// Run.
#ifndef NEURON_LIB_KERNELS_DNNL_CONVOLUTION_H_
#define NEURON_LIB_KERNELS_DNNL_CONVOLUTION_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "lib/hlo/shape.h"

namespace neuron::kernels {

struct DnnlConvShape {
  hlo::ElementType operand_type;  // f32 or bf16 (both operands)
  hlo::ElementType result_type;   // f32, or bf16 with bf16 operands
  int64_t batch, in_features, out_features, groups;
  std::vector<int64_t> in_spatial, kernel_spatial, out_spatial;
  std::vector<int64_t> strides, pad_low, pad_high, dilations;  // per spatial dim
  // Element strides of x, w and y where they lie, in the dim orders Run
  // names; empty: dense in that order.
  std::vector<int64_t> x_strides, w_strides, y_strides;
};

class DnnlConvolution {
 public:
  // Null when oneDNN is absent, the shape is outside what it does, or it
  // offers only a slow reference kernel (bf16: none without bf16
  // instructions).
  static std::unique_ptr<DnnlConvolution> Create(const DnnlConvShape& shape);
  ~DnnlConvolution();

  // y[N, O, S'...] = conv(x[N, C, S...], w[O, C/groups, K...]), each laid
  // out as the shape's strides say, of the shape's types (a bf16 result is
  // rounded once from the f32 sums). False if oneDNN fails (y is then
  // undefined and the caller computes it another way).
  // `w_version` (0: unknown) names the weights' contents as the runtime
  // tracks them: when it and `w` are those of the last Run, the weights
  // are known unchanged and their reorder to oneDNN's layout is reused, as
  // a framework prepacks frozen weights (resnet50 at batch 1 moved 200 MB a
  // call for it).
  bool Run(const void* x, const void* w, void* y, uint64_t w_version = 0);

  // Whether the activations are used where they lie (no reorder of x or
  // y on the way), for tests and profiles.
  bool ActivationsInPlace() const;
  // Whether the weights are reordered to oneDNN's layout (and so kept
  // under their version), for tests.
  bool ReordersWeights() const;

 private:
  struct Impl;
  explicit DnnlConvolution(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_DNNL_CONVOLUTION_H_
