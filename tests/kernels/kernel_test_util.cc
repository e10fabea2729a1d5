#include "tests/kernels/kernel_test_util.h"

#include "lib/hlo/load.h"
#include "lib/hlo/verifier.h"
#include "lib/kernels/element_convert.h"

namespace neuron::kernels::testing {

namespace {

absl::StatusOr<std::unique_ptr<hlo::Module>> LoadVerified(const std::string& text) {
  auto module = hlo::LoadModule(text, "test.hlo");
  if (!module.ok()) return module.status();
  if (absl::Status v = hlo::Verify(**module); !v.ok()) return v;
  return module;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Executable>> BuildText(const std::string& text) {
  auto module = LoadVerified(text);
  if (!module.ok()) return module.status();
  return Executable::Build(**module);
}

Tensor MakeTensor(hlo::ElementType type, std::vector<int64_t> dims,
                  const std::vector<double>& values) {
  Tensor t(type, std::move(dims));
  for (int64_t i = 0; i < t.element_count() && i < static_cast<int64_t>(values.size()); ++i) {
    if (DomainOf(type) == Domain::kI64) StoreInt(type, t.data(), i, static_cast<int64_t>(values[i]));
    else StoreDouble(type, t.data(), i, values[i]);
  }
  return t;
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(t.element_count());
  for (int64_t i = 0; i < t.element_count(); ++i) v[i] = LoadDouble(t.type(), t.data(), i);
  return v;
}

absl::StatusOr<std::vector<Tensor>> RunModule(const hlo::Module& module,
                                              const std::vector<Tensor>& inputs,
                                              const ExecOptions& options, RunStats* stats) {
  auto exe = Executable::Build(module);
  if (!exe.ok()) return exe.status();
  std::vector<Tensor> outs;
  if (absl::Status s = (*exe)->Run(inputs, &outs, options, stats); !s.ok()) return s;
  return outs;
}

absl::StatusOr<std::vector<Tensor>> RunText(const std::string& text,
                                            const std::vector<Tensor>& inputs,
                                            const ExecOptions& options, RunStats* stats) {
  auto module = LoadVerified(text);
  if (!module.ok()) return module.status();
  return RunModule(**module, inputs, options, stats);
}

}  // namespace neuron::kernels::testing
