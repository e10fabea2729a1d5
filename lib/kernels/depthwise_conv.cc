#include "lib/kernels/depthwise_conv.h"

#include <immintrin.h>

#include <algorithm>

#include "lib/kernels/thread_pool.h"
#include "lib/kernels/vector_math_avx2.h"

namespace neuron::kernels {
namespace {

// The input position output position `o` meets through kernel index `k`
// along one dim, or -1 where that is padding or a hole of the dilated
// input (a reversed window takes kernel index k at position size-1-k).
int64_t InputPosition(const hlo::WindowDim& w, int64_t k_size, int64_t in_size, int64_t o, int64_t k) {
  const int64_t kp = w.reversal ? k_size - 1 - k : k;
  const int64_t p = o * w.stride - w.pad_low + kp * w.window_dilation;
  const int64_t dilation = std::max<int64_t>(1, w.base_dilation);
  if (p < 0 || p % dilation != 0 || p / dilation >= in_size) return -1;
  return p / dilation;
}

// An arithmetic run from (a, i) pairs in order; false if they are not one.
template <typename Run>
bool AsRun(const std::vector<std::pair<int64_t, int64_t>>& pairs, int64_t outer, Run* run) {
  run->outer = outer;
  run->count = static_cast<int64_t>(pairs.size());
  run->o0 = pairs[0].first;
  run->i0 = pairs[0].second;
  run->o_step = pairs.size() > 1 ? pairs[1].first - pairs[0].first : 1;
  run->i_step = pairs.size() > 1 ? pairs[1].second - pairs[0].second : 1;
  for (size_t t = 0; t < pairs.size(); ++t)
    if (pairs[t].first != run->o0 + static_cast<int64_t>(t) * run->o_step ||
        pairs[t].second != run->i0 + static_cast<int64_t>(t) * run->i_step)
      return false;
  return true;
}

float Dot(const float* a, const float* b, int64_t n) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  if (i + 8 <= n) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    i += 8;
  }
  const __m256 acc = _mm256_add_ps(acc0, acc1);
  float sum = vec8::HorizontalSum(acc);
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// sum of a[t] * b[2t] for t < n: a stride-2 window's weight gradient
// (its input read at every other pixel). Vectors of b are loaded whole
// and their even lanes kept; no load reaches past b[2n - 2].
float DotStride2(const float* a, const float* b, int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  int64_t t = 0;
  for (; 2 * t + 16 <= 2 * n - 1; t += 8) {
    const __m256 lo = _mm256_loadu_ps(b + 2 * t), hi = _mm256_loadu_ps(b + 2 * t + 8);
    const __m256 even = _mm256_castpd_ps(_mm256_permute4x64_pd(
        _mm256_castps_pd(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0))), _MM_SHUFFLE(3, 1, 2, 0)));
    acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + t), even, acc);
  }
  float sum = vec8::HorizontalSum(acc);
  for (; t < n; ++t) sum += a[t] * b[2 * t];
  return sum;
}

}  // namespace

std::unique_ptr<PlaneConvolution> PlaneConvolution::Plan(const PlaneConvShape& shape) {
  auto c = std::unique_ptr<PlaneConvolution>(new PlaneConvolution());
  c->s_ = shape;
  const PlaneConvShape& s = c->s_;
  for (int64_t oy = 0; oy < s.out_h; ++oy)
    for (int64_t kh = 0; kh < s.k_h; ++kh) {
      const int64_t iy = InputPosition(s.win_h, s.k_h, s.in_h, oy, kh);
      if (iy >= 0) c->rows_.push_back({oy, iy, kh});
    }
  // Runs along whichever is longer: the output row (an AXPY per kernel
  // column) or the kernel row (a dot per output column).
  c->dots_ = s.k_w > s.out_w;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  const int64_t outer_count = c->dots_ ? s.out_w : s.k_w, inner_count = c->dots_ ? s.k_w : s.out_w;
  for (int64_t outer = 0; outer < outer_count; ++outer) {
    pairs.clear();
    for (int64_t inner = 0; inner < inner_count; ++inner) {
      const int64_t ox = c->dots_ ? outer : inner, kw = c->dots_ ? inner : outer;
      const int64_t ix = InputPosition(s.win_w, s.k_w, s.in_w, ox, kw);
      if (ix >= 0) pairs.emplace_back(inner, ix);
    }
    if (pairs.empty()) continue;
    Run1 run;
    if (!AsRun(pairs, outer, &run)) return nullptr;
    c->runs_.push_back(run);
  }
  return c;
}

void PlaneConvolution::RunPlane(const float* x, const float* w, float* y) const {
  for (const RowTap& r : rows_) {
    float* yr = y + r.out_row * s_.y_row;
    const float* xr = x + r.in_row * s_.x_row;
    const float* wr = w + r.k_row * s_.w_row;
    if (!dots_) {
      for (const Run1& u : runs_) {
        const float wv = wr[u.outer * s_.w_col];
        float* yo = yr + u.o0 * s_.y_col;
        const float* xi = xr + u.i0 * s_.x_col;
        const int64_t ys = u.o_step * s_.y_col, xs = u.i_step * s_.x_col;
        if (ys == 1 && xs == 1) {
          for (int64_t t = 0; t < u.count; ++t) yo[t] += wv * xi[t];
        } else {
          for (int64_t t = 0; t < u.count; ++t) yo[t * ys] += wv * xi[t * xs];
        }
      }
    } else {
      for (const Run1& u : runs_) {
        const float* wk = wr + u.o0 * s_.w_col;
        const float* xi = xr + u.i0 * s_.x_col;
        const int64_t ws = u.o_step * s_.w_col, xs = u.i_step * s_.x_col;
        float sum = 0;
        if (ws == 1 && xs == 1) {
          sum = Dot(wk, xi, u.count);
        } else if (ws == 1 && xs == 2) {
          sum = DotStride2(wk, xi, u.count);
        } else {
          for (int64_t t = 0; t < u.count; ++t) sum += wk[t * ws] * xi[t * xs];
        }
        yr[u.outer * s_.y_col] += sum;
      }
    }
  }
}

void PlaneConvolution::Run(const float* x, const float* w, float* y, int threads) const {
  const int64_t planes = s_.out_batch * s_.out_features;
  auto run_planes = [&](int64_t first, int64_t last) {
    for (int64_t p = first; p < last; ++p) {
      const int64_t n = p / s_.out_features, o = p % s_.out_features;
      float* yp = y + n * s_.y_n + o * s_.y_o;
      for (int64_t r = 0; r < s_.out_h; ++r)
        for (int64_t q = 0; q < s_.out_w; ++q) yp[r * s_.y_row + q * s_.y_col] = 0.0f;
      for (int64_t r = 0; r < s_.reduce; ++r)
        RunPlane(x + n * s_.x_n + o * s_.x_o + r * s_.x_r, w + o * s_.w_o + r * s_.w_r, yp);
    }
  };
  const int parts = static_cast<int>(
      std::min<int64_t>({threads, ThreadPool::Global().max_parallelism(), planes}));
  if (parts < 2) {
    run_planes(0, planes);
    return;
  }
  ThreadPool::Global().Run(parts, [&](int part) {
    run_planes(planes * part / parts, planes * (part + 1) / parts);
  });
}

}  // namespace neuron::kernels
