// Each pass on small modules: it does its rewrite, leaves the module valid,
// and leaves alone what it must not touch.
#include "gtest/gtest.h"
#include "lib/compiler/buffer_assignment.h"
#include "lib/compiler/ir_util.h"
#include "lib/compiler/passes/passes.h"
#include "lib/compiler/diagnostics.h"
#include "lib/hlo/verifier.h"
#include "tests/compiler/test_util.h"

namespace neuron::compiler {
namespace {

using testing::CountInEntry;
using testing::CountOpcode;
using testing::ParseOrDie;
using hlo::Opcode;

// Runs a pass as the pipeline does: then drops dead code and verifies.
bool RunPass(Pass& pass, std::unique_ptr<hlo::Module>& m) {
  auto changed = pass.Run(*m);
  EXPECT_TRUE(changed.ok()) << changed.status();
  if (changed.ok() && *changed) CompactModule(*m);
  absl::Status v = hlo::Verify(*m);
  EXPECT_TRUE(v.ok()) << pass.Name() << " left an invalid module: " << v;
  return changed.ok() && *changed;
}

TEST(CompactModuleTest, DropsDeadCodeInPlaceAndRebuildsUsersInPostOrder) {
  auto m = ParseOrDie(R"(HloModule m
unused {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  dead = f32[4] exponential(p)
  z = f32[] constant(0)
  r = f32[] reduce(p, z), dimensions={0}, to_apply=add
  b = f32[4] broadcast(r), dimensions={}
  twice = f32[4] multiply(p, p)
  ROOT out = f32[4] add(b, twice)
})");
  hlo::Computation* entry = m->entry();
  CompactModule(*m);
  // The same objects survive; the dead exp and the uncalled computation go.
  EXPECT_EQ(m->entry(), entry);
  ASSERT_EQ(m->computation_count(), 2u);
  EXPECT_EQ(m->computations()[0]->name(), "add");
  EXPECT_EQ(m->computations()[1], entry);
  std::vector<std::string> names;
  for (const hlo::Instruction* inst : entry->instructions()) names.push_back(inst->name());
  EXPECT_EQ(names, (std::vector<std::string>{"p", "z", "r", "b", "twice", "out"}));
  // p's users: in instruction order, each once (twice uses p two times),
  // and no longer the dropped exp.
  const hlo::Instruction* p = entry->parameter(0);
  ASSERT_NE(p, nullptr);
  std::vector<std::string> users;
  for (const hlo::Instruction* u : p->users()) users.push_back(u->name());
  EXPECT_EQ(users, (std::vector<std::string>{"r", "twice"}));
  EXPECT_TRUE(hlo::Verify(*m).ok());
}

TEST(DcePassTest, RemovesDeadKeepsSideEffects) {
  auto m = ParseOrDie(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  dead1 = f32[4] exponential(p)
  dead2 = f32[4] add(dead1, dead1)
  tok = token[] after-all()
  ROOT r = f32[4] negate(p)
})");
  auto pass = MakeDeadCodeEliminationPass();
  EXPECT_TRUE(RunPass(*pass, m));
  EXPECT_EQ(CountInEntry(*m, Opcode::kExp), 0);
  EXPECT_EQ(CountInEntry(*m, Opcode::kAdd), 0);
  EXPECT_EQ(CountInEntry(*m, Opcode::kAfterAll), 1);  // side effect stays
  EXPECT_FALSE(RunPass(*pass, m));                   // nothing left to do
}

TEST(CallInlinerPassTest, InlinesNestedAndRepeatedCallsWithTheirOperands) {
  auto m = ParseOrDie(R"(HloModule m
relu {
  a = f32[4] parameter(0)
  z = f32[] constant(0)
  zb = f32[4] broadcast(z), dimensions={}
  ROOT m = f32[4] maximum(a, zb)
}
scaled_relu {
  x = f32[4] parameter(0)
  s = f32[4] parameter(1)
  xs = f32[4] multiply(x, s)
  ROOT r = f32[4] call(xs), to_apply=relu
}
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  c1 = f32[4] call(q, p), to_apply=scaled_relu
  c2 = f32[4] call(p), to_apply=relu
  ROOT sum = f32[4] add(c1, c2)
})");
  auto pass = MakeCallInlinerPass();
  EXPECT_TRUE(RunPass(*pass, m));
  EXPECT_EQ(CountInEntry(*m, Opcode::kCall), 0);
  EXPECT_EQ(CountInEntry(*m, Opcode::kMaximum), 2);
  // Parameters bound by number: x is the call's operand 0 (q), s is p.
  const hlo::Instruction* mul = nullptr;
  for (const hlo::Instruction* inst : m->entry()->instructions())
    if (inst->opcode() == Opcode::kMultiply) mul = inst;
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->operand(0)->name(), "q");
  EXPECT_EQ(mul->operand(1)->name(), "p");
  EXPECT_FALSE(RunPass(*pass, m));
}

