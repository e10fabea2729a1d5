// The compiler end to end in process: each option's effect on the program
// and the NEFF, executed results where numerics matter (lib/kernels), the
// manifest, buffer assignment and error messages.
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "lib/compiler/buffer_assignment.h"
#include "lib/compiler/diagnostics.h"
#include "lib/hlo/verifier.h"
#include "lib/kernels/executable.h"
#include "lib/neff/neff.h"
#include "lib/program/package.h"
#include "tests/compiler/test_util.h"

namespace neuron::compiler {
namespace {

using testing::CompileText;
using testing::CountInEntry;
using testing::CountOpcode;
using testing::kMlp;
using hlo::Opcode;

CompileOptions Options(std::vector<std::string> extra) {
  extra.insert(extra.begin(), {"compile", "x.hlo"});
  auto p = ParseCommandLine(extra);
  EXPECT_TRUE(p.ok()) << p.status();
  return p->options;
}

CompileResult MustCompile(std::string_view text, std::vector<std::string> flags, bool neff = true) {
  auto r = CompileText(text, Options(std::move(flags)), neff);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::move(*r) : CompileResult{};
}

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Runs the compiled program on inputs filled with a deterministic pattern.
std::vector<float> Execute(const hlo::Module& module) {
  auto exe = kernels::Executable::Build(module);
  EXPECT_TRUE(exe.ok()) << exe.status();
  if (!exe.ok()) return {};
  std::vector<kernels::Tensor> inputs;
  int salt = 0;
  for (const kernels::Tensor& spec : (*exe)->input_specs()) {
    kernels::Tensor t(spec.type(), spec.dims());
    float* f = t.as<float>();
    for (int64_t i = 0; i < t.element_count(); ++i) f[i] = std::sin(0.37f * static_cast<float>(i + 13 * salt)) * 1.7f;
    ++salt;
    inputs.push_back(std::move(t));
  }
  std::vector<kernels::Tensor> outputs;
  absl::Status s = (*exe)->Run(inputs, &outputs, kernels::ExecOptions{});
  EXPECT_TRUE(s.ok()) << s;
  if (!s.ok() || outputs.empty()) return {};
  const float* f = outputs[0].as<float>();
  return std::vector<float>(f, f + outputs[0].element_count());
}

TEST(CompilerTest, OptLevelsRunDifferentPipelines) {
  CompileResult o1 = MustCompile(kMlp, {"-O1"});
  CompileResult o2 = MustCompile(kMlp, {"-O2"});
  CompileResult o3 = MustCompile(kMlp, {"-O3"});
  EXPECT_FALSE(Contains(o1.pass_names, "elementwise-fusion"));
  EXPECT_FALSE(Contains(o1.pass_names, "cse"));
  EXPECT_TRUE(Contains(o2.pass_names, "elementwise-fusion"));
  EXPECT_TRUE(Contains(o2.pass_names, "cse"));
  EXPECT_TRUE(Contains(o3.pass_names, "aggressive-fusion"));
  EXPECT_GT(o3.pass_names.size(), o2.pass_names.size());
  EXPECT_EQ(CountInEntry(*o1.module, Opcode::kFusion), 0);
  EXPECT_GT(CountInEntry(*o2.module, Opcode::kFusion), 0);
  EXPECT_EQ(CountInEntry(*o2.module, Opcode::kTranspose), 0);  // folded into the dot
  EXPECT_EQ(o1.manifest.optlevel, 1);
  EXPECT_EQ(o3.manifest.optlevel, 3);
  // Same results whatever the level.
  std::vector<float> r1 = Execute(*o1.module), r2 = Execute(*o2.module), r3 = Execute(*o3.module);
  ASSERT_EQ(r1.size(), 32u);
  ASSERT_EQ(r2.size(), r1.size());
  ASSERT_EQ(r3.size(), r1.size());
  for (size_t i = 0; i < r1.size(); ++i) {
    EXPECT_NEAR(r1[i], r2[i], 1e-4f * (1 + std::fabs(r1[i])));
    EXPECT_NEAR(r1[i], r3[i], 1e-4f * (1 + std::fabs(r1[i])));
  }
}

TEST(CompilerTest, AutocastChangesTheExecutedOutputs) {
  CompileResult plain = MustCompile(kMlp, {});
  CompileResult bf16 = MustCompile(kMlp, {"--auto-cast", "matmult"});
  CompileResult fp8 = MustCompile(kMlp, {"--auto-cast", "matmult", "--auto-cast-type", "fp8_e4m3"});
  EXPECT_EQ(bf16.manifest.auto_cast, "matmult");
  EXPECT_GT(CountOpcode(*bf16.module, Opcode::kConvert), 0);
  std::vector<float> a = Execute(*plain.module), b = Execute(*bf16.module), c = Execute(*fp8.module);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_EQ(a.size(), c.size());
  double err_bf16 = 0, err_fp8 = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    err_bf16 = std::max(err_bf16, std::fabs(double(a[i]) - b[i]));
    err_fp8 = std::max(err_fp8, std::fabs(double(a[i]) - c[i]));
    scale = std::max(scale, std::fabs(double(a[i])));
  }
  EXPECT_GT(err_bf16, 0);                 // the cast is real: results moved
  EXPECT_LT(err_bf16, 0.05 * scale);      // by bf16 rounding, not garbage
  EXPECT_GT(err_fp8, err_bf16);           // fp8 loses more than bf16
}

TEST(CompilerTest, SaturateInfinityClampsInsteadOfOverflowing) {
  const char* text = R"(HloModule sat
ENTRY e {
  p = f32[4] parameter(0)
  big = f32[] constant(1000000)
  bb = f32[4] broadcast(big), dimensions={}
  x = f32[4] multiply(p, bb)
  h = f16[4] convert(x)
  ROOT back = f32[4] convert(h)
})";
  CompileResult normal = MustCompile(text, {"-O1"});
  CompileResult saturated = MustCompile(text, {"-O1", "--enable-saturate-infinity"});
  EXPECT_TRUE(saturated.manifest.saturate_infinity);
  std::vector<float> n = Execute(*normal.module), s = Execute(*saturated.module);
  ASSERT_EQ(n.size(), 4u);
  ASSERT_EQ(s.size(), 4u);
  // Input element 1 is sin(0.37)*1.7 ~ 0.61: times 1e6 overflows f16.
  EXPECT_TRUE(std::isinf(n[1]));
  EXPECT_EQ(s[1], 65504.0f);
}

