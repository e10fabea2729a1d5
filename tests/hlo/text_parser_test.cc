// Text parser pieces: shapes, literals, attributes, metadata, errors.
#include <cmath>

#include "gtest/gtest.h"
#include "lib/hlo/load.h"
#include "lib/hlo/printer.h"
#include "lib/hlo/text_parser.h"

namespace neuron::hlo {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseText(text, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(*m) : nullptr;
}

std::string ErrorOf(const std::string& text) {
  auto m = LoadModule(text, "bad.hlo");
  EXPECT_FALSE(m.ok());
  return m.ok() ? "" : std::string(m.status().message());
}

Instruction* Find(Module& m, const std::string& name) {
  for (Computation* c : m.computations()) {
    if (Instruction* i = c->Find(name)) return i;
  }
  return nullptr;
}

TEST(ShapeTest, ArraysLayoutsTuplesAndDynamicDims) {
  auto s = ParseShape("f32[2,3]{1,0}");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->type, ElementType::kF32);
  EXPECT_EQ(s->dims, (std::vector<int64_t>{2, 3}));
  ASSERT_TRUE(s->layout.has_value());
  EXPECT_EQ(s->layout->minor_to_major, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(*s->ElementCount(), 6);

  auto tiled = ParseShape("bf16[8,128]{1,0:T(8,128)(2,1)S(1)}");
  ASSERT_TRUE(tiled.ok());
  EXPECT_EQ(tiled->layout->details, "T(8,128)(2,1)S(1)");
  EXPECT_EQ(tiled->ToString(), "bf16[8,128]{1,0:T(8,128)(2,1)S(1)}");

  auto dyn = ParseShape("s32[<=4,3]");
  ASSERT_TRUE(dyn.ok());
  EXPECT_TRUE(dyn->IsDynamicDim(0));
  EXPECT_FALSE(dyn->IsDynamicDim(1));
  EXPECT_EQ(dyn->ToString(), "s32[<=4,3]");

  auto tuple = ParseShape("(f32[], (s8[2], pred[]), token[])");
  ASSERT_TRUE(tuple.ok());
  ASSERT_TRUE(tuple->IsTuple());
  ASSERT_EQ(tuple->tuple.size(), 3u);
  EXPECT_TRUE(tuple->tuple[1].IsTuple());
  EXPECT_TRUE(tuple->tuple[2].IsToken());

  for (const char* name : {"f8e4m3fn", "f8e5m2", "s4", "u2", "c128", "f8e4m3b11fnuz"}) {
    auto t = ParseShape(std::string(name) + "[1]");
    ASSERT_TRUE(t.ok()) << name;
    EXPECT_EQ(ElementTypeName(t->type), name);
  }
  EXPECT_FALSE(ParseShape("f33[2]").ok());
  EXPECT_FALSE(ParseShape("f32[-1]").ok());
  EXPECT_FALSE(ParseShape("f32[2").ok());
  EXPECT_FALSE(ParseShape(std::string(200, '(') + "f32[]" + std::string(200, ')')).ok());
}

TEST(LiteralTest, NestedScalarsSpecialsAndBools) {
  auto m = ParseLiteral("{ {1, 2}, {3, -4} }", Shape::Array(ElementType::kS32, {2, 2}));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->GetInt(3), -4);
  EXPECT_EQ(m->ToString(), "{{1, 2}, {3, -4}}");

  auto f = ParseLiteral("{inf, -inf, nan, 1.5e-3}", Shape::Array(ElementType::kF32, {4}));
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(std::isinf(f->GetDouble(0)) && f->GetDouble(0) > 0);
  EXPECT_TRUE(std::isinf(f->GetDouble(1)) && f->GetDouble(1) < 0);
  EXPECT_TRUE(std::isnan(f->GetDouble(2)));
  EXPECT_FLOAT_EQ(f->GetDouble(3), 1.5e-3f);

