#include "lib/kernels/batch_norm.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "lib/kernels/element_convert.h"
#include "lib/kernels/float_sums.h"
#include "lib/kernels/gemm.h"
#include "lib/kernels/thread_pool.h"

namespace neuron::kernels {
namespace {

// The operand seen as [outer][feature][inner]: each (outer, feature) pair
// is one contiguous row of `inner` elements.
struct Rows {
  int64_t outer = 0, features = 0, inner = 0;
};

Rows RowsOf(const Buf& x, int64_t feature_index) {
  Rows r;
  r.features = x.dims[feature_index];
  r.inner = 1;
  for (size_t d = static_cast<size_t>(feature_index) + 1; d < x.dims.size(); ++d) r.inner *= x.dims[d];
  r.outer = r.features > 0 && r.inner > 0 ? x.count / (r.features * r.inner) : 0;
  return r;
}

// One row of `b` (elements [first, first + n)) as doubles: the whole
// operand is never held widened, only a row at a time.
void LoadRow(const Buf& b, int64_t first, int64_t n, double* out) {
  if (b.type == hlo::ElementType::kF32) {
    const float* p = reinterpret_cast<const float*>(b.data) + first;
    for (int64_t i = 0; i < n; ++i) out[i] = p[i];
  } else if (b.type == hlo::ElementType::kF64) {
    std::memcpy(out, reinterpret_cast<const double*>(b.data) + first, static_cast<size_t>(n) * sizeof(double));
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = LoadDouble(b.type, b.data, first + i);
  }
}

void StoreRow(Buf& b, int64_t first, int64_t n, const double* in) {
  if (b.type == hlo::ElementType::kF32) {
    float* p = reinterpret_cast<float*>(b.data) + first;
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(in[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) StoreDouble(b.type, b.data, first + i, in[i]);
  }
}

std::vector<double> LoadAll(const Buf& b) {
  std::vector<double> v(static_cast<size_t>(b.count));
  LoadRow(b, 0, b.count, v.data());
  return v;
}

// fn(feature, first element, row) over every row of `b`, in memory order.
template <typename Fn>
void ForEachRow(const Buf& b, const Rows& r, std::vector<double>& row, Fn fn) {
  for (int64_t o = 0; o < r.outer; ++o)
    for (int64_t f = 0; f < r.features; ++f) {
      const int64_t first = (o * r.features + f) * r.inner;
      LoadRow(b, first, r.inner, row.data());
      fn(f, first);
    }
}

// batch-norm-grad's scale and offset gradients: sum(gy * (x - mean)) /
// sqrt(var + eps) and sum(gy), per feature.
void StoreGradStatistics(const std::vector<double>& sum_gy, const std::vector<double>& sum_gy_xc,
                         const std::vector<double>& rs, const std::vector<Buf*>& outs) {
  std::vector<double> gscale(sum_gy_xc.size());
  for (size_t f = 0; f < gscale.size(); ++f) gscale[f] = sum_gy_xc[f] * rs[f];
  StoreRow(*outs[1], 0, static_cast<int64_t>(gscale.size()), gscale.data());
  StoreRow(*outs[2], 0, static_cast<int64_t>(sum_gy.size()), sum_gy.data());
}

// Sum of (p[i] - c)^2, in double.
double SquaredDeviations(const float* p, int64_t n, double c) {
  const __m256d cv = _mm256_set1_pd(c);
  __m256d s0 = _mm256_setzero_pd(), s1 = s0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(p + i)), cv);
    const __m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(p + i + 4)), cv);
    s0 = _mm256_fmadd_pd(d0, d0, s0);
    s1 = _mm256_fmadd_pd(d1, d1, s1);
  }
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, _mm256_add_pd(s0, s1));
  double sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  for (; i < n; ++i) sum += (static_cast<double>(p[i]) - c) * (static_cast<double>(p[i]) - c);
  return sum;
}