TEST(CompilerTest, LncTwoShardsTheProgramAndTheHeaderSaysSo) {
  const char* text = R"(HloModule big
ENTRY e {
  a = f32[64,128] parameter(0)
  b = f32[128,32] parameter(1)
  d = f32[64,32] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[64,32] tanh(d)
})";
  CompileResult one = MustCompile(text, {"--target", "trn2", "-lnc", "1"});
  CompileResult two = MustCompile(text, {"--target", "trn2", "-lnc", "2"});
  EXPECT_TRUE(one.manifest.sharding.empty());
  ASSERT_FALSE(two.manifest.sharding.empty());
  EXPECT_EQ(two.manifest.sharding[0].instruction, "d");
  EXPECT_EQ(two.manifest.sharding[0].dimension, 0);
  EXPECT_EQ(two.manifest.sharding[0].parts, 2);
  auto header = neff::ReadHeaderOnly(two.neff);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->lnc_size, 2u);
  EXPECT_EQ(header->num_tpb, 2u);
  auto pkg = neff::Read(two.neff, neff::ReadOptions{});
  ASSERT_TRUE(pkg.ok());
  auto prog = program::Deserialize(*pkg);
  ASSERT_TRUE(prog.ok()) << prog.status();
  EXPECT_EQ(prog->manifest.lnc, 2);
  EXPECT_EQ(prog->manifest.sharding.size(), two.manifest.sharding.size());
  // The runtime refuses it on a device of another LNC.
  neff::ReadOptions lnc1;
  lnc1.device_lnc_size = 1;
  EXPECT_FALSE(neff::Read(two.neff, lnc1).ok());
}

TEST(CompilerTest, ModelTypesTweakThePipeline) {
  CompileResult generic = MustCompile(kMlp, {});
  CompileResult transformer = MustCompile(kMlp, {"--model-type", "transformer"});
  CompileResult unet = MustCompile(kMlp, {"--model-type", "unet-inference"});
  EXPECT_TRUE(Contains(transformer.pass_names, "attention-fusion"));
  EXPECT_FALSE(Contains(generic.pass_names, "attention-fusion"));
  EXPECT_TRUE(Contains(unet.pass_names, "transpose-folding-conv"));
  EXPECT_FALSE(Contains(generic.pass_names, "transpose-folding-conv"));
  EXPECT_EQ(transformer.manifest.model_type, "transformer");
}