  auto b = ParseLiteral("{true, false}", Shape::Array(ElementType::kPred, {2}));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->GetInt(0), 1);
  EXPECT_EQ(b->GetInt(1), 0);

  auto bf = ParseLiteral("1.00390625", Shape::Scalar(ElementType::kBF16));
  ASSERT_TRUE(bf.ok());
  EXPECT_EQ(bf->GetDouble(0), 1.0);  // rounds to nearest even in bf16

  auto f8 = ParseLiteral("{448, -0.5}", Shape::Array(ElementType::kF8E4M3FN, {2}));
  ASSERT_TRUE(f8.ok());
  EXPECT_EQ(f8->GetDouble(0), 448.0);
  EXPECT_EQ(f8->GetDouble(1), -0.5);

  auto s4 = ParseLiteral("{-8, 7}", Shape::Array(ElementType::kS4, {2}));
  ASSERT_TRUE(s4.ok());
  EXPECT_EQ(s4->GetInt(0), -8);
  EXPECT_EQ(s4->GetInt(1), 7);

  auto c = ParseLiteral("{(1, 2), (3.5, -1)}", Shape::Array(ElementType::kC64, {2}));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->GetImag(0), 2);
  EXPECT_EQ(c->GetDouble(1), 3.5);

  auto t = ParseLiteral("(1, {2, 3})", *ParseShape("(s32[], u8[2])"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->elements().size(), 2u);
  EXPECT_EQ(t->elements()[1].GetInt(1), 3);

  auto elided = ParseLiteral("{...}", Shape::Array(ElementType::kF32, {1000, 1000}));
  ASSERT_TRUE(elided.ok());
  EXPECT_TRUE(elided->elided());

  auto commented = ParseLiteral("{ /*i0=0*/ {1}, /*i0=1*/ {2} }", Shape::Array(ElementType::kS32, {2, 1}));
  ASSERT_TRUE(commented.ok()) << commented.status().message();

  EXPECT_FALSE(ParseLiteral("{1, 2}", Shape::Array(ElementType::kS32, {3})).ok());
  EXPECT_FALSE(ParseLiteral("{1, 2, 3, 4}", Shape::Array(ElementType::kS32, {3})).ok());
  EXPECT_FALSE(ParseLiteral("{maybe}", Shape::Array(ElementType::kPred, {1})).ok());
  EXPECT_FALSE(ParseLiteral("{1}", Shape::Array(ElementType::kF32, {1000000000000})).ok());
}

TEST(TextParserTest, ModuleHeaderComputationsAndRoot) {
  auto m = Parse(R"(
// leading comment
HloModule m, entry_computation_layout={(f32[4]{0})->f32[]}, replica_count=2, num_partitions=4

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main.1 (p: f32[4]) -> f32[] {
  %p = f32[4]{0} parameter(0), metadata={op_type="Sum" op_name="jit(f)/reduce_sum" source_file="x.py" source_line=7}
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%p, %z), dimensions={0}, to_apply=%add, frontend_attributes={_xla="1"}, sharding={replicated}
}
)");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->name(), "m");
  EXPECT_EQ(m->config().replica_count, 2);
  EXPECT_EQ(m->config().num_partitions, 4);
  EXPECT_TRUE(m->NeedsMultipleDevices());
  ASSERT_EQ(m->computation_count(), 2u);
  EXPECT_EQ(m->entry()->name(), "main.1");
  Instruction* r = m->entry()->root();
  EXPECT_EQ(r->name(), "r");
  EXPECT_EQ(r->opcode(), Opcode::kReduce);
  EXPECT_EQ(r->to_apply(), m->Find("add"));
  EXPECT_EQ(r->attrs().dimensions, (std::vector<int64_t>{0}));
  EXPECT_EQ(r->attrs().sharding, "replicated");
  ASSERT_EQ(r->attrs().frontend_attributes.size(), 1u);
  EXPECT_EQ(r->attrs().frontend_attributes[0].second, "1");
  Instruction* p = m->entry()->parameter(0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->attrs().metadata.op_name, "jit(f)/reduce_sum");
  EXPECT_EQ(p->attrs().metadata.source_line, 7);
  EXPECT_EQ(p->line(), 12);
  EXPECT_EQ(r->operand(0), p);
  ASSERT_EQ(p->users().size(), 1u);
}