// Sums of gy[i] and of gy[i] * (x[i] - mean) in one read, in double.
void GradSums(const float* x, const float* gy, int64_t n, double mean, double* sum_gy, double* sum_gy_xc) {
  const __m256d mv = _mm256_set1_pd(mean);
  __m256d g0 = _mm256_setzero_pd(), g1 = g0, t0 = g0, t1 = g0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256d q0 = _mm256_cvtps_pd(_mm_loadu_ps(gy + i)), q1 = _mm256_cvtps_pd(_mm_loadu_ps(gy + i + 4));
    g0 = _mm256_add_pd(g0, q0);
    g1 = _mm256_add_pd(g1, q1);
    t0 = _mm256_fmadd_pd(q0, _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i)), mv), t0);
    t1 = _mm256_fmadd_pd(q1, _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)), mv), t1);
  }
  alignas(32) double lg[4], lt[4];
  _mm256_store_pd(lg, _mm256_add_pd(g0, g1));
  _mm256_store_pd(lt, _mm256_add_pd(t0, t1));
  double a = (lg[0] + lg[1]) + (lg[2] + lg[3]), b = (lt[0] + lt[1]) + (lt[2] + lt[3]);
  for (; i < n; ++i) {
    a += gy[i];
    b += static_cast<double>(gy[i]) * (static_cast<double>(x[i]) - mean);
  }
  *sum_gy = a;
  *sum_gy_xc = b;
}

// Per-feature running statistics: count, mean and sum of squared
// deviations.
struct Moments {
  double n = 0, mean = 0, m2 = 0;
  void Add(double n_b, double mean_b, double m2_b) {
    if (n_b == 0) return;
    const double total = n + n_b, delta = mean_b - mean;
    mean += delta * (n_b / total);
    m2 += m2_b + delta * delta * (n * n_b / total);
    n = total;
  }
};

// The threads the rows are split over.
int PartsFor(const Rows& r) {
  return static_cast<int>(std::clamp<int64_t>(KernelParts(), 1, std::max<int64_t>(r.outer * r.features, 1)));
}

// fn(part, first row, end row) over the rows [0, outer * features) in
// `parts` runs of whole rows.
template <typename Fn>
void ForRowParts(const Rows& r, int parts, Fn fn) {
  const int64_t rows = r.outer * r.features;
  if (parts == 1) {
    fn(0, 0, rows);
    return;
  }
  ThreadPool::Global().Run(parts, [&](int t) { fn(t, rows * t / parts, rows * (t + 1) / parts); });
}