TEST(CallInlinerPassTest, KeepsCallsWithEffectsOrOrdering) {
  auto m = ParseOrDie(R"(HloModule m
noisy {
  a = f32[4] parameter(0)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[4] rng(lo, hi), distribution=rng_uniform
  ROOT s = f32[4] add(a, r)
}
plain {
  b = f32[4] parameter(0)
  ROOT n = f32[4] negate(b)
}
ENTRY e {
  p = f32[4] parameter(0)
  c1 = f32[4] call(p), to_apply=noisy
  c2 = f32[4] call(p), to_apply=plain, control-predecessors={c1}
  ROOT sum = f32[4] add(c1, c2)
})");
  auto pass = MakeCallInlinerPass();
  EXPECT_FALSE(RunPass(*pass, m));
  EXPECT_EQ(CountInEntry(*m, Opcode::kCall), 2);
}

TEST(ConstantFoldingPassTest, FoldsSmallArithmeticNotBigBroadcasts) {
  auto m = ParseOrDie(R"(HloModule m
ENTRY e {
  a = f32[3] constant({1, 2, 3})
  b = f32[3] constant({10, 20, 30})
  s = f32[3] add(a, b)
  c = f32[] constant(2)
  big = f32[1000,1000] broadcast(c), dimensions={}
  p = f32[3] parameter(0)
  m = f32[3] multiply(s, p)
  ROOT t = (f32[3], f32[1000,1000]) tuple(m, big)
})");
  auto pass = MakeConstantFoldingPass();
  EXPECT_TRUE(RunPass(*pass, m));
  const hlo::Instruction* mul = m->entry()->Find("m");
  ASSERT_TRUE(mul);
  const hlo::Instruction* folded = mul->operand(0);
  ASSERT_EQ(folded->opcode(), Opcode::kConstant);
  EXPECT_EQ(folded->name(), "s");
  EXPECT_EQ(folded->attrs().literal->GetDouble(2), 33.0);
  EXPECT_EQ(m->entry()->Find("big")->opcode(), Opcode::kBroadcast);  // 1M elements: not folded
}

TEST(AlgebraicSimplifierPassTest, RemovesIdentities) {
  auto m = ParseOrDie(R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  z = f32[] constant(0)
  zb = f32[2,3] broadcast(z), dimensions={}
  a = f32[2,3] add(p, zb)
  one = f32[2,3] constant({{1,1,1},{1,1,1}})
  m = f32[2,3] multiply(one, a)
  n1 = f32[2,3] negate(m)
  n2 = f32[2,3] negate(n1)
  t = f32[2,3] transpose(n2), dimensions={0,1}
  r1 = f32[6] reshape(t)
  r2 = f32[3,2] reshape(r1)
  ROOT out = f32[3,2] exponential(r2)
})");
  auto pass = MakeAlgebraicSimplifierPass();
  EXPECT_TRUE(RunPass(*pass, m));
  const hlo::Instruction* r2 = m->entry()->root()->operand(0);
  ASSERT_EQ(r2->opcode(), Opcode::kReshape);
  EXPECT_EQ(r2->operand(0)->name(), "p");  // add 0, mul 1, --x, identity transpose, reshape chain: all gone
  EXPECT_EQ(CountInEntry(*m, Opcode::kNegate), 0);
}

