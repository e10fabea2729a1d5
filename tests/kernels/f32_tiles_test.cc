// The f32 tile runners (AVX-512 where the CPU has it, and AVX2) against
// the general interpreter: the same programs
// over the same awkward values (NaN, infinities, signed zeros, subnormals,
// huge magnitudes) and lengths around the tile and vector sizes give the
// same results, bit for bit where the math is exact.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "lib/hlo/load.h"
#include "lib/kernels/elementwise_kernel.h"
#include "lib/kernels/expr_program.h"
#include "lib/kernels/f32_tiles.h"

namespace neuron::kernels {
namespace {

using ET = hlo::ElementType;

// Lengths around the 8- and 16-lane vectors, the 32- and 128-lane blocks,
// the 256-lane tile and the two-thread split.
const int64_t kLengths[] = {1, 7, 8, 9, 15, 16, 17, 31, 33, 127, 129, 255, 256, 257, 1000, 70001};

std::vector<float> Awkward(int64_t n, uint32_t seed) {
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::denorm_min(), -1e-40f, 3.4e38f,
                            -3.4e38f, 88.5f, -104.0f, 8.99f, -9.5f, 0.3f};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> wide(-12.0f, 12.0f);
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = (rng() % 5 == 0) ? specials[rng() % 16] : wide(rng);
  return v;
}

struct Result {
  std::vector<std::vector<float>> outputs;
  std::vector<int8_t> nonfinite;
};

// Compiles the entry computation of `text` and runs it over `inputs` (one
// vector per parameter; a 1-element vector for a scalar parameter), each
// stored in its parameter's type; outputs come back widened to f32 (exact
// for the bf16/f16 outputs the runner writes).
// The runner `fast` runs on: the one the test is parameterized with.
ElementwiseKernel::Runner g_tiles = ElementwiseKernel::Runner::kAvx2Tiles;

Result RunProgram(const std::string& text, const std::vector<std::vector<float>>& inputs,
           bool fast, int64_t n, bool* used_fast = nullptr) {
  auto module = hlo::LoadModule(text, "f32_tiles_test");
  EXPECT_TRUE(module.ok()) << module.status();
  auto program = ExprProgram::Compile(*(*module)->entry(), /*lanes_mode=*/false);
  EXPECT_TRUE(program.ok()) << program.status();
  ElementwiseKernel kernel(std::move(*program), fast ? g_tiles : ElementwiseKernel::Runner::kInterpreter);
  if (used_fast != nullptr) *used_fast = kernel.uses_f32_tiles();
  const auto& parameters = (*module)->entry()->parameters();
  std::vector<std::vector<uint8_t>> in_bytes;
  std::vector<Buf> in_bufs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ET type = parameters[i]->shape().type;
    const int64_t count = static_cast<int64_t>(inputs[i].size());
    in_bytes.emplace_back(count * hlo::StorageBytes(type));
    StoreFromDomain(type, inputs[i].data(), count, in_bytes.back().data());
    Buf b = Buf::Of(type, {count});
    b.data = in_bytes.back().data();
    in_bufs.push_back(b);
  }
  const auto& out_types = kernel.program().output_types();
  std::vector<std::vector<uint8_t>> out_bytes;
  std::vector<Buf> out_bufs;
  for (ET type : out_types) {
    out_bytes.emplace_back(n * hlo::StorageBytes(type), 0xa5);
    Buf b = Buf::Of(type, {n});
    b.data = out_bytes.back().data();
    out_bufs.push_back(b);
  }
  std::vector<const Buf*> params;
  for (const Buf& b : in_bufs) params.push_back(&b);
  std::vector<Buf*> outs;
  for (Buf& b : out_bufs) outs.push_back(&b);
  kernel.Run(params, outs, ExprRunContext{}, /*threads=*/2);
  Result r;
  for (size_t j = 0; j < out_bufs.size(); ++j) {
    r.outputs.emplace_back(n);
    LoadToDomain(out_types[j], out_bytes[j].data(), n, r.outputs.back().data());
    r.nonfinite.push_back(out_bufs[j].nonfinite);
  }
  return r;
}