TEST(CompilerTest, RecordedOptionsAndFastLoading) {
  CompileResult r = MustCompile(kMlp, {"--target", "inf2", "--distribution-strategy", "llm-training",
                                       "--enable-fast-context-switch", "--enable-fast-loading-neuron-binaries"});
  auto header = neff::ReadHeaderOnly(r.neff);
  ASSERT_TRUE(header.ok());
  EXPECT_TRUE(header->feature_bits & neff::kFeatureFastLoading);
  EXPECT_FALSE(header->feature_bits & neff::kFeatureZstdPayload);
  auto pkg = neff::Read(r.neff, neff::ReadOptions{});
  ASSERT_TRUE(pkg.ok());
  auto m = program::ReadManifest(*pkg);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->target, "inf2");
  EXPECT_EQ(m->distribution_strategy, "llm-training");
  EXPECT_TRUE(m->fast_context_switch);
  EXPECT_TRUE(m->fast_loading);
  EXPECT_TRUE(Contains(m->options, "--target=inf2"));
  CompileResult compressed = MustCompile(kMlp, {});
  auto h2 = neff::ReadHeaderOnly(compressed.neff);
  EXPECT_TRUE(h2->feature_bits & neff::kFeatureZstdPayload);
}

TEST(CompilerTest, ManifestDescribesTensorsAndMemory) {
  CompileResult r = MustCompile(kMlp, {});
  ASSERT_EQ(r.manifest.inputs.size(), 4u);
  EXPECT_EQ(r.manifest.inputs[0].name, "x");
  EXPECT_EQ(r.manifest.inputs[0].dims, (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(r.manifest.inputs[0].size, 8 * 16 * 4);
  ASSERT_EQ(r.manifest.outputs.size(), 1u);
  EXPECT_EQ(r.manifest.outputs[0].name, "y");  // the root, as written
  EXPECT_EQ(r.manifest.memory.inputs, (8 * 16 + 32 * 16 + 32 + 32 * 4) * 4);
  EXPECT_EQ(r.manifest.memory.outputs, 8 * 4 * 4);
  EXPECT_GT(r.manifest.memory.scratch_peak, 0);
  EXPECT_EQ(r.manifest.memory.total, r.manifest.memory.inputs + r.manifest.memory.outputs +
                                         r.manifest.memory.constants + r.manifest.memory.scratch_peak);
  EXPECT_TRUE(hlo::Verify(*r.module).ok());
}

// Output names are those of the HLO as written, whatever the passes made of
// the root, and the same at every optimization level.
TEST(CompilerTest, OutputNamesComeFromTheHloAtEveryLevel) {
  constexpr char kFused[] = R"(HloModule fused
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  m = f32[4] multiply(x, y)
  ROOT r = f32[4] add(m, x)
}
)";
  constexpr char kTuple[] = R"(HloModule pair
ENTRY main {
  x = f32[4] parameter(0)
  n = f32[4] negate(x)
  e = f32[4] exponential(n)
  ROOT t = (f32[4], f32[4]) tuple(e, n)
}
)";
  bool root_renamed = false;
  for (const char* level : {"-O1", "-O2", "-O3"}) {
    SCOPED_TRACE(level);
    CompileResult single = MustCompile(kFused, {level});
    ASSERT_EQ(single.manifest.outputs.size(), 1u);
    EXPECT_EQ(single.manifest.outputs[0].name, "r");
    root_renamed = root_renamed || single.module->entry()->root()->name() != "r";
    CompileResult pair = MustCompile(kTuple, {level});
    ASSERT_EQ(pair.manifest.outputs.size(), 2u);
    EXPECT_EQ(pair.manifest.outputs[0].name, "output0");
    EXPECT_EQ(pair.manifest.outputs[1].name, "output1");
    // The NEFF's own manifest says the same.
    auto read = neff::Read(single.neff, {});
    ASSERT_TRUE(read.ok()) << read.status();
    auto program = program::Deserialize(*read);
    ASSERT_TRUE(program.ok()) << program.status();
    EXPECT_EQ(program->manifest.outputs[0].name, "r");
  }
  // Fusion did replace the root somewhere: the names above are not just
  // the optimized program's.
  EXPECT_TRUE(root_renamed);
}