TEST(AlgebraicSimplifierPassTest, KeepsNonIdentities) {
  auto m = ParseOrDie(R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  two = f32[] constant(2)
  tb = f32[2] broadcast(two), dimensions={}
  ROOT m = f32[2] multiply(p, tb)
})");
  auto pass = MakeAlgebraicSimplifierPass();
  EXPECT_FALSE(RunPass(*pass, m));
  EXPECT_EQ(m->entry()->root()->opcode(), Opcode::kMultiply);
}

TEST(CsePassTest, MergesEqualInstructionsOnly) {
  auto m = ParseOrDie(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] exponential(p)
  b = f32[4] exponential(p)
  c = f32[4] log(p)
  s1 = f32[4] add(a, c)
  s2 = f32[4] add(b, c)
  ROOT r = (f32[4], f32[4]) tuple(s1, s2)
})");
  auto pass = MakeCsePass();
  EXPECT_TRUE(RunPass(*pass, m));
  EXPECT_EQ(CountInEntry(*m, Opcode::kExp), 1);
  EXPECT_EQ(CountInEntry(*m, Opcode::kLog), 1);
  EXPECT_EQ(CountInEntry(*m, Opcode::kAdd), 1);  // s2 became s1 once b became a
  const hlo::Instruction* root = m->entry()->root();
  EXPECT_EQ(root->operand(0), root->operand(1));
}

TEST(CsePassTest, NeverMergesRandomOps) {
  auto m = ParseOrDie(R"(HloModule m
ENTRY e {
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  a = f32[4] rng(lo, hi), distribution=rng_uniform
  b = f32[4] rng(lo, hi), distribution=rng_uniform
  ROOT r = f32[4] add(a, b)
})");
  auto pass = MakeCsePass();
  RunPass(*pass, m);
  EXPECT_EQ(CountInEntry(*m, Opcode::kRng), 2);
}

TEST(TransposeFoldingPassTest, FoldsIntoDotWhenOrderIsKept) {
  auto m = ParseOrDie(testing::kMlp);
  auto pass = MakeTransposeFoldingPass(false);
  EXPECT_TRUE(RunPass(*pass, m));
  const hlo::Instruction* h = m->entry()->Find("h");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->operand(1)->name(), "w1");
  EXPECT_EQ(h->attrs().dot->rhs_contracting, std::vector<int64_t>{1});
  EXPECT_EQ(CountInEntry(*m, Opcode::kTranspose), 0);
}

TEST(TransposeFoldingPassTest, KeepsTransposeThatReordersOutput) {
  auto m = ParseOrDie(R"(HloModule m
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[4,5] parameter(1)
  t = f32[3,2,4] transpose(a), dimensions={1,0,2}
  ROOT d = f32[3,2,5] dot(t, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}
})");
  auto pass = MakeTransposeFoldingPass(false);
  EXPECT_FALSE(RunPass(*pass, m));
  EXPECT_EQ(m->entry()->root()->operand(0)->opcode(), Opcode::kTranspose);
}