std::string Unary(const std::string& op) {
  return "HloModule u\nENTRY e {\n  x = f32[N] parameter(0)\n  ROOT r = f32[N] " + op +
         "(x)\n}\n";
}
std::string Binary(const std::string& op) {
  return "HloModule b\nENTRY e {\n  x = f32[N] parameter(0)\n  y = f32[N] parameter(1)\n"
         "  ROOT r = f32[N] " + op + "(x, y)\n}\n";
}
std::string WithLength(const std::string& text, int64_t n) {
  return absl::StrReplaceAll(text, {{"[N]", "[" + std::to_string(n) + "]"}});
}

// Same bits, except that any NaN matches any NaN.
void ExpectSame(const std::vector<float>& got, const std::vector<float>& want,
                const std::vector<float>& x, const std::string& what, double rel_tol) {
  ASSERT_EQ(got.size(), want.size());
  int shown = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const float g = got[i], w = want[i];
    bool ok;
    if (std::isnan(w) || std::isnan(g)) ok = std::isnan(w) && std::isnan(g);
    else if (rel_tol == 0) ok = std::bit_cast<uint32_t>(g) == std::bit_cast<uint32_t>(w);
    else ok = g == w || std::fabs(g - w) <= rel_tol * std::fabs(w) + 1e-37;
    if (!ok && shown++ < 5) {
      ADD_FAILURE() << what << " lane " << i << " of " << got.size() << ": x=" << x[i]
                    << " fast " << g << " interpreter " << w;
    }
  }
}

// lib/kernels asks cpuid itself (so no tool links libgcc's start-up CPU
// probe); the test binary may, and both must give the same answer.
TEST(F32TilesAvailable, AgreesWithTheCompilersCpuProbe) {
  const bool gcc = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                   __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
  EXPECT_EQ(F32TilesAvx512Available(), gcc);
  EXPECT_EQ(BestF32TilesIsa(), gcc ? F32TilesIsa::kAvx512 : F32TilesIsa::kAvx2);
}

// Each test runs once per runner.
class F32TilesTest : public ::testing::TestWithParam<ElementwiseKernel::Runner> {
 protected:
  void SetUp() override {
    if (GetParam() == ElementwiseKernel::Runner::kAvx512Tiles && !F32TilesAvx512Available())
      GTEST_SKIP() << "NOTICE: this CPU has no AVX-512; its runner is not used here";
    g_tiles = GetParam();
  }
};

INSTANTIATE_TEST_SUITE_P(Runners, F32TilesTest,
                         ::testing::Values(ElementwiseKernel::Runner::kAvx2Tiles,
                                           ElementwiseKernel::Runner::kAvx512Tiles),
                         [](const ::testing::TestParamInfo<ElementwiseKernel::Runner>& info) {
                           return info.param == ElementwiseKernel::Runner::kAvx2Tiles ? "Avx2" : "Avx512";
                         });

TEST_P(F32TilesTest, ExactOpsMatchTheInterpreterBitForBit) {
  for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum"}) {
    for (int64_t n : kLengths) {
      const std::string text = WithLength(Binary(op), n);
      std::vector<std::vector<float>> in = {Awkward(n, 1), Awkward(n, 2)};
      bool fast = false;
      Result f = RunProgram(text, in, true, n, &fast);
      ASSERT_TRUE(fast) << op;
      Result g = RunProgram(text, in, false, n);
      ExpectSame(f.outputs[0], g.outputs[0], in[0], std::string(op) + " n=" + std::to_string(n), 0);
      EXPECT_EQ(f.nonfinite, g.nonfinite) << op << " n=" << n;
    }
  }
  for (const char* op : {"negate", "abs", "sqrt", "rsqrt", "floor", "ceil", "round-nearest-even"}) {
    for (int64_t n : kLengths) {
      const std::string text = WithLength(Unary(op), n);
      std::vector<std::vector<float>> in = {Awkward(n, 3)};
      bool fast = false;
      Result f = RunProgram(text, in, true, n, &fast);
      ASSERT_TRUE(fast) << op;
      Result g = RunProgram(text, in, false, n);
      ExpectSame(f.outputs[0], g.outputs[0], in[0], std::string(op) + " n=" + std::to_string(n), 0);
    }
  }
}

