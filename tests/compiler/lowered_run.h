// Compiles HLO text whose custom-calls the compiler lowers, checks that none
// is left and that the lowered module verifies, and runs it on the
// executor: the harness of the custom-call lowering tests.
#ifndef NEURON_TESTS_COMPILER_LOWERED_RUN_H_
#define NEURON_TESTS_COMPILER_LOWERED_RUN_H_

#include <cstring>
#include <string_view>
#include <vector>

#include "lib/hlo/verifier.h"
#include "tests/compiler/test_util.h"

namespace neuron::compiler::testing {

inline absl::StatusOr<std::vector<kernels::Tensor>> CompileLoweredAndRun(std::string_view text,
                                                                  const std::vector<kernels::Tensor>& inputs) {
  CompileOptions options;
  options.optlevel = 2;
  absl::StatusOr<CompileResult> r = CompileText(text, options, /*emit_neff=*/false);
  if (!r.ok()) return r.status();
  if (absl::Status v = hlo::Verify(*r->module); !v.ok()) return v;  // the lowered module is well formed
  for (const hlo::Computation* c : r->module->computations()) {
    for (const hlo::Instruction* inst : c->instructions()) {
      if (inst->opcode() == hlo::Opcode::kCustomCall) return absl::InternalError("a custom-call is left");
    }
  }
  return kernels::testing::RunModule(*r->module, inputs);
}

inline kernels::Tensor F32(std::vector<int64_t> dims, const std::vector<float>& v) {
  kernels::Tensor t(hlo::ElementType::kF32, std::move(dims));
  std::memcpy(t.data(), v.data(), v.size() * sizeof(float));
  return t;
}

template <typename T>
std::vector<T> Values(const kernels::Tensor& t, size_t n) {
  std::vector<T> out(n);
  std::memcpy(out.data(), t.data(), n * sizeof(T));
  return out;
}

}  // namespace neuron::compiler::testing

#endif  // NEURON_TESTS_COMPILER_LOWERED_RUN_H_