// The f32 path: AVX2 in double, the rows split over the threads. Each
// thread reads its rows once for the statistics (a row's mean, then the
// squared deviations from it while the row is in cache, combined per
// feature as Chan et al. combine partial variances; for the gradient, the
// sums of gy and of gy * (x - mean) together) and once more for the
// result; the generic path below reads the operand three times on one
// thread (mobilenet_v2's step spent 3 of its 6 s there).
void BatchNormF32(hlo::Opcode op, double eps, const Rows& r, const std::vector<const Buf*>& ins,
                  const std::vector<Buf*>& outs) {
  const int64_t nf = r.features, inner = r.inner;
  const float* x = reinterpret_cast<const float*>(ins[0]->data);
  const std::vector<double> scale = LoadAll(*ins[1]);
  std::vector<double> mean(static_cast<size_t>(nf), 0), var(static_cast<size_t>(nf), 0);
  const int parts = PartsFor(r);
  if (op == hlo::Opcode::kBatchNormTraining) {
    std::vector<std::vector<Moments>> part_moments(parts, std::vector<Moments>(static_cast<size_t>(nf)));
    ForRowParts(r, parts, [&](int t, int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const float* p = x + row * inner;
        const double row_mean = SumF32InDouble(p, inner) / static_cast<double>(inner);
        part_moments[t][row % nf].Add(static_cast<double>(inner), row_mean, SquaredDeviations(p, inner, row_mean));
      }
    });
    for (int64_t f = 0; f < nf; ++f) {
      Moments all;
      for (int t = 0; t < parts; ++t) all.Add(part_moments[t][f].n, part_moments[t][f].mean, part_moments[t][f].m2);
      mean[f] = all.mean;
      var[f] = all.n > 0 ? all.m2 / all.n : 0;
    }
  } else if (op == hlo::Opcode::kBatchNormInference) {
    mean = LoadAll(*ins[3]);
    var = LoadAll(*ins[4]);
  } else {
    mean = LoadAll(*ins[2]);
    var = LoadAll(*ins[3]);
  }
  std::vector<double> rs(static_cast<size_t>(nf));
  for (int64_t f = 0; f < nf; ++f) rs[f] = 1.0 / std::sqrt(var[f] + eps);
  float* y = reinterpret_cast<float*>(outs[0]->data);

  if (op == hlo::Opcode::kBatchNormGrad) {
    const float* gy = reinterpret_cast<const float*>(ins[4]->data);
    std::vector<std::vector<double>> part_gy(parts, std::vector<double>(static_cast<size_t>(nf), 0));
    std::vector<std::vector<double>> part_gy_xc(parts, std::vector<double>(static_cast<size_t>(nf), 0));
    ForRowParts(r, parts, [&](int t, int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t f = row % nf;
        double a = 0, b = 0;
        GradSums(x + row * inner, gy + row * inner, inner, mean[f], &a, &b);
        part_gy[t][f] += a;
        part_gy_xc[t][f] += b;
      }
    });
    std::vector<double> sum_gy(static_cast<size_t>(nf), 0), sum_gy_xc(static_cast<size_t>(nf), 0);
    for (int t = 0; t < parts; ++t)
      for (int64_t f = 0; f < nf; ++f) {
        sum_gy[f] += part_gy[t][f];
        sum_gy_xc[f] += part_gy_xc[t][f];
      }
    const double per = static_cast<double>(r.outer * inner);
    ForRowParts(r, parts, [&](int, int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t f = row % nf;
        // gx = k * ((gy - mean_gy) - (x - mean) * slope), in f32 from
        // constants rounded once: x - mean is exact where x is near it.
        const float k = static_cast<float>(scale[f] * rs[f]), m = static_cast<float>(mean[f]);
        const float mg = static_cast<float>(sum_gy[f] / per);
        const float sl = static_cast<float>(sum_gy_xc[f] / per / (var[f] + eps));
        const __m256 kv = _mm256_set1_ps(k), mv = _mm256_set1_ps(m), mgv = _mm256_set1_ps(mg), slv = _mm256_set1_ps(sl);
        const float* xr = x + row * inner;
        const float* gr = gy + row * inner;
        float* out = y + row * inner;
        int64_t i = 0;
        for (; i + 8 <= inner; i += 8) {
          const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(xr + i), mv);
          const __m256 g = _mm256_sub_ps(_mm256_loadu_ps(gr + i), mgv);
          _mm256_storeu_ps(out + i, _mm256_mul_ps(kv, _mm256_fnmadd_ps(d, slv, g)));
        }
        for (; i < inner; ++i) out[i] = k * std::fma(-(xr[i] - m), sl, gr[i] - mg);
      }
    });
    StoreGradStatistics(sum_gy, sum_gy_xc, rs, outs);
    return;
  }

  const std::vector<double> offset = LoadAll(*ins[2]);
  ForRowParts(r, parts, [&](int, int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t f = row % nf;
      // y = (x - mean) * k + offset in f32 (x - mean exact where x is near).
      const float m = static_cast<float>(mean[f]), k = static_cast<float>(rs[f] * scale[f]);
      const float b = static_cast<float>(offset[f]);
      const __m256 mv = _mm256_set1_ps(m), kv = _mm256_set1_ps(k), bv = _mm256_set1_ps(b);
      const float* xr = x + row * inner;
      float* out = y + row * inner;
      int64_t i = 0;
      for (; i + 8 <= inner; i += 8)
        _mm256_storeu_ps(out + i, _mm256_fmadd_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + i), mv), kv, bv));
      for (; i < inner; ++i) out[i] = std::fma(xr[i] - m, k, b);
    }
  });
  if (op == hlo::Opcode::kBatchNormTraining) {
    StoreRow(*outs[1], 0, nf, mean.data());
    StoreRow(*outs[2], 0, nf, var.data());
  }
}

}  // namespace