TEST(TextParserTest, AttributesOfEachKind) {
  auto m = Parse(R"(HloModule attrs
%cmp (x: f32[], y: f32[]) -> pred[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %lt = pred[] compare(%x, %y), direction=LT, type=TOTALORDER
}
ENTRY %e {
  %a = f32[8,16] parameter(0)
  %b = f32[16,4] parameter(1)
  %img = f32[1,8,8,3] parameter(2)
  %k = f32[3,3,3,5] parameter(3)
  %idx = s32[2,1] parameter(4)
  %dot = f32[8,4] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,default}
  %conv = f32[1,4,4,5] convolution(%img, %k), window={size=3x3 stride=2x2 pad=1_1x1_1 rhs_dilate=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=1
  %sl = f32[4,8] slice(%a), slice={[0:8:2], [8:16]}
  %pd = f32[10,18] pad(%a, %zero), padding=1_1x0_2
  %zero = f32[] constant(0)
  %g = f32[2,16] gather(%a, %idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
  %ar = f32[8,16] all-reduce(%a), replica_groups={{0,1},{2,3}}, channel_id=3, to_apply=%sum, use_global_device_ids=true
  %ag = f32[16,16] all-gather(%a), replica_groups=[2,2]<=[4], dimensions={0}
  %cp = f32[8,16] collective-permute(%a), source_target_pairs={{0,1},{1,0}}
  %cc = f32[8,16] custom-call(%a), custom_call_target="my_target", backend_config={"k": [1, {"x": "}"}]}, api_version=API_VERSION_TYPED_FFI
  %srt = f32[8,16] sort(%a), dimensions={1}, is_stable=true, to_apply=%cmp
  %w = f32[] weird-op(%zero), some_new_attr={a b c}
  ROOT %t = (f32[8,4], f32[1,4,4,5]) tuple(%dot, %conv), control-predecessors={%sl}
}
%sum (p: f32[], q: f32[]) -> f32[] {
  %p = f32[] parameter(0)
  %q = f32[] parameter(1)
  ROOT %s = f32[] add(%p, %q)
}
)");
  ASSERT_TRUE(m);
  const Attributes& dot = Find(*m, "dot")->attrs();
  ASSERT_TRUE(dot.dot);
  EXPECT_EQ(dot.dot->lhs_contracting, (std::vector<int64_t>{1}));
  EXPECT_EQ(dot.operand_precision, (std::vector<std::string>{"highest", "default"}));
  const Attributes& conv = Find(*m, "conv")->attrs();
  ASSERT_EQ(conv.window.size(), 2u);
  EXPECT_EQ(conv.window[1].stride, 2);
  EXPECT_EQ(conv.window[0].pad_high, 1);
  ASSERT_TRUE(conv.conv);
  EXPECT_EQ(conv.conv->input_feature, 3);
  EXPECT_EQ(conv.conv->kernel_output_feature, 3);
  EXPECT_EQ(conv.conv->input_spatial, (std::vector<int64_t>{1, 2}));
  const Attributes& sl = Find(*m, "sl")->attrs();
  ASSERT_EQ(sl.slice.size(), 2u);
  EXPECT_EQ(sl.slice[0], (SliceDim{0, 8, 2}));
  EXPECT_EQ(sl.slice[1], (SliceDim{8, 16, 1}));
  const Attributes& pd = Find(*m, "pd")->attrs();
  ASSERT_EQ(pd.padding.size(), 2u);
  EXPECT_EQ(pd.padding[1], (PaddingDim{0, 2, 0}));
  const Attributes& g = Find(*m, "g")->attrs();
  ASSERT_TRUE(g.gather);
  EXPECT_EQ(g.gather->index_vector_dim, 1);
  EXPECT_EQ(g.gather_slice_sizes, (std::vector<int64_t>{1, 16}));
  const Attributes& ar = Find(*m, "ar")->attrs();
  EXPECT_EQ(ar.replica_groups, (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(ar.channel_id, 3);
  EXPECT_TRUE(ar.use_global_device_ids);
  EXPECT_EQ(Find(*m, "ag")->attrs().replica_groups, (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(Find(*m, "cp")->attrs().source_target_pairs.size(), 2u);
  const Attributes& cc = Find(*m, "cc")->attrs();
  EXPECT_EQ(cc.custom_call_target, "my_target");
  EXPECT_EQ(cc.backend_config, R"({"k": [1, {"x": "}"}]})");
  EXPECT_EQ(cc.api_version, "API_VERSION_TYPED_FFI");
  Instruction* srt = Find(*m, "srt");
  EXPECT_TRUE(srt->attrs().is_stable);
  EXPECT_EQ(srt->to_apply()->root()->attrs().comparison_type, "TOTALORDER");
  EXPECT_EQ(srt->to_apply()->root()->attrs().comparison_direction, ComparisonDirection::kLt);
  Instruction* w = Find(*m, "w");
  EXPECT_EQ(w->opcode(), Opcode::kUnknown);
  EXPECT_EQ(w->opcode_text(), "weird-op");
  ASSERT_EQ(w->attrs().other.size(), 1u);
  EXPECT_EQ(w->attrs().other[0].second, "{a b c}");
  ASSERT_EQ(m->entry()->root()->control_predecessors().size(), 1u);
  // The unknown opcode and attribute survive printing.
  std::string printed = PrintModule(*m);
  EXPECT_NE(printed.find("weird-op(%zero), some_new_attr={a b c}"), std::string::npos) << printed;
}

TEST(TextParserTest, IotaReplicaGroupsWithTranspose) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT ag = f32[8] all-gather(a), replica_groups=[2,2]<=[2,2]T(1,0), dimensions={0}
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->entry()->root()->attrs().replica_groups,
            (std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}}));
}

