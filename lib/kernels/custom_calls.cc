#include "lib/kernels/custom_calls.h"

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "lib/kernels/dot_conv.h"
#include "lib/kernels/element_convert.h"

namespace neuron::kernels {
namespace {

std::vector<int64_t> JsonDims(const nlohmann::json& j, const char* key) {
  std::vector<int64_t> r;
  if (!j.contains(key)) return r;
  for (const auto& v : j[key]) r.push_back(v.is_string() ? std::stoll(v.get<std::string>()) : v.get<int64_t>());
  return r;
}

class GemmCall : public CustomCallKernel {
 public:
  std::unique_ptr<DotKernel> dot;
  double alpha = 1, beta = 0;
  void Run(const std::vector<const Buf*>& ins, const std::vector<Buf*>& outs) override {
    Buf& out = *outs[0];
    dot->Run(*ins[0], *ins[1], out);
    if (alpha != 1 || (beta != 0 && ins.size() > 2)) {
      for (int64_t i = 0; i < out.count; ++i) {
        double v = alpha * LoadDouble(out.type, out.data, i);
        if (beta != 0 && ins.size() > 2) v += beta * LoadDouble(ins[2]->type, ins[2]->data, i);
        StoreDouble(out.type, out.data, i, v);
      }
    }
  }
};

class ConvCall : public CustomCallKernel {
 public:
  std::unique_ptr<DotKernel> conv;
  bool bias = false, relu = false;
  int64_t feature_dim = 0;
  void Run(const std::vector<const Buf*>& ins, const std::vector<Buf*>& outs) override {
    Buf& out = *outs[0];
    conv->Run(*ins[0], *ins[1], out);
    if (!bias && !relu) return;
    std::vector<int64_t> strides = RowMajorStrides(out.dims);
    for (int64_t i = 0; i < out.count; ++i) {
      double v = LoadDouble(out.type, out.data, i);
      if (bias && ins.size() > 2) v += LoadDouble(ins[2]->type, ins[2]->data, (i / strides[feature_dim]) % out.dims[feature_dim]);
      if (relu && v < 0) v = 0;
      StoreDouble(out.type, out.data, i, v);
    }
  }
};

// xla_builder.math.* elementwise helpers that XLA's builder leaves as
// custom-calls.
class UnaryMathCall : public CustomCallKernel {
 public:
  double (*fn)(double) = nullptr;
  void Run(const std::vector<const Buf*>& ins, const std::vector<Buf*>& outs) override {
    for (int64_t i = 0; i < outs[0]->count; ++i)
      StoreDouble(outs[0]->type, outs[0]->data, i, fn(LoadDouble(ins[0]->type, ins[0]->data, i)));
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<CustomCallKernel>> PlanCustomCall(const hlo::Instruction& instr) {
  const std::string& t = instr.attrs().custom_call_target;
  const hlo::Shape& out = instr.shape().IsTuple() ? instr.shape().tuple[0] : instr.shape();
  if (t == "__cublas$gemm" || t == "__cublas$lt$matmul" || t == "__onednn$matmul") {
    if (instr.operand_count() < 2) return absl::InvalidArgumentError(absl::StrCat("custom-call target '", t, "' needs two operands"));
    const hlo::Shape& a = instr.operand(0)->shape();
    const hlo::Shape& b = instr.operand(1)->shape();
    hlo::DotDims dims;
    auto k = std::make_unique<GemmCall>();
    nlohmann::json cfg = nlohmann::json::parse(instr.attrs().backend_config, nullptr, false);
    const nlohmann::json* g = nullptr;
    if (cfg.is_object() && cfg.contains("gemm_backend_config")) g = &cfg["gemm_backend_config"];
    if (g && g->contains("dot_dimension_numbers")) {
      const auto& d = (*g)["dot_dimension_numbers"];
      dims.lhs_contracting = JsonDims(d, "lhs_contracting_dimensions");
      dims.rhs_contracting = JsonDims(d, "rhs_contracting_dimensions");
      dims.lhs_batch = JsonDims(d, "lhs_batch_dimensions");
      dims.rhs_batch = JsonDims(d, "rhs_batch_dimensions");
      if (g->contains("alpha_real")) k->alpha = (*g)["alpha_real"].get<double>();
      if (g->contains("beta")) k->beta = (*g)["beta"].get<double>();
    } else {
      // Plain (batched) matmul: contract lhs's last dim with rhs's second-to-last.
      if (a.rank() < 2 || b.rank() < 2 || a.rank() != b.rank())
        return absl::InvalidArgumentError(absl::StrCat("custom-call target '", t, "' without dot dimensions"));
      for (int64_t i = 0; i + 2 < a.rank(); ++i) { dims.lhs_batch.push_back(i); dims.rhs_batch.push_back(i); }
      dims.lhs_contracting = {a.rank() - 1};
      dims.rhs_contracting = {b.rank() - 2};
    }
    auto dot = PlanDot(a, b, dims, out);
    if (!dot.ok()) return dot.status();
    k->dot = std::move(*dot);
    return std::unique_ptr<CustomCallKernel>(std::move(k));
  }
  if (t == "__cudnn$convForward" || t == "__cudnn$convBiasActivationForward") {
    if (!instr.attrs().conv || instr.operand_count() < 2)
      return absl::InvalidArgumentError(absl::StrCat("custom-call target '", t, "' without convolution dims"));
    // A convolution whose result is the first tuple element.
    auto plan = PlanConvolution(instr.operand(0)->shape(), instr.operand(1)->shape(), out, instr.attrs());
    if (!plan.ok()) return plan.status();
    auto k = std::make_unique<ConvCall>();
    k->conv = std::move(*plan);
    if (t == "__cudnn$convBiasActivationForward") {
      k->bias = instr.operand_count() > 2;
      k->feature_dim = instr.attrs().conv->output_feature;
      k->relu = instr.attrs().backend_config.find("RELU") != std::string::npos ||
                instr.attrs().backend_config.find("kRelu") != std::string::npos;
    }
    return std::unique_ptr<CustomCallKernel>(std::move(k));
  }
  static const std::pair<const char*, double (*)(double)> kMath[] = {
      {"xla_builder.math.Acos", [](double x) { return std::acos(x); }},
      {"xla_builder.math.Asin", [](double x) { return std::asin(x); }},
      {"xla_builder.math.Atan", [](double x) { return std::atan(x); }},
      {"xla_builder.math.Acosh", [](double x) { return std::acosh(x); }},
      {"xla_builder.math.Asinh", [](double x) { return std::asinh(x); }},
      {"xla_builder.math.Atanh", [](double x) { return std::atanh(x); }},
      {"xla_builder.math.Cosh", [](double x) { return std::cosh(x); }},
      {"xla_builder.math.Sinh", [](double x) { return std::sinh(x); }},
      {"xla_builder.math.Lgamma", [](double x) { return std::lgamma(x); }},
      {"xla_builder.math.Erfinv", nullptr}};
  for (const auto& [name, fn] : kMath) {
    if (t == name && fn && instr.operand_count() == 1 && instr.shape().IsArray() &&
        hlo::IsFloatingPoint(instr.shape().type)) {
      auto k = std::make_unique<UnaryMathCall>();
      k->fn = fn;
      return std::unique_ptr<CustomCallKernel>(std::move(k));
    }
  }
  return absl::UnimplementedError(absl::StrCat("custom-call target '", t, "'"));
}

}  // namespace neuron::kernels
