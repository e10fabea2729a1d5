// Which input elements a window reads, arranged for the windowed
// reductions' loops (window_ops.cc): the output is walked one "outer"
// position at a time (the leading dims), and each outer position covers a
// run of lanes that the innermost loop handles together.
//
// Lanes are either the trailing dims the window leaves alone (size 1,
// stride 1, no padding or dilation: a max-pool's features in NHWC), read as
// contiguous rows shared by input and output, or, when there are none, the
// output positions of the innermost windowed dim (NCHW's W), read as runs
// with the window's stride. Window taps are visited in row-major window
// order, as the reducer is applied.
#ifndef NEURON_LIB_KERNELS_WINDOW_WALK_H_
#define NEURON_LIB_KERNELS_WINDOW_WALK_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "lib/hlo/instruction.h"

namespace neuron::kernels {

class WindowWalk {
 public:
  // For a strided walk, one window tap of the lane dim: lanes [first, end)
  // read it, lane `first` at input position `input` of that dim and each
  // next lane lane_stride() further.
  struct LaneRun {
    int64_t first = 0, end = 0, input = 0;
  };

  // in, out: the operand's and the result's dims; window: per dim (missing
  // dims are size 1). Without lanes every dim is walked position by
  // position (one lane), for the per-element paths.
  absl::Status Init(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                    std::vector<hlo::WindowDim> window, bool lanes);

  int64_t outer_count() const { return outer_count_; }
  // Lanes per outer position; output element j * lanes() + i is outer
  // position j's lane i.
  int64_t lanes() const { return lanes_; }
  // True when the lanes are a windowed dim's output positions (runs());
  // false when they are contiguous rows starting at each tap's offset.
  bool strided() const { return strided_; }
  int64_t lane_stride() const { return lane_stride_; }
  // Strided: the input length of the lane dim (runs read within it).
  int64_t lane_input_size() const { return lane_input_size_; }
  const std::vector<LaneRun>& runs() const { return runs_; }
  // Window taps per output, padding included: for work estimates.
  double taps_per_output() const { return taps_per_output_; }

  // A walk over outer positions from some start; one per thread.
  class Cursor {
   public:
    Cursor(const WindowWalk& walk, int64_t outer_position);
    // Moves to the next outer position (row-major).
    void Next();
    // fn(offset) for each tap of the outer dims' window that lands on the
    // input, in row-major window order; offset in input elements.
    template <typename Fn>
    void ForEachTap(Fn&& fn);

   private:
    const WindowWalk& walk_;
    std::vector<int64_t> pos_;
    std::vector<std::vector<int64_t>> taps_;  // per outer dim: input offsets
    std::vector<size_t> tap_;
  };

 private:
  // Input offsets (position times stride) of dim d's window taps that land
  // on the input at output position o.
  void Taps(int d, int64_t o, std::vector<int64_t>& offsets) const;
  // runs_ for a strided walk over dim d; false when its window taps are
  // too sparse to list.
  bool BuildRuns(int d);

  std::vector<int64_t> in_dims_, out_dims_, in_strides_;
  std::vector<hlo::WindowDim> win_;
  int outer_ = 0;  // dims [0, outer_) are walked
  int64_t outer_count_ = 1, lanes_ = 1, lane_stride_ = 1, lane_input_size_ = 0;
  bool strided_ = false;
  std::vector<LaneRun> runs_;
  double taps_per_output_ = 1;
};

template <typename Fn>
void WindowWalk::Cursor::ForEachTap(Fn&& fn) {
  const int n = walk_.outer_;
  int64_t off = 0;
  for (int d = 0; d < n; ++d) {
    if (taps_[d].empty()) return;
    tap_[d] = 0;
    off += taps_[d][0];
  }
  while (true) {
    fn(off);
    int d = n - 1;
    for (; d >= 0; --d) {
      const std::vector<int64_t>& t = taps_[d];
      off -= t[tap_[d]];
      if (++tap_[d] < t.size()) {
        off += t[tap_[d]];
        break;
      }
      tap_[d] = 0;
      off += t[0];
    }
    if (d < 0) return;
  }
}

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_WINDOW_WALK_H_