TEST(TextParserTest, WhileConditionalAndAsyncForms) {
  auto m = Parse(R"(HloModule m
cond { p = (s32[]) parameter(0)  g = s32[] get-tuple-element(p), index=0  c = s32[] constant(3)
  ROOT lt = pred[] compare(g, c), direction=LT }
body { p = (s32[]) parameter(0)  g = s32[] get-tuple-element(p), index=0  one = s32[] constant(1)
  n = s32[] add(g, one)  ROOT t = (s32[]) tuple(n) }
yes { p = f32[] parameter(0)  ROOT n = f32[] negate(p) }
no { ROOT p = f32[] parameter(0) }
ENTRY main {
  z = s32[] constant(0)
  init = (s32[]) tuple(z)
  w = (s32[]) while(init), condition=cond, body=body
  b = pred[] constant(true)
  x = f32[] constant(2)
  cnd = f32[] conditional(b, x, x), true_computation=yes, false_computation=no
  start = ((f32[]), f32[], u32[]) all-reduce-start(x), to_apply=yes
  ROOT done = f32[] all-reduce-done(start)
})");
  ASSERT_TRUE(m);
  Instruction* w = Find(*m, "w");
  EXPECT_EQ(w->while_body()->name(), "body");
  EXPECT_EQ(w->while_condition()->name(), "cond");
  Instruction* c = Find(*m, "cnd");
  ASSERT_EQ(c->called_computations().size(), 2u);
  EXPECT_EQ(c->called_computations()[0]->name(), "yes");
  EXPECT_EQ(Find(*m, "start")->opcode(), Opcode::kAllReduceStart);
  // Callees come before callers in module post order; entry last.
  auto order = m->PostOrder();
  EXPECT_EQ(order.back(), m->entry());
}

