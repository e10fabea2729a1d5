#include "lib/kernels/batch_norm.h"

#include <cmath>
#include <cstring>

#include "lib/kernels/element_convert.h"

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

}  // namespace

// Statistics accumulate in double, a row at a time; the per-feature vectors
// are the only other memory (a training step's activations are gigabytes).
void BatchNorm(hlo::Opcode op, double eps, int64_t fi, const std::vector<const Buf*>& ins,
               const std::vector<Buf*>& outs) {
  const Buf& xb = *ins[0];
  const Rows r = RowsOf(xb, fi);
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
    std::vector<double> gscale(static_cast<size_t>(nf));
    for (int64_t f = 0; f < nf; ++f) gscale[f] = sum_gy_xc[f] * rs[f];
    StoreRow(*outs[1], 0, nf, gscale.data());
    StoreRow(*outs[2], 0, nf, sum_gy.data());
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