TEST(TransposeFoldingPassTest, ConvolutionVariantFoldsAnyTranspose) {
  auto m = ParseOrDie(R"(HloModule m
ENTRY e {
  x = f32[1,8,8,3] parameter(0)
  k = f32[3,3,3,4] parameter(1)
  xt = f32[1,3,8,8] transpose(x), dimensions={0,3,1,2}
  ROOT c = f32[1,4,8,8] convolution(xt, k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_01io->bf01
})");
  auto plain = MakeTransposeFoldingPass(false);
  EXPECT_FALSE(RunPass(*plain, m));
  auto conv = MakeTransposeFoldingPass(true);
  EXPECT_TRUE(RunPass(*conv, m));
  EXPECT_EQ(m->entry()->root()->operand(0)->name(), "x");
}

TEST(ElementwiseFusionPassTest, FusesChainsAndDuplicatesOnlyCheapProducers) {
  auto m = ParseOrDie(R"(HloModule m
ENTRY e {
  p = f32[16,16] parameter(0)
  q = f32[16] parameter(1)
  qb = f32[16,16] broadcast(q), dimensions={1}
  a = f32[16,16] add(p, qb)
  e1 = f32[16,16] exponential(a)
  t = f32[16,16] tanh(e1)
  d = f32[16,16] dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  x = f32[16,16] multiply(d, qb)
  ROOT r = (f32[16,16], f32[16,16], f32[16,16]) tuple(t, x, e1)
})");
  auto pass = MakeElementwiseFusionPass({});
  EXPECT_TRUE(RunPass(*pass, m));
  EXPECT_EQ(CountInEntry(*m, Opcode::kDot), 1);      // not elementwise: stays
  EXPECT_GE(CountInEntry(*m, Opcode::kFusion), 2);
  for (const hlo::Instruction* inst : m->entry()->instructions()) {
    if (inst->opcode() != Opcode::kFusion) continue;
    EXPECT_EQ(inst->attrs().fusion_kind, "kLoop");
    ASSERT_EQ(inst->called_computations().size(), 1u);
    EXPECT_TRUE(inst->called_computations()[0]->is_fusion_computation());
  }
  // e1 has a user outside t's fusion (the tuple): it is computed once, not
  // duplicated into t's fusion.
  EXPECT_EQ(CountOpcode(*m, Opcode::kExp), 1);
  // The broadcast is cheap: copied into both consumers' fusions.
  EXPECT_EQ(CountInEntry(*m, Opcode::kBroadcast), 0);
}

TEST(ElementwiseFusionPassTest, BroadcastSourcesComputedOutsideTheFusion) {
  // A norm's shape: a per-channel scale computed on a vector, broadcast over
  // the activations. The scale's arithmetic stays out of the activations'
  // fusion, whose broadcast then reads one of its parameters.
  auto m = ParseOrDie(R"(HloModule m
ENTRY e {
  x = f32[4,8,16] parameter(0)
  v = f32[16] parameter(1)
  g = f32[16] parameter(2)
  eps = f32[] constant(0.001)
  epsb = f32[16] broadcast(eps), dimensions={}
  ve = f32[16] add(v, epsb)
  rs = f32[16] rsqrt(ve)
  scale = f32[16] multiply(rs, g)
  sb = f32[4,8,16] broadcast(scale), dimensions={2}
  y = f32[4,8,16] multiply(x, sb)
  ROOT z = f32[4,8,16] tanh(y)
})");
  auto pass = MakeElementwiseFusionPass({});
  EXPECT_TRUE(RunPass(*pass, m));
  const hlo::Instruction* root = m->entry()->root();
  ASSERT_EQ(root->opcode(), Opcode::kFusion);
  int checked = 0;
  for (const hlo::Instruction* inst : root->called_computations()[0]->instructions()) {
    if (inst->opcode() != Opcode::kBroadcast) continue;
    EXPECT_EQ(inst->operand(0)->opcode(), Opcode::kParameter) << inst->name();
    ++checked;
  }
  EXPECT_EQ(checked, 1);
  EXPECT_EQ(CountOpcode(*m, Opcode::kRsqrt), 1);  // computed once, on the vector
}

TEST(ElementwiseFusionPassTest, ReduceProducersOnlyWhenAsked) {
  const char* text = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[8,16] parameter(0)
  z = f32[] constant(0)
  r = f32[8] reduce(p, z), dimensions={1}, to_apply=add
  ROOT n = f32[8] negate(r)
})";
  auto m = ParseOrDie(text);
  auto plain = MakeElementwiseFusionPass({});
  RunPass(*plain, m);
  EXPECT_EQ(CountInEntry(*m, Opcode::kReduce), 1);
  auto m3 = ParseOrDie(text);
  auto aggressive = MakeElementwiseFusionPass({true, "aggressive-fusion"});
  EXPECT_TRUE(RunPass(*aggressive, m3));
  EXPECT_EQ(CountInEntry(*m3, Opcode::kReduce), 0);
  EXPECT_EQ(m3->entry()->root()->opcode(), Opcode::kFusion);
}