// Statistics accumulate in double, a row at a time; the per-feature vectors
// are the only other memory (a training step's activations are gigabytes).
void BatchNorm(hlo::Opcode op, double eps, int64_t fi, const std::vector<const Buf*>& ins,
               const std::vector<Buf*>& outs) {
  const Buf& xb = *ins[0];
  const Rows r = RowsOf(xb, fi);
  bool all_f32 = true;
  for (const Buf* b : ins) all_f32 = all_f32 && b->type == hlo::ElementType::kF32;
  for (const Buf* b : outs) all_f32 = all_f32 && b->type == hlo::ElementType::kF32;
  if (all_f32 && xb.count > 0) {
    BatchNormF32(op, eps, r, ins, outs);
    return;
  }
  const int64_t nf = r.features;
  const double per = nf ? static_cast<double>(xb.count) / static_cast<double>(nf) : 0;
  std::vector<double> row(static_cast<size_t>(r.inner)), other(static_cast<size_t>(r.inner));
  const std::vector<double> scale = LoadAll(*ins[1]);
  std::vector<double> mean(static_cast<size_t>(nf), 0), var(static_cast<size_t>(nf), 0);
  if (op == hlo::Opcode::kBatchNormInference) {
    mean = LoadAll(*ins[3]);
    var = LoadAll(*ins[4]);
  } else if (op == hlo::Opcode::kBatchNormGrad) {
    mean = LoadAll(*ins[2]);
    var = LoadAll(*ins[3]);
  } else {
    ForEachRow(xb, r, row, [&](int64_t f, int64_t) {
      double s = 0;
      for (int64_t i = 0; i < r.inner; ++i) s += row[i];
      mean[f] += s;
    });
    for (auto& m : mean) m /= per;
    ForEachRow(xb, r, row, [&](int64_t f, int64_t) {
      double s = 0;
      for (int64_t i = 0; i < r.inner; ++i) s += (row[i] - mean[f]) * (row[i] - mean[f]);
      var[f] += s;
    });
    for (auto& v : var) v /= per;
  }
  std::vector<double> rs(static_cast<size_t>(nf));
  for (int64_t f = 0; f < nf; ++f) rs[f] = 1.0 / std::sqrt(var[f] + eps);
  if (op == hlo::Opcode::kBatchNormGrad) {
    const Buf& gyb = *ins[4];
    std::vector<double> sum_gy(static_cast<size_t>(nf), 0), sum_gy_xc(static_cast<size_t>(nf), 0);
    ForEachRow(xb, r, row, [&](int64_t f, int64_t first) {
      LoadRow(gyb, first, r.inner, other.data());
      double a = 0, b = 0;
      for (int64_t i = 0; i < r.inner; ++i) {
        a += other[i];
        b += other[i] * (row[i] - mean[f]);
      }
      sum_gy[f] += a;
      sum_gy_xc[f] += b;
    });
    ForEachRow(xb, r, row, [&](int64_t f, int64_t first) {
      LoadRow(gyb, first, r.inner, other.data());
      const double k = scale[f] * rs[f], mean_gy = sum_gy[f] / per;
      const double slope = sum_gy_xc[f] / per / (var[f] + eps);
      for (int64_t i = 0; i < r.inner; ++i) other[i] = k * (other[i] - mean_gy - (row[i] - mean[f]) * slope);
      StoreRow(*outs[0], first, r.inner, other.data());
    });
    StoreGradStatistics(sum_gy, sum_gy_xc, rs, outs);
    return;
  }
  const std::vector<double> offset = LoadAll(*ins[2]);
  ForEachRow(xb, r, row, [&](int64_t f, int64_t first) {
    const double k = rs[f] * scale[f];
    for (int64_t i = 0; i < r.inner; ++i) other[i] = (row[i] - mean[f]) * k + offset[f];
    StoreRow(*outs[0], first, r.inner, other.data());
  });
  if (op == hlo::Opcode::kBatchNormTraining) {
    StoreRow(*outs[1], 0, nf, mean.data());
    StoreRow(*outs[2], 0, nf, var.data());
  }
}

}  // namespace neuron::kernels
