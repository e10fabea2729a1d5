#include "lib/kernels/window_walk.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "lib/kernels/buffer.h"

namespace neuron::kernels {
namespace {

// Floor and ceiling of a / b for b > 0.
int64_t FloorDiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); }
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

// Every position the window arithmetic forms stays below 2^62 when each
// term is at most 2^60.
constexpr int64_t kTermLimit = int64_t{1} << 60;

bool ProductFits(int64_t a, int64_t b) {
  int64_t p;
  return !__builtin_mul_overflow(a, b, &p) && p <= kTermLimit;
}

// The window leaves dim d alone: output position o reads input position o.
bool Untouched(const hlo::WindowDim& w, int64_t in, int64_t out) {
  return w.size == 1 && w.stride == 1 && w.pad_low == 0 && w.pad_high == 0 &&
         w.base_dilation == 1 && in == out;
}

}  // namespace

absl::Status WindowWalk::Init(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                              std::vector<hlo::WindowDim> window, bool lanes) {
  const int rank = static_cast<int>(in.size());
  if (out.size() != in.size())
    return absl::InvalidArgumentError("window output rank differs from its operand's");
  in_dims_ = in;
  out_dims_ = out;
  in_strides_ = RowMajorStrides(in);
  win_ = std::move(window);
  win_.resize(rank);
  taps_per_output_ = 1;
  for (int d = 0; d < rank; ++d) {
    const hlo::WindowDim& w = win_[d];
    if (w.size < 0 || w.stride < 1 || w.window_dilation < 1 || w.base_dilation < 1)
      return absl::InvalidArgumentError(absl::StrCat("window dimension ", d, " has a size below 0 or a step below 1"));
    if (in[d] < 0 || out[d] < 0 || !ProductFits(out[d], w.stride) ||
        !ProductFits(w.size, w.window_dilation) || !ProductFits(in[d], w.base_dilation) ||
        std::llabs(w.pad_low) > kTermLimit || std::llabs(w.pad_high) > kTermLimit)
      return absl::InvalidArgumentError(absl::StrCat("window dimension ", d, " is too large"));
    taps_per_output_ *= static_cast<double>(w.size);
  }
  int trailing = rank;
  while (trailing > 0 && Untouched(win_[trailing - 1], in[trailing - 1], out[trailing - 1])) --trailing;
  int64_t block = 1;
  for (int d = trailing; d < rank; ++d) block *= in[d];
  strided_ = false;
  runs_.clear();
  if (!lanes) {
    outer_ = rank;
    lanes_ = 1;
  } else if (block > 1 || trailing == 0) {
    outer_ = trailing;
    lanes_ = block;
  } else if (win_[trailing - 1].base_dilation == 1 && BuildRuns(trailing - 1)) {
    // The trailing untouched dims hold one element: the windowed dim
    // before them is innermost in memory.
    outer_ = trailing - 1;
    lanes_ = out[outer_];
    lane_stride_ = win_[outer_].stride;
    lane_input_size_ = in[outer_];
    strided_ = true;
  } else {
    outer_ = trailing;
    lanes_ = block;
  }
  outer_count_ = 1;
  for (int d = 0; d < outer_; ++d) outer_count_ *= out[d];
  return absl::OkStatus();
}

bool WindowWalk::BuildRuns(int d) {
  const hlo::WindowDim& w = win_[d];
  const int64_t in = in_dims_[d], out = out_dims_[d];
  if (in == 0 || out == 0 || w.size == 0) return true;
  // Taps that some output position's window lands on the input with.
  const int64_t k_lo = std::max<int64_t>(0, CeilDiv(w.pad_low - (out - 1) * w.stride, w.window_dilation));
  const int64_t k_hi = std::min(w.size - 1, FloorDiv(in - 1 + w.pad_low, w.window_dilation));
  if (k_hi - k_lo > in + out) return false;
  for (int64_t k = k_lo; k <= k_hi; ++k) {
    const int64_t base = k * w.window_dilation - w.pad_low;  // output 0's input position
    const int64_t first = std::max<int64_t>(0, CeilDiv(-base, w.stride));
    const int64_t end = std::min(out, FloorDiv(in - 1 - base, w.stride) + 1);
    if (first < end) runs_.push_back({first, end, first * w.stride + base});
  }
  return true;
}

void WindowWalk::Taps(int d, int64_t o, std::vector<int64_t>& offsets) const {
  offsets.clear();
  const hlo::WindowDim& w = win_[d];
  if (in_dims_[d] == 0 || w.size == 0) return;
  // Positions in the dilated, padded input: tap k sits at base + k * dilation.
  const int64_t base = o * w.stride - w.pad_low;
  const int64_t last = (in_dims_[d] - 1) * w.base_dilation;
  const int64_t k_lo = std::max<int64_t>(0, CeilDiv(-base, w.window_dilation));
  const int64_t k_hi = std::min(w.size - 1, FloorDiv(last - base, w.window_dilation));
  for (int64_t k = k_lo; k <= k_hi; ++k) {
    const int64_t p = base + k * w.window_dilation;
    if (p % w.base_dilation != 0) continue;  // a hole between dilated elements
    offsets.push_back(p / w.base_dilation * in_strides_[d]);
  }
}

WindowWalk::Cursor::Cursor(const WindowWalk& walk, int64_t outer_position)
    : walk_(walk), pos_(walk.outer_), taps_(walk.outer_), tap_(walk.outer_) {
  for (int d = walk.outer_ - 1; d >= 0; --d) {
    const int64_t n = walk.out_dims_[d];
    pos_[d] = n ? outer_position % n : 0;
    outer_position = n ? outer_position / n : 0;
    walk.Taps(d, pos_[d], taps_[d]);
  }
}

void WindowWalk::Cursor::Next() {
  for (int d = walk_.outer_ - 1; d >= 0; --d) {
    const bool carry = ++pos_[d] >= walk_.out_dims_[d];
    if (carry) pos_[d] = 0;
    walk_.Taps(d, pos_[d], taps_[d]);
    if (!carry) return;
  }
}

}  // namespace neuron::kernels