TEST_P(F32TilesTest, TranscendentalsAgreeWithTheInterpreter) {
  // The interpreter finishes a range's last few lanes with libm, so these
  // agree to a few ulp rather than bit for bit.
  for (const char* op : {"exponential", "log", "logistic", "tanh"}) {
    for (int64_t n : kLengths) {
      const std::string text = WithLength(Unary(op), n);
      std::vector<std::vector<float>> in = {Awkward(n, 4)};
      Result f = RunProgram(text, in, true, n);
      Result g = RunProgram(text, in, false, n);
      ExpectSame(f.outputs[0], g.outputs[0], in[0], std::string(op) + " n=" + std::to_string(n), 2e-6);
    }
  }
}

TEST_P(F32TilesTest, TanhIsWithinAFewUlpOfLibm) {
  const int64_t n = 200001;
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = -10.0f + 20.0f * static_cast<float>(i) / (n - 1);
  x[0] = 1e-30f;
  x[1] = -0.0f;
  Result f = RunProgram(WithLength(Unary("tanh"), n), {x}, true, n);
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double want = std::tanh(static_cast<double>(x[i]));
    const double ulp = std::nextafter(static_cast<float>(std::fabs(want)), 2.0f) - static_cast<float>(std::fabs(want));
    worst = std::max(worst, std::fabs(f.outputs[0][i] - want) / ulp);
    ASSERT_LE(std::fabs(f.outputs[0][i]), 1.0f) << x[i];
  }
  EXPECT_LE(worst, 8.0);
  EXPECT_TRUE(std::signbit(f.outputs[0][1]));  // tanh(-0) = -0
}

// A DAG with values read far from where they are made (slots), a scalar
// parameter under a broadcast, constants, copies and three outputs: an
// intermediate, the last step and the input itself.
TEST_P(F32TilesTest, DagWithSlotsSplatsAndSeveralOutputsMatches) {
  const std::string text = R"(HloModule dag
ENTRY e {
  x = f32[N] parameter(0)
  y = f32[N] parameter(1)
  s = f32[] parameter(2)
  sb = f32[N] broadcast(s), dimensions={}
  c = f32[] constant(0.75)
  cb = f32[N] broadcast(c), dimensions={}
  a = f32[N] multiply(x, sb)
  b = f32[N] add(a, y)
  t = f32[N] tanh(b)
  u = f32[N] subtract(cb, a)
  v = f32[N] maximum(t, u)
  w = f32[N] copy(v)
  d = f32[N] divide(w, b)
  e = f32[N] multiply(d, a)
  ROOT out = (f32[N], f32[N], f32[N]) tuple(b, e, x)
})";
  for (int64_t n : kLengths) {
    std::vector<std::vector<float>> in = {Awkward(n, 5), Awkward(n, 6), {1.5f}};
    bool fast = false;
    Result f = RunProgram(WithLength(text, n), in, true, n, &fast);
    ASSERT_TRUE(fast);
    Result g = RunProgram(WithLength(text, n), in, false, n);
    for (int k = 0; k < 3; ++k) {
      ExpectSame(f.outputs[k], g.outputs[k], in[0], "output " + std::to_string(k) + " n=" + std::to_string(n),
                 k == 1 ? 2e-6 : 0);
      EXPECT_EQ(f.nonfinite[k], g.nonfinite[k]) << k << " n=" << n;
    }
  }
}

