#include "lib/kernels/batch_norm.h"

#include <cmath>

#include "lib/kernels/element_convert.h"

namespace neuron::kernels {
namespace {

std::vector<double> Load(const Buf& b) {
  std::vector<double> v(b.count);
  for (int64_t i = 0; i < b.count; ++i) v[i] = LoadDouble(b.type, b.data, i);
  return v;
}

void Store(Buf& b, const std::vector<double>& v) {
  for (int64_t i = 0; i < b.count; ++i) StoreDouble(b.type, b.data, i, v[i]);
}

}  // namespace

void BatchNorm(hlo::Opcode op, double eps, int64_t fi, const std::vector<const Buf*>& ins,
               const std::vector<Buf*>& outs) {
  const Buf& xb = *ins[0];
  const int64_t nf = xb.dims[fi];
  std::vector<int64_t> strides = RowMajorStrides(xb.dims);
  auto feature = [&](int64_t i) { return (i / strides[fi]) % nf; };
  const double per = nf ? static_cast<double>(xb.count) / nf : 0;
  std::vector<double> x = Load(xb), scale = Load(*ins[1]);
  std::vector<double> mean(nf, 0), var(nf, 0);
  if (op == hlo::Opcode::kBatchNormInference) {
    mean = Load(*ins[3]);
    var = Load(*ins[4]);
  } else if (op == hlo::Opcode::kBatchNormGrad) {
    mean = Load(*ins[2]);
    var = Load(*ins[3]);
  } else {
    for (int64_t i = 0; i < xb.count; ++i) mean[feature(i)] += x[i];
    for (auto& m : mean) m /= per;
    for (int64_t i = 0; i < xb.count; ++i) { double d = x[i] - mean[feature(i)]; var[feature(i)] += d * d; }
    for (auto& v : var) v /= per;
  }
  if (op == hlo::Opcode::kBatchNormGrad) {
    std::vector<double> gy = Load(*ins[4]);
    std::vector<double> sum_gy(nf, 0), sum_gy_xc(nf, 0);
    for (int64_t i = 0; i < xb.count; ++i) {
      int64_t f = feature(i);
      sum_gy[f] += gy[i];
      sum_gy_xc[f] += gy[i] * (x[i] - mean[f]);
    }
    std::vector<double> gx(xb.count), gscale(nf), goffset(nf);
    for (int64_t f = 0; f < nf; ++f) {
      double rs = 1.0 / std::sqrt(var[f] + eps);
      gscale[f] = sum_gy_xc[f] * rs;
      goffset[f] = sum_gy[f];
    }
    for (int64_t i = 0; i < xb.count; ++i) {
      int64_t f = feature(i);
      double rs = 1.0 / std::sqrt(var[f] + eps);
      double xc = x[i] - mean[f];
      gx[i] = scale[f] * rs * (gy[i] - sum_gy[f] / per - xc * sum_gy_xc[f] / per / (var[f] + eps));
    }
    Store(*outs[0], gx);
    Store(*outs[1], gscale);
    Store(*outs[2], goffset);
    return;
  }
  std::vector<double> offset = Load(*ins[2]);
  std::vector<double> y(xb.count);
  for (int64_t i = 0; i < xb.count; ++i) {
    int64_t f = feature(i);
    y[i] = (x[i] - mean[f]) / std::sqrt(var[f] + eps) * scale[f] + offset[f];
  }
  Store(*outs[0], y);
  if (op == hlo::Opcode::kBatchNormTraining) {
    Store(*outs[1], mean);
    Store(*outs[2], var);
  }
}

}  // namespace neuron::kernels