TEST(BufferAssignmentTest, ReusesMemoryOfDeadValues) {
  // A chain: each value dies when the next is made, so two buffers suffice.
  auto m = testing::ParseOrDie(R"(HloModule chain
ENTRY e {
  p = f32[256] parameter(0)
  a = f32[256] exponential(p)
  b = f32[256] negate(a)
  c = f32[256] tanh(b)
  d = f32[256] sqrt(c)
  ROOT r = f32[256] abs(d)
})");
  BufferAssignment ba = AssignBuffers(*m);
  ASSERT_EQ(ba.slots.size(), 4u);  // r is the output
  EXPECT_EQ(ba.memory.scratch_peak, 2 * 1024);
  EXPECT_EQ(ba.slots[0].offset, ba.slots[2].offset);  // a's memory reused by c
  for (size_t i = 0; i + 1 < ba.slots.size(); ++i) {
    EXPECT_NE(ba.slots[i].offset, ba.slots[i + 1].offset);  // live at once: apart
  }
}

TEST(BufferAssignmentTest, CountsWhatCalledComputationsHoldWhileTheyRun) {
  // The callee makes two 4 KiB temporaries live at once; its result is the
  // call's own buffer. The caller holds x (1 KiB) across the call.
  auto m = testing::ParseOrDie(R"(HloModule nested
callee {
  q = f32[256] parameter(0)
  t = f32[1024] broadcast(q), dimensions={0}
  u = f32[1024] exponential(t)
  v = f32[1024] add(t, u)
  ROOT w = f32[256] slice(v), slice={[0:256]}
}
ENTRY e {
  p = f32[256] parameter(0)
  x = f32[256] negate(p)
  y = f32[256] call(x), to_apply=callee
  ROOT r = f32[256] add(x, y)
})");
  BufferAssignment ba = AssignBuffers(*m);
  // x and y (1 KiB each) plus the callee's t, u and v: t and u are live
  // together when v is made (12 KiB).
  EXPECT_EQ(ba.memory.scratch_peak, 2 * 1024 + 3 * 4096);
}

TEST(CompilerTest, ErrorsNameTheInstructionAndSource) {
  const char* text = R"(HloModule bad
ENTRY main {
  p = f32[8] parameter(0)
  ROOT f = f32[8] custom-call(p), custom_call_target="__cudnn$fmhaSoftmax", metadata={op_name="jit(f)/attn" source_file="model.py" source_line=42}
})";
  auto r = CompileText(text, Options({}));
  ASSERT_FALSE(r.ok());
  std::string msg(r.status().message());
  EXPECT_EQ(ErrorCodeOf(r.status()), "NCC-E0202");
  EXPECT_NE(msg.find("'__cudnn$fmhaSoftmax'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("%f in computation 'main'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("model.py:42"), std::string::npos) << msg;
  EXPECT_NE(msg.find("op_name \"jit(f)/attn\""), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos);  // one line
}

// Complex numbers compile where the executor runs them, and are refused by
// name where its kernels compute in real arithmetic only.
TEST(CompilerTest, ComplexTypesFollowTheExecutor) {
  auto add = CompileText(R"(HloModule c
ENTRY e {
  p = c64[4] parameter(0)
  ROOT a = c64[4] add(p, p)
})",
                         Options({}));
  EXPECT_TRUE(add.ok()) << add.status();
  auto window = CompileText(R"(HloModule w
add {
  x = c64[] parameter(0)
  y = c64[] parameter(1)
  ROOT s = c64[] add(x, y)
}
ENTRY e {
  p = c64[4] parameter(0)
  z = c64[] constant((0, 0))
  ROOT r = c64[2] reduce-window(p, z), window={size=2 stride=2}, to_apply=add
})",
                            Options({}));
  ASSERT_FALSE(window.ok());
  EXPECT_EQ(ErrorCodeOf(window.status()), "NCC-E0204") << window.status();
  EXPECT_NE(window.status().message().find("'reduce-window'"), std::string_view::npos) << window.status();
}

