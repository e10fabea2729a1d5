// Convolutions in which each output plane reads one input plane per
// reduction step: the depthwise gradients a MobileNet training step is
// made of, which oneDNN's forward primitive cannot take. XLA writes a
// depthwise layer's input gradient as a convolution over the lhs-dilated
// output gradient (feature groups = channels), and its weight gradient as
// one with batch groups = channels whose "kernel" is the output gradient;
// im2col or tap-by-tap GEMMs spent 1-2 s on each of mobilenet_v2's big
// ones. Here each output plane is a sum of 2-D correlations of planes read
// where they lie, with the window (strides, padding, both dilations,
// reversal) resolved once into runs of lanes: a run is an AXPY along an
// output row or a dot along a kernel row, whichever is the longer.
#ifndef NEURON_LIB_KERNELS_DEPTHWISE_CONV_H_
#define NEURON_LIB_KERNELS_DEPTHWISE_CONV_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "lib/hlo/instruction.h"

namespace neuron::kernels {

// Where the planes are, in elements. Output plane (n, o) is
//   sum over r < reduce of corr2d(x + n*x_n + o*x_o + r*x_r, w + o*w_o + r*w_r)
// written at y + n*y_n + o*y_o; rows and columns of each plane step by the
// *_row and *_col strides.
struct PlaneConvShape {
  int64_t out_batch = 1, out_features = 1, reduce = 1;
  int64_t x_n = 0, x_o = 0, x_r = 0, w_o = 0, w_r = 0, y_n = 0, y_o = 0;
  int64_t in_h = 1, in_w = 1, k_h = 1, k_w = 1, out_h = 1, out_w = 1;
  int64_t x_row = 0, x_col = 0, w_row = 0, w_col = 0, y_row = 0, y_col = 0;
  hlo::WindowDim win_h, win_w;
};

class PlaneConvolution {
 public:
  // Null where the window does not reduce to runs (it always does for
  // XLA's windows; the check guards the arithmetic).
  static std::unique_ptr<PlaneConvolution> Plan(const PlaneConvShape& shape);

  // f32 operands and result; planes split over `threads` threads.
  void Run(const float* x, const float* w, float* y, int threads) const;

 private:
  // Lanes t < count: output o0 + t*o_step (or kernel index, for dots)
  // meets input i0 + t*i_step.
  struct Run1 {
    int64_t outer;  // the kernel column (AXPY) or output column (dot)
    int64_t o0, o_step, i0, i_step, count;
  };
  struct RowTap {
    int64_t out_row, in_row, k_row;
  };
  void RunPlane(const float* x, const float* w, float* y) const;

  PlaneConvShape s_;
  bool dots_ = false;  // runs along kernel rows (a window wider than the output)
  std::vector<RowTap> rows_;
  std::vector<Run1> runs_;
};

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_DEPTHWISE_CONV_H_