// Broadcast operands read as periodic streams: a bias along the last dim
// (periods that do and do not divide the tile), a per-channel scale in
// NCHW, a column broadcast, broadcasts across middle dims; each against
// the interpreter's gather.
TEST_P(F32TilesTest, BroadcastOperandsMatchTheInterpretersGather) {
  struct Case {
    std::string out_dims, src_dims, dimensions;
    int64_t lanes, src_count;
  };
  const Case cases[] = {
      {"256,1024", "1024", "1", 256 * 1024, 1024},
      {"7,300", "300", "1", 2100, 300},
      {"300,7", "300", "0", 2100, 300},
      {"3,5,7,11", "5", "1", 1155, 5},
      {"2,33,257", "33,257", "1,2", 2 * 33 * 257, 33 * 257},
      {"4,1,600", "4", "0", 2400, 4},
      // Broadcast across middle dims: a rotary table [tokens, d] for every
      // head, runs shorter and longer than a tile, a trailing repeat.
      {"1,11,4,128", "1,11,128", "0,1,3", 11 * 4 * 128, 11 * 128},
      {"3,5,7", "3,7", "0,2", 105, 21},
      {"5,3,700", "5,700", "0,2", 10500, 3500},
      {"6,4,5,3", "6,5", "0,2", 360, 30},
  };
  for (const Case& c : cases) {
    const std::string text = "HloModule m\nENTRY e {\n  x = f32[" + c.out_dims + "] parameter(0)\n"
                             "  b = f32[" + c.src_dims + "] parameter(1)\n"
                             "  bb = f32[" + c.out_dims + "] broadcast(b), dimensions={" + c.dimensions + "}\n"
                             "  s = f32[" + c.out_dims + "] add(x, bb)\n"
                             "  z = f32[] constant(0)\n  zb = f32[" + c.out_dims + "] broadcast(z), dimensions={}\n"
                             "  ROOT r = f32[" + c.out_dims + "] maximum(s, zb)\n}\n";
    std::vector<std::vector<float>> in = {Awkward(c.lanes, 7), Awkward(c.src_count, 8)};
    bool fast = false;
    Result f = RunProgram(text, in, true, c.lanes, &fast);
    ASSERT_TRUE(fast) << c.out_dims << " <- " << c.src_dims;
    Result g = RunProgram(text, in, false, c.lanes);
    ExpectSame(f.outputs[0], g.outputs[0], in[0], c.out_dims + " <- " + c.src_dims, 0);
  }
}

TEST_P(F32TilesTest, ReportsNonFiniteOnlyWhenPresent) {
  const int64_t n = 1000;
  std::vector<float> x(n, 2.0f);
  Result clean = RunProgram(WithLength(Unary("sqrt"), n), {x}, true, n);
  EXPECT_EQ(clean.nonfinite[0], 0);
  x[n - 1] = -1.0f;  // the last lane of a partial tile
  Result bad = RunProgram(WithLength(Unary("sqrt"), n), {x}, true, n);
  EXPECT_EQ(bad.nonfinite[0], 1);
  EXPECT_TRUE(std::isnan(bad.outputs[0][n - 1]));
}

// bf16 and f16 programs: narrow inputs widened on load (whole arrays,
// broadcasts, splats), every narrow op rounded as the interpreter rounds
// it, narrowing and widening converts, narrow outputs; bit for bit.
TEST_P(F32TilesTest, NarrowProgramsMatchTheInterpreterBitForBit) {
  const std::string text = R"(HloModule narrow
ENTRY e {
  x = T[N] parameter(0)
  y = T[N] parameter(1)
  s = T[] parameter(2)
  w = f32[N] parameter(3)
  sb = T[N] broadcast(s), dimensions={}
  c = T[] constant(0.3)
  cb = T[N] broadcast(c), dimensions={}
  a = T[N] multiply(x, sb)
  b = T[N] add(a, y)
  d = T[N] divide(b, cb)
  m = T[N] maximum(d, x)
  q = T[N] sqrt(m)
  wn = T[N] convert(w)
  f = f32[N] convert(q)
  g = f32[N] multiply(f, w)
  other = O[N] convert(g)
  h = T[N] subtract(wn, m)
  ROOT out = (T[N], f32[N], O[N], T[N]) tuple(h, g, other, x)
})";
  for (const auto& [type, other] : {std::pair{"bf16", "f16"}, std::pair{"f16", "bf16"}}) {
    const std::string typed = absl::StrReplaceAll(text, {{"T[", std::string(type) + "["},
                                                         {"O[", std::string(other) + "["}});
    for (int64_t n : kLengths) {
      std::vector<std::vector<float>> in = {Awkward(n, 11), Awkward(n, 12), {1.75f}, Awkward(n, 13)};
      bool fast = false;
      Result f = RunProgram(WithLength(typed, n), in, true, n, &fast);
      ASSERT_TRUE(fast) << type;
      Result g = RunProgram(WithLength(typed, n), in, false, n);
      for (int k = 0; k < 4; ++k) {
        ExpectSame(f.outputs[k], g.outputs[k], in[0],
                   std::string(type) + " output " + std::to_string(k) + " n=" + std::to_string(n), 0);
        EXPECT_EQ(f.nonfinite[k], g.nonfinite[k]) << type << " output " << k << " n=" << n;
      }
    }
  }
}

