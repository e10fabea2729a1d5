// Binary protos: built here with the generated classes, bare and wrapped.
#include "gtest/gtest.h"
#include "lib/hlo/load.h"
#include "lib/hlo/proto/hlo.pb.h"
#include "lib/hlo/verifier.h"

namespace neuron::hlo {
namespace {

constexpr int64_t kComp = int64_t{3} << 32;  // XLA ids: (computation << 32) | local

xla::HloModuleProto MakeModule() {
  xla::HloModuleProto m;
  m.set_name("proto_mod");
  m.set_entry_computation_name("main");
  m.set_entry_computation_id(3);
  xla::HloComputationProto* c = m.add_computations();
  c->set_name("main");
  c->set_id(3);
  c->set_root_id(kComp + 3);
  auto shape = [](xla::ShapeProto* s, int type, std::vector<int64_t> dims) {
    s->set_element_type(type);
    for (int64_t d : dims) s->add_dimensions(d);
    s->mutable_layout();
    for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) s->mutable_layout()->add_minor_to_major(i);
  };
  // Listed root-first on purpose: operands are resolved by id, not position.
  xla::HloInstructionProto* add = c->add_instructions();
  add->set_name("sum");
  add->set_opcode("add");
  add->set_id(kComp + 3);
  shape(add->mutable_shape(), 11, {2, 2});
  add->add_operand_ids(kComp + 1);
  add->add_operand_ids(kComp + 2);
  add->mutable_metadata()->set_op_name("jit(f)/add");
  xla::HloInstructionProto* p = c->add_instructions();
  p->set_name("x");
  p->set_opcode("parameter");
  p->set_id(kComp + 1);
  shape(p->mutable_shape(), 11, {2, 2});
  xla::HloInstructionProto* k = c->add_instructions();
  k->set_name("k");
  k->set_opcode("constant");
  k->set_id(kComp + 2);
  shape(k->mutable_shape(), 11, {2, 2});
  // Column-major literal: elements stored in the literal's own layout.
  shape(k->mutable_literal()->mutable_shape(), 11, {2, 2});
  k->mutable_literal()->mutable_shape()->mutable_layout()->clear_minor_to_major();
  k->mutable_literal()->mutable_shape()->mutable_layout()->add_minor_to_major(0);
  k->mutable_literal()->mutable_shape()->mutable_layout()->add_minor_to_major(1);
  for (float v : {1.f, 3.f, 2.f, 4.f}) k->mutable_literal()->add_f32s(v);
  return m;
}

void ExpectModule(const Module& m) {
  EXPECT_EQ(m.name(), "proto_mod");
  ASSERT_NE(m.entry(), nullptr);
  Instruction* root = m.entry()->root();
  EXPECT_EQ(root->name(), "sum");
  EXPECT_EQ(root->id(), kComp + 3);
  ASSERT_EQ(root->operand_count(), 2u);
  EXPECT_EQ(root->operand(0)->name(), "x");
  EXPECT_EQ(root->attrs().metadata.op_name, "jit(f)/add");
  const Literal& lit = *root->operand(1)->attrs().literal;
  EXPECT_EQ(lit.ToString(), "{{1, 2}, {3, 4}}");
  EXPECT_TRUE(Verify(m).ok()) << Verify(m).message();
}

TEST(ProtoReaderTest, BareModule) {
  std::string bytes = MakeModule().SerializeAsString();
  EXPECT_FALSE(LooksLikeText(bytes));
  auto m = LoadModule(bytes, "bare.pb");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ExpectModule(**m);
}

TEST(ProtoReaderTest, HloProtoWrapperAndConfigWrapper) {
  xla::HloProto wrapper;
  *wrapper.mutable_hlo_module() = MakeModule();
  auto m = LoadModule(wrapper.SerializeAsString(), "wrapped.hlo.pb");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ExpectModule(**m);
  EXPECT_FALSE((*m)->config().replica_count_given);

  xla::HloModuleProtoWithConfig with_config;
  *with_config.mutable_hlo_module() = MakeModule();
  with_config.mutable_config()->set_replica_count(4);
  auto c = LoadModule(with_config.SerializeAsString(), "config.pb");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ExpectModule(**c);
  EXPECT_EQ((*c)->config().replica_count, 4);
}

TEST(ProtoReaderTest, BadReferencesAreClearErrors) {
  xla::HloModuleProto m = MakeModule();
  m.mutable_computations(0)->mutable_instructions(0)->set_operand_ids(1, 999);
  auto r = LoadModule(m.SerializeAsString(), "bad.pb");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(std::string(r.status().message()),
            "bad.pb: computation 'main', instruction '%sum': operand id 999 is not in the computation");

  xla::HloModuleProto short_literal = MakeModule();
  short_literal.mutable_computations(0)->mutable_instructions(2)->mutable_literal()->clear_f32s();
  r = LoadModule(short_literal.SerializeAsString(), "lit.pb");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("literal has 0 values"), std::string::npos);

  xla::HloModuleProto bad_type = MakeModule();
  bad_type.mutable_computations(0)->mutable_instructions(1)->mutable_shape()->set_element_type(77);
  r = LoadModule(bad_type.SerializeAsString(), "type.pb");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("unknown element type number 77"), std::string::npos);

  // f32[2^62]: 2^64 bytes, which wraps to 0 in 64 bits.
  xla::HloModuleProto huge = MakeModule();
  huge.mutable_computations(0)->mutable_instructions(1)->mutable_shape()->set_dimensions(0, int64_t{1} << 62);
  huge.mutable_computations(0)->mutable_instructions(1)->mutable_shape()->set_dimensions(1, 1);
  r = LoadModule(huge.SerializeAsString(), "huge.pb");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("too many elements"), std::string::npos)
      << r.status().message();

  r = LoadModule(std::string("\x0a\x05hello", 7), "junk.pb");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("junk.pb:"), std::string::npos);
}

TEST(ProtoReaderTest, UnknownOpcodeIsKeptByName) {
  xla::HloModuleProto m = MakeModule();
  m.mutable_computations(0)->mutable_instructions(0)->set_opcode("brand-new-op");
  auto r = LoadModule(m.SerializeAsString(), "new.pb");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->entry()->root()->opcode(), Opcode::kUnknown);
  EXPECT_EQ((*r)->entry()->root()->opcode_text(), "brand-new-op");
}

// XLA keeps cholesky's and triangular-solve's options in messages of their
// own (cholesky_options, triangular_solve_options), not as plain fields.
TEST(ProtoReaderTest, LinearAlgebraOptionsAreRead) {
  xla::HloModuleProto m = MakeModule();
  xla::HloInstructionProto* root = m.mutable_computations(0)->mutable_instructions(0);
  root->set_opcode("cholesky");
  root->mutable_operand_ids()->RemoveLast();
  root->mutable_cholesky_options()->set_lower(true);
  auto r = LoadModule(m.SerializeAsString(), "chol.pb");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE((*r)->entry()->root()->attrs().lower);

  root->set_opcode("triangular-solve");
  root->add_operand_ids(kComp + 2);
  xla::TriangularSolveOptions* o = root->mutable_triangular_solve_options();
  o->set_left_side(true);
  o->set_unit_diagonal(true);
  o->set_transpose_a(3);  // ADJOINT
  r = LoadModule(m.SerializeAsString(), "solve.pb");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Attributes& a = (*r)->entry()->root()->attrs();
  EXPECT_TRUE(a.left_side && a.unit_diagonal);
  EXPECT_FALSE(a.lower);
  EXPECT_EQ(a.transpose_a, "ADJOINT");
}

}  // namespace
}  // namespace neuron::hlo
