// Helpers shared by the compiler tests: parse HLO text, count opcodes,
// compile in process with options, compile and run.
#ifndef NEURON_TESTS_COMPILER_TEST_UTIL_H_
#define NEURON_TESTS_COMPILER_TEST_UTIL_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "lib/compiler/compiler.h"
#include "lib/hlo/module.h"
#include "lib/hlo/text_parser.h"
#include "lib/kernels/executable.h"
#include "tests/kernels/kernel_test_util.h"

namespace neuron::compiler::testing {

inline std::unique_ptr<hlo::Module> ParseOrDie(std::string_view text) {
  auto m = hlo::ParseText(text, "test");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

// Instructions with `op` over every computation (fused bodies included).
inline int CountOpcode(const hlo::Module& module, hlo::Opcode op) {
  int n = 0;
  for (const hlo::Computation* c : module.computations()) {
    for (const hlo::Instruction* inst : c->instructions()) n += inst->opcode() == op;
  }
  return n;
}

// Instructions with `op` in the entry computation only.
inline int CountInEntry(const hlo::Module& module, hlo::Opcode op) {
  int n = 0;
  for (const hlo::Instruction* inst : module.entry()->instructions()) n += inst->opcode() == op;
  return n;
}

inline absl::StatusOr<CompileResult> CompileText(std::string_view text, const CompileOptions& options,
                                                 bool emit_neff = true) {
  CompileLog log;
  return CompileBytes(text, "test.hlo", options, log, emit_neff);
}

// Compiled at -O2 and run once on the executor; the outputs.
inline absl::StatusOr<std::vector<kernels::Tensor>> CompileAndRun(std::string_view text,
                                                                  const std::vector<kernels::Tensor>& inputs,
                                                                  const kernels::ExecOptions& exec = {},
                                                                  const CompileOptions& options = {}) {
  absl::StatusOr<CompileResult> r = CompileText(text, options, /*emit_neff=*/false);
  if (!r.ok()) return r.status();
  return kernels::testing::RunModule(*r->module, inputs, exec);
}

// A small MLP: dot + bias + relu, twice, with a transposed weight.
inline constexpr char kMlp[] = R"(HloModule mlp

ENTRY main {
  x = f32[8,16]{1,0} parameter(0)
  w1 = f32[32,16]{1,0} parameter(1)
  b1 = f32[32]{0} parameter(2)
  w2 = f32[32,4]{1,0} parameter(3)
  w1t = f32[16,32]{1,0} transpose(w1), dimensions={1,0}
  h = f32[8,32]{1,0} dot(x, w1t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,32]{1,0} broadcast(b1), dimensions={1}
  hb = f32[8,32]{1,0} add(h, bb)
  zero = f32[] constant(0)
  zb = f32[8,32]{1,0} broadcast(zero), dimensions={}
  r = f32[8,32]{1,0} maximum(hb, zb)
  one = f32[] constant(1)
  ob = f32[8,32]{1,0} broadcast(one), dimensions={}
  r1 = f32[8,32]{1,0} multiply(r, ob)
  ROOT y = f32[8,4]{1,0} dot(r1, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

}  // namespace neuron::compiler::testing

#endif  // NEURON_TESTS_COMPILER_TEST_UTIL_H_