TEST(ElementwiseFusionPassTest, ReductionsTakeTheirOperandsProducers) {
  // sum(convert(x) * w) over the last dim: the convert and the product fuse
  // into the reduce (an input fusion), so the plan holds no f32 [64, 4096]
  // value; a reduce whose reducer is not op(p0, p1) stays apart.
  const char* text = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
odd {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  ROOT t = f32[] multiply(s, s)
}
ENTRY e {
  x = bf16[64,4096] parameter(0)
  w = f32[4096] parameter(1)
  xc = f32[64,4096] convert(x)
  wb = f32[64,4096] broadcast(w), dimensions={1}
  m = f32[64,4096] multiply(xc, wb)
  z = f32[] constant(0)
  r = f32[64] reduce(m, z), dimensions={1}, to_apply=add
  e2 = f32[64,4096] exponential(xc)
  q = f32[64] reduce(e2, z), dimensions={1}, to_apply=odd
  ROOT t = (f32[64], f32[64]) tuple(r, q)
})";
  auto m = ParseOrDie(text);
  const int64_t before = AssignBuffers(*m).memory.scratch_peak;
  auto pass = MakeElementwiseFusionPass({});
  ASSERT_TRUE(RunPass(*pass, m));
  const hlo::Instruction* r = m->entry()->root()->operand(0);
  ASSERT_EQ(r->opcode(), Opcode::kFusion);
  EXPECT_EQ(r->attrs().fusion_kind, "kInput");
  EXPECT_EQ(r->to_apply()->root()->opcode(), Opcode::kReduce);
  EXPECT_EQ(CountInEntry(*m, Opcode::kMultiply), 0);
  // The odd reducer's reduce stays a plain reduce of a (fused) value.
  EXPECT_EQ(m->entry()->root()->operand(1)->opcode(), Opcode::kReduce);
  const int64_t after = AssignBuffers(*m).memory.scratch_peak;
  constexpr int64_t kValue = 64 * 4096 * 4;
  EXPECT_GE(before, 2 * kValue);  // xc with m or e2
  EXPECT_LT(after, before - kValue + 4096) << "before " << before << ", after " << after;
}

TEST(DotConvertFoldingPassTest, SkinnyDotsReadExactlyWidenedWeightsAsStored) {
  // fp8 weights widened to bf16 for a one-token product: the dot reads the
  // fp8 weights. Not folded: a narrowing convert (it rounds), and a product
  // with more than 16 rows (prefill: the matmul wants bf16 operands).
  auto m = ParseOrDie(R"(HloModule m
ENTRY e {
  x = bf16[1,64] parameter(0)
  w = f8e4m3fn[128,64] parameter(1)
  wc = bf16[128,64] convert(w)
  y = bf16[1,128] dot(x, wc), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  v = f32[128,64] parameter(2)
  vc = bf16[128,64] convert(v)
  z = bf16[1,128] dot(x, vc), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  p = bf16[32,64] parameter(3)
  q = bf16[32,128] dot(p, wc), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT t = (bf16[1,128], bf16[1,128], bf16[32,128]) tuple(y, z, q)
})");
  auto pass = MakeDotConvertFoldingPass();
  EXPECT_TRUE(RunPass(*pass, m));
  const hlo::Instruction* root = m->entry()->root();
  EXPECT_EQ(root->operand(0)->operand(1)->opcode(), Opcode::kParameter);  // reads w
  EXPECT_EQ(root->operand(0)->operand(1)->shape().type, hlo::ElementType::kF8E4M3FN);
  EXPECT_EQ(root->operand(1)->operand(1)->opcode(), Opcode::kConvert);  // f32 -> bf16 rounds
  EXPECT_EQ(root->operand(2)->operand(1)->opcode(), Opcode::kConvert);  // 32 rows
}