TEST(TextParserTest, ErrorsNameFileLineAndColumn) {
  EXPECT_EQ(ErrorOf("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] add(a, c)\n}\n"),
            "bad.hlo:4:25: instruction 'b' uses 'c', which computation 'e' does not define");
  EXPECT_NE(ErrorOf("HloModule m\nENTRY e {\n  a = f33[] parameter(0)\n}\n").find("bad.hlo:3:7: unknown element type 'f33'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n").find("never closed"), std::string::npos);
  EXPECT_NE(ErrorOf("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  a = f32[] parameter(1)\n}").find("defined twice"),
            std::string::npos);
  EXPECT_NE(ErrorOf("HloModule m\nENTRY e {\n  ROOT a = f32[] call(), to_apply=nope\n}").find("does not define"),
            std::string::npos);
  EXPECT_NE(ErrorOf("HloModule m\nENTRY e {\n  ROOT a = f32[2] constant({1,2,3})\n}").find("bad.hlo:3:"),
            std::string::npos);
  EXPECT_NE(ErrorOf("   ").find("bad.hlo"), std::string::npos);
  EXPECT_EQ(ErrorOf(""), "bad.hlo: empty input");
  EXPECT_NE(ErrorOf("HloModule m\n").find("no computations"), std::string::npos);
  EXPECT_NE(ErrorOf("HloModule m\nENTRY e {\n  ROOT a = f32[] add(a\n}").find("bad.hlo:"), std::string::npos);
  EXPECT_NE(ErrorOf("HloModule m\nENTRY e {\n  ROOT a = f32[3] pad(a, a), padding=1-1\n}").find("padding"),
            std::string::npos);
  EXPECT_NE(ErrorOf("HloModule m\nENTRY e {\n  ROOT c = f32[1] convolution(a, a), dim_labels=bxf_01io->b01f\n}")
                .find("dim_labels"),
            std::string::npos);
  EXPECT_NE(ErrorOf("HloModule m\nENTRY e {\n  a = f32[2,2] parameter(0)\n"
                    "  ROOT t = f32[2,2] triangular-solve(a, a), transpose_a=SIDEWAYS\n}")
                .find("transpose_a 'SIDEWAYS' is not NO_TRANSPOSE, TRANSPOSE or ADJOINT"),
            std::string::npos);
}

TEST(TextParserTest, ElidedConstantsAreFlaggedNotErrors) {
  auto m = Parse("HloModule m\nENTRY e {\n  ROOT c = f32[2,3] constant({...})\n}\n");
  ASSERT_TRUE(m);
  ASSERT_EQ(ElidedConstants(*m).size(), 1u);
  absl::Status s = CheckNoElidedConstants(*m);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("'%c' (line 3)"), std::string::npos) << s.message();
  FillElidedConstants(*m, ElidedFill::kRandom, 7);
  EXPECT_TRUE(CheckNoElidedConstants(*m).ok());
  const Literal& lit = *m->entry()->root()->attrs().literal;
  EXPECT_EQ(lit.element_count(), 6);
  bool any_nonzero = false;
  for (int i = 0; i < 6; ++i) {
    EXPECT_GE(lit.GetDouble(i), -1.0);
    EXPECT_LT(lit.GetDouble(i), 1.0);
    any_nonzero |= lit.GetDouble(i) != 0;
  }
  EXPECT_TRUE(any_nonzero);
}

TEST(IrTest, ReplaceUsesAndRemoveInstructions) {
  auto m = Parse("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] negate(a)\n"
                 "  c = f32[] abs(a)\n  ROOT d = f32[] add(b, b)\n}\n");
  ASSERT_TRUE(m);
  Computation* e = m->entry();
  Instruction* b = e->Find("b");
  Instruction* c = e->Find("c");
  Instruction* d = e->Find("d");
  EXPECT_FALSE(e->RemoveInstruction(b).ok());  // still used
  b->ReplaceAllUsesWith(c);
  EXPECT_EQ(d->operand(0), c);
  EXPECT_EQ(d->operand(1), c);
  EXPECT_TRUE(b->users().empty());
  ASSERT_EQ(c->users().size(), 1u);
  EXPECT_TRUE(e->RemoveInstruction(b).ok());
  EXPECT_EQ(e->instruction_count(), 3u);
  EXPECT_EQ(e->Find("a")->users().size(), 1u);
  auto order = e->PostOrder();
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order.back(), d);
  d->ReplaceAllUsesWith(c);  // root moves too
  EXPECT_EQ(e->root(), c);
}

}  // namespace
}  // namespace neuron::hlo

namespace neuron::hlo {
namespace {

// Found by the fuzzer: an unsigned constant beyond 2^64 must saturate, not
// hit undefined behaviour in the double-to-integer conversion.
TEST(TextParserRegression, HugeUnsignedConstantSaturates) {
  auto module = ParseText(
      "HloModule m\nENTRY e {\n  ROOT c = u64[2] constant({1e30, inf})\n}\n",
      "huge.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  const Literal& lit = *(*module)->entry()->root()->attrs().literal;
  EXPECT_EQ(static_cast<uint64_t>(lit.GetInt(0)), UINT64_MAX);
  EXPECT_EQ(static_cast<uint64_t>(lit.GetInt(1)), UINT64_MAX);
}

}  // namespace
}  // namespace neuron::hlo