// What the executor's kernel planning would refuse at load is refused at
// compile time by the same rule (kernels::KernelRefusal), each with its code:
// a NEFF that compiles loads.
TEST(CompilerTest, KernelPlanningRefusalsComeAtCompileTime) {
  const std::pair<const char*, const char*> cases[] = {
      {"c64[2,2] dot(a, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}", "mixing complex and real"},
      {"c64[2,2] convolution(a, r), dim_labels=bf_oi->bf", "mixing complex and other"},
      {"f32[2,2] triangular-solve(r, w), left_side=true, lower=true", "do not match its options"},
      {"f32[3,2] cholesky(w), lower=true", "non-square"},
      {"f32[2,2] triangular-solve(a, r), left_side=true, lower=true", "mixing complex and real"},
      {"c64[2,2] fft(a), fft_type=XFFT, fft_length={2}", "fft type or length"},
  };
  for (const auto& [root, needle] : cases) {
    std::string text = absl::StrCat("HloModule k\nENTRY e {\n  a = c64[2,2] parameter(0)\n",
                                    "  r = f32[2,2] parameter(1)\n  w = f32[3,2] parameter(2)\n  ROOT x = ", root,
                                    "\n}\n");
    auto r = CompileText(text, Options({}));
    ASSERT_FALSE(r.ok()) << root;
    EXPECT_EQ(ErrorCodeOf(r.status()), "NCC-E0206") << r.status();
    EXPECT_NE(r.status().message().find(needle), std::string_view::npos) << r.status();
  }
}

TEST(CompilerTest, UnsupportedOperatorsAndElidedConstants) {
  auto fft = CompileText(R"(HloModule f
ENTRY e {
  p = f32[8] parameter(0)
  ROOT s = f32[8] send-thing(p)
})",
                         Options({}));
  ASSERT_FALSE(fft.ok());
  EXPECT_EQ(ErrorCodeOf(fft.status()), "NCC-E0201");
  EXPECT_NE(fft.status().message().find("'send-thing'"), std::string_view::npos) << fft.status();
  const char* elided = R"(HloModule e
ENTRY e {
  p = f32[100] parameter(0)
  c = f32[100] constant({...})
  ROOT a = f32[100] add(p, c)
})";
  auto refused = CompileText(elided, Options({}));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(ErrorCodeOf(refused.status()), "NCC-E0004");
  EXPECT_NE(refused.status().message().find("--fill-elided-constants"), std::string_view::npos);
  auto filled = CompileText(elided, Options({"--fill-elided-constants", "zeros"}));
  EXPECT_TRUE(filled.ok()) << filled.status();
}

// A fill no address space could hold (the element count times 4 wraps
// 64 bits) or no host could give is refused before a byte is committed;
// it used to wrap to an empty array that the random fill then wrote past.
TEST(CompilerTest, ElidedConstantsTooLargeToFillAreRefused) {
  for (const char* dims : {"4611686018427387904", "281474976710656"}) {
    const std::string text = absl::StrFormat(R"(HloModule e
ENTRY e {
  c = f32[%s] constant({...})
  ROOT n = f32[%s] negate(c)
})", dims, dims);
    for (const char* fill : {"zeros", "random"}) {
      auto refused = CompileText(text, Options({"--fill-elided-constants", fill}));
      ASSERT_FALSE(refused.ok()) << dims << " " << fill;
      EXPECT_EQ(ErrorCodeOf(refused.status()), "NCC-E0005") << refused.status();
      EXPECT_NE(refused.status().message().find("%c"), std::string_view::npos) << refused.status();
    }
  }
}

TEST(CompilerTest, MultiReplicaModulesRecordTheirCounts) {
  const char* text = R"(HloModule ar, replica_count=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[16] parameter(0)
  ROOT r = f32[16] all-reduce(p), replica_groups={{0,1,2,3}}, to_apply=add
})";
  CompileResult r = MustCompile(text, {});
  EXPECT_EQ(r.manifest.replica_count, 4);
  EXPECT_TRUE(r.manifest.collectives);
  auto header = neff::ReadHeaderOnly(r.neff);
  EXPECT_TRUE(header->feature_bits & neff::kFeatureCollectives);
}

}  // namespace
}  // namespace neuron::compiler