TEST(FusedF32IntermediatesPassTest, NarrowChainsComputeInF32AndRoundAtTheEdge) {
  auto m = ParseOrDie(R"(HloModule m
ENTRY e {
  x = bf16[64] parameter(0)
  y = f16[64] parameter(1)
  one = bf16[] constant(1)
  ob = bf16[64] broadcast(one), dimensions={}
  a = bf16[64] add(x, ob)
  t = bf16[64] tanh(a)
  s = bf16[64] subtract(t, ob)
  p = pred[64] compare(s, x), direction=GT
  m = bf16[64] select(p, s, x)
  h = f16[64] multiply(y, y)
  hc = bf16[64] convert(h)
  ROOT r = bf16[64] add(m, hc)
})");
  auto fusion = MakeElementwiseFusionPass({});
  ASSERT_TRUE(RunPass(*fusion, m));
  auto pass = MakeFusedF32IntermediatesPass();
  EXPECT_TRUE(RunPass(*pass, m));
  const hlo::Computation* body = nullptr;
  for (const hlo::Computation* c : m->computations())
    if (c->is_fusion_computation()) body = c;
  ASSERT_NE(body, nullptr);
  // Every op computes on f32; converts to bf16/f16 only where a value is
  // rounded: the root, and h before its explicit convert (a user's
  // convert stays: it is a rounding the program asked for).
  int narrow_rounds = 0;
  for (const hlo::Instruction* inst : body->instructions()) {
    switch (inst->opcode()) {
      case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kTanh:
      case Opcode::kSelect:
        EXPECT_EQ(inst->shape().type, hlo::ElementType::kF32) << inst->name();
        break;
      case Opcode::kCompare:
        EXPECT_EQ(inst->operand(0)->shape().type, hlo::ElementType::kF32) << inst->name();
        break;
      case Opcode::kConvert:
        narrow_rounds += inst->operand(0)->shape().type == hlo::ElementType::kF32 &&
                         inst->shape().type != hlo::ElementType::kF32;
        break;
      default:
        break;
    }
  }
  EXPECT_EQ(body->root()->opcode(), Opcode::kConvert);
  EXPECT_EQ(body->root()->shape().type, hlo::ElementType::kBF16);
  EXPECT_EQ(narrow_rounds, 2);
  // f32 programs have nothing to widen.
  auto f32 = ParseOrDie(R"(HloModule f
ENTRY e {
  x = f32[64] parameter(0)
  a = f32[64] add(x, x)
  ROOT t = f32[64] tanh(a)
})");
  ASSERT_TRUE(RunPass(*fusion, f32));
  EXPECT_FALSE(RunPass(*pass, f32));
}

TEST(AutocastPassTest, MatmultCastsDotOperandsKeepingF32Result) {
  auto m = ParseOrDie(testing::kMlp);
  auto pass = MakeAutocastPass(AutoCast::kMatmult, AutoCastType::kBf16, true);
  EXPECT_TRUE(RunPass(*pass, m));
  for (const char* name : {"h", "y"}) {
    const hlo::Instruction* dot = m->entry()->Find(name);
    ASSERT_TRUE(dot) << name;
    EXPECT_EQ(dot->shape().type, hlo::ElementType::kF32);  // accumulates in f32
    for (const hlo::Instruction* o : dot->operands()) {
      EXPECT_EQ(o->opcode(), Opcode::kConvert);
      EXPECT_EQ(o->shape().type, hlo::ElementType::kBF16);
    }
  }
  EXPECT_EQ(m->entry()->Find("hb")->operand(0)->shape().type, hlo::ElementType::kF32);  // add untouched
}

TEST(AutocastPassTest, WithoutMixedAccumulationTheDotRunsInTheLowType) {
  auto m = ParseOrDie(testing::kMlp);
  auto pass = MakeAutocastPass(AutoCast::kMatmult, AutoCastType::kFp16, false);
  EXPECT_TRUE(RunPass(*pass, m));
  const hlo::Instruction* root = m->entry()->root();
  ASSERT_EQ(root->opcode(), Opcode::kConvert);  // back to f32
  EXPECT_EQ(root->shape().type, hlo::ElementType::kF32);
  EXPECT_EQ(root->operand(0)->opcode(), Opcode::kDot);
  EXPECT_EQ(root->operand(0)->shape().type, hlo::ElementType::kF16);
}