// Rounding to bf16 at every representable tie and around the subnormal
// and overflow edges: the runner's integer rounding against the
// interpreter's, over all 2^16 bf16 values with each low half that matters.
TEST_P(F32TilesTest, Bf16RoundingAgreesOnTiesSubnormalsAndOverflow) {
  std::vector<float> x;
  for (uint32_t hi = 0; hi < 0x10000; ++hi)
    for (uint32_t lo : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu})
      x.push_back(std::bit_cast<float>((hi << 16) | lo));
  const int64_t n = static_cast<int64_t>(x.size());
  const std::string text = "HloModule r\nENTRY e {\n  x = f32[N] parameter(0)\n"
                           "  ROOT r = bf16[N] convert(x)\n}\n";
  bool fast = false;
  Result f = RunProgram(WithLength(text, n), {x}, true, n, &fast);
  ASSERT_TRUE(fast);
  Result g = RunProgram(WithLength(text, n), {x}, false, n);
  ExpectSame(f.outputs[0], g.outputs[0], x, "f32 -> bf16", 0);
  EXPECT_EQ(f.nonfinite[0], g.nonfinite[0]);
}

// A bf16 bias broadcast along the last dim, as a periodic narrow stream.
TEST_P(F32TilesTest, NarrowBroadcastStreamsMatchTheInterpretersGather) {
  const std::string text = "HloModule m\nENTRY e {\n  x = bf16[7,300] parameter(0)\n"
                           "  b = bf16[300] parameter(1)\n"
                           "  bb = bf16[7,300] broadcast(b), dimensions={1}\n"
                           "  ROOT r = bf16[7,300] add(x, bb)\n}\n";
  std::vector<std::vector<float>> in = {Awkward(2100, 14), Awkward(300, 15)};
  bool fast = false;
  Result f = RunProgram(text, in, true, 2100, &fast);
  ASSERT_TRUE(fast);
  Result g = RunProgram(text, in, false, 2100);
  ExpectSame(f.outputs[0], g.outputs[0], in[0], "bf16 bias", 0);
}

// A bf16 or f16 value per row broadcast along it (an RMS norm's scale):
// runs of one element longer than a block, ending inside blocks (300) or
// on their edges (1152), each read as one value or gathered.
TEST_P(F32TilesTest, NarrowRunsMatchTheInterpretersGather) {
  for (const std::string type : {"bf16", "f16"}) {
    for (int64_t row : {300, 1152}) {
      const int64_t rows = 11, lanes = rows * row;
      const std::string shape = type + "[11," + std::to_string(row) + "]";
      const std::string text = "HloModule m\nENTRY e {\n  x = " + shape + " parameter(0)\n"
                               "  b = " + type + "[11] parameter(1)\n"
                               "  bb = " + shape + " broadcast(b), dimensions={0}\n"
                               "  ROOT r = " + shape + " multiply(x, bb)\n}\n";
      std::vector<std::vector<float>> in = {Awkward(lanes, 16), Awkward(rows, 17)};
      bool fast = false;
      Result f = RunProgram(text, in, true, lanes, &fast);
      ASSERT_TRUE(fast) << shape;
      Result g = RunProgram(text, in, false, lanes);
      ExpectSame(f.outputs[0], g.outputs[0], in[0], shape + " row scale", 0);
    }
  }
}