TEST(AutocastPassTest, Tf32RoundsMantissaAndAllCoversElementwise) {
  auto m = ParseOrDie(testing::kMlp);
  auto tf32 = MakeAutocastPass(AutoCast::kMatmult, AutoCastType::kTf32, true);
  EXPECT_TRUE(RunPass(*tf32, m));
  const hlo::Instruction* h = m->entry()->Find("h");
  ASSERT_EQ(h->operand(0)->opcode(), Opcode::kReducePrecision);
  EXPECT_EQ(h->operand(0)->attrs().mantissa_bits, 10);
  EXPECT_EQ(h->operand(0)->attrs().exponent_bits, 8);

  auto all_m = ParseOrDie(testing::kMlp);
  auto all = MakeAutocastPass(AutoCast::kAll, AutoCastType::kBf16, true);
  EXPECT_TRUE(RunPass(*all, all_m));
  int bf16_adds = 0;
  for (const hlo::Instruction* inst : all_m->entry()->instructions()) {
    bf16_adds += inst->opcode() == Opcode::kAdd && inst->shape().type == hlo::ElementType::kBF16;
  }
  EXPECT_EQ(bf16_adds, 1);  // the bias add computes in bf16 under `all`
  auto none = MakeAutocastPass(AutoCast::kNone, AutoCastType::kBf16, true);
  EXPECT_FALSE(RunPass(*none, all_m));
}

TEST(SaturateConvertsPassTest, ClampsNarrowingConverts) {
  auto m = ParseOrDie(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  n = bf16[4] convert(p)
  w = f32[4] convert(n)
  ROOT h = f16[4] convert(w)
})");
  auto pass = MakeSaturateConvertsPass();
  EXPECT_TRUE(RunPass(*pass, m));
  EXPECT_EQ(CountInEntry(*m, Opcode::kClamp), 2);  // f32->bf16 and f32->f16; bf16->f32 widens
  const hlo::Instruction* clamp = m->entry()->root()->operand(0);
  ASSERT_EQ(clamp->opcode(), Opcode::kClamp);
  EXPECT_EQ(clamp->operand(2)->attrs().literal->GetDouble(0), 65504.0);
}

TEST(CustomCallLoweringPassTest, LowersKnownTargetsAndLeavesOthers) {
  auto m = ParseOrDie(R"(HloModule m
ENTRY e {
  p = f32[4,8] parameter(0)
  w = f32[8,2] parameter(1)
  s = f32[4,8] custom-call(p), custom_call_target="Sharding", sharding={replicated}
  sm = f32[4,8] custom-call(s), custom_call_target="AwsNeuronSoftmax", backend_config="1"
  g = f32[4,2] custom-call(sm, w), custom_call_target="__cublas$gemm", backend_config="{\"gemm_backend_config\":{\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"1\"],\"rhs_contracting_dimensions\":[\"0\"]},\"alpha_real\":1,\"beta\":0}}"
  ROOT u = f32[4,2] custom-call(g), custom_call_target="my_kernel"
})");
  auto pass = MakeCustomCallLoweringPass();
  EXPECT_TRUE(RunPass(*pass, m));
  EXPECT_EQ(CountInEntry(*m, Opcode::kCustomCall), 1);  // only my_kernel is left
  EXPECT_EQ(CountInEntry(*m, Opcode::kDot), 1);
  EXPECT_EQ(CountInEntry(*m, Opcode::kReduce), 2);       // softmax: max and sum
  EXPECT_EQ(CountInEntry(*m, Opcode::kExp), 1);
  EXPECT_EQ(m->entry()->root()->attrs().custom_call_target, "my_kernel");
}

TEST(CustomCallLoweringPassTest, BadSoftmaxDimensionIsAnActionableError) {
  auto m = ParseOrDie(R"(HloModule m
ENTRY e {
  p = f32[4,8] parameter(0)
  ROOT sm = f32[4,8] custom-call(p), custom_call_target="AwsNeuronSoftmax", backend_config="7", metadata={op_name="softmax" source_file="model.py" source_line=12}
})");
  auto pass = MakeCustomCallLoweringPass();
  auto r = pass->Run(*m);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(ErrorCodeOf(r.status()), "NCC-E0205");
  EXPECT_NE(r.status().message().find("model.py:12"), std::string_view::npos) << r.status();
  EXPECT_NE(r.status().message().find("%sm"), std::string_view::npos);
}

}  // namespace
}  // namespace neuron::compiler