// Predicates made in the program run as lane masks: compares in every
// direction (NaN lanes included), and/or/xor/not, select, clamp and a
// mask converted to a number, in f32 and bf16, bit for bit.
TEST_P(F32TilesTest, MasksSelectAndClampMatchTheInterpreterBitForBit) {
  const std::string relu6_grad = R"(HloModule g
ENTRY e {
  g = T[N] parameter(0)
  x = T[N] parameter(1)
  z = T[] constant(0)
  six = T[] constant(6)
  zb = T[N] broadcast(z), dimensions={}
  sb = T[N] broadcast(six), dimensions={}
  above = pred[N] compare(x, zb), direction=GT
  below = pred[N] compare(x, sb), direction=LT
  inside = pred[N] and(above, below)
  ROOT r = T[N] select(inside, g, zb)
})";
  const std::string relu6 = R"(HloModule c
ENTRY e {
  x = T[N] parameter(0)
  y = T[N] parameter(1)
  z = T[] constant(0)
  six = T[] constant(6)
  zb = T[N] broadcast(z), dimensions={}
  sb = T[N] broadcast(six), dimensions={}
  c = T[N] clamp(zb, x, sb)
  ROOT r = T[N] add(c, y)
})";
  for (const char* type : {"f32", "bf16"}) {
    std::vector<std::string> texts = {relu6_grad, relu6};
    for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
      texts.push_back(absl::StrCat(R"(HloModule d
ENTRY e {
  x = T[N] parameter(0)
  y = T[N] parameter(1)
  p = pred[N] compare(x, y), direction=)", dir, R"(
  q = pred[N] compare(y, x), direction=LT
  t = pred[] constant(true)
  tb = pred[N] broadcast(t), dimensions={}
  np = pred[N] not(p)
  o = pred[N] or(np, q)
  k = pred[N] xor(o, tb)
  ROOT r = T[N] convert(k)
})"));
    }
    for (const std::string& body : texts) {
      const std::string typed = absl::StrReplaceAll(body, {{"T[", std::string(type) + "["}});
      for (int64_t n : kLengths) {
        const std::string text = WithLength(typed, n);
        std::vector<std::vector<float>> in = {Awkward(n, 5), Awkward(n, 6)};
        bool fast = false;
        Result f = RunProgram(text, in, true, n, &fast);
        ASSERT_TRUE(fast) << text;
        Result g = RunProgram(text, in, false, n);
        ExpectSame(f.outputs[0], g.outputs[0], in[0], text + " n=" + std::to_string(n), 0);
      }
    }
  }
}

TEST_P(F32TilesTest, ProgramsOutsideItsReachKeepTheInterpreter) {
  const std::string fp8 = "HloModule n\nENTRY e {\n  x = f8e4m3fn[64] parameter(0)\n  ROOT r = f8e4m3fn[64] tanh(x)\n}\n";
  // A predicate read from memory, and a total-order compare.
  const std::string pred_input =
      "HloModule s\nENTRY e {\n  x = f32[64] parameter(0)\n  p = pred[64] parameter(1)\n"
      "  z = f32[] constant(0)\n  zb = f32[64] broadcast(z), dimensions={}\n"
      "  ROOT r = f32[64] select(p, x, zb)\n}\n";
  const std::string total_order =
      "HloModule t\nENTRY e {\n  x = f32[64] parameter(0)\n  y = f32[64] parameter(1)\n"
      "  p = pred[64] compare(x, y), direction=LT, type=TOTALORDER\n  ROOT r = f32[64] convert(p)\n}\n";
  for (const std::string& text : {fp8, pred_input, total_order}) {
    auto module = hlo::LoadModule(text, "f32_tiles_test");
    ASSERT_TRUE(module.ok()) << module.status();
    auto program = ExprProgram::Compile(*(*module)->entry(), false);
    ASSERT_TRUE(program.ok()) << program.status();
    EXPECT_FALSE(program->LowerToF32().has_value()) << text;
  }
}

}  // namespace
}  // namespace neuron::kernels
