// The program package: manifest JSON, .npy members, proto writer and the
// Serialize -> NEFF -> Deserialize round trip the runtime relies on.
#include <cstring>

#include "gtest/gtest.h"
#include "lib/hlo/printer.h"
#include "lib/hlo/proto_reader.h"
#include "lib/hlo/text_parser.h"
#include "lib/hlo/verifier.h"
#include "lib/program/dtype.h"
#include "lib/program/npy.h"
#include "lib/support/npy.h"
#include "lib/program/package.h"
#include "lib/program/proto_writer.h"

namespace neuron::program {
namespace {

std::unique_ptr<hlo::Module> Parse(std::string_view text) {
  auto m = hlo::ParseText(text, "test");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

// 400 f32 values (1600 bytes, over the inline limit) and a small constant.
std::string ModuleWithConstants() {
  std::string big = "{";
  for (int i = 0; i < 400; ++i) big += (i ? ", " : "") + std::to_string(i * 0.5);
  big += "}";
  return "HloModule consts, replica_count=2\n\nENTRY main {\n"
         "  p = f32[400]{0} parameter(0)\n"
         "  big = f32[400]{0} constant(" + big + ")\n"
         "  small = f32[4]{0} constant({1, 2, 3, 4})\n"
         "  add = f32[400]{0} add(p, big), metadata={op_name=\"jit(f)/add\" source_file=\"m.py\" source_line=7}\n"
         "  ROOT t = (f32[400]{0}, f32[4]{0}) tuple(add, small)\n}\n";
}

TEST(DtypeTest, NamesRoundTripAndNpyDescriptors) {
  for (hlo::ElementType t : {hlo::ElementType::kF32, hlo::ElementType::kBF16, hlo::ElementType::kPred,
                             hlo::ElementType::kS8, hlo::ElementType::kF8E4M3FN, hlo::ElementType::kU64}) {
    std::string name = DtypeName(t);
    ASSERT_FALSE(name.empty());
    EXPECT_EQ(DtypeFromName(name), t);
  }
  EXPECT_EQ(DtypeName(hlo::ElementType::kF32), "float32");
  EXPECT_EQ(NpyDescr(hlo::ElementType::kF32), "<f4");
  EXPECT_EQ(NpyDescr(hlo::ElementType::kBF16), "<u2");
  EXPECT_EQ(NpyDescr(hlo::ElementType::kPred), "|b1");
  EXPECT_EQ(NpyDescr(hlo::ElementType::kS64), "<i8");
  EXPECT_FALSE(DtypeFromName("float31").has_value());
}

TEST(NpyTest, HeaderIsAlignedAndParsesBack) {
  for (size_t align : {size_t{64}, size_t{4096}}) {
    std::string h = npy::Header("<f4", {2, 3}, align);
    EXPECT_EQ(h.size() % align, 0u);
    EXPECT_EQ(h.back(), '\n');
    std::string file = h + std::string(24, '\0');
    auto a = ParseNpy(file);
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(a->descr, "<f4");
    EXPECT_EQ(a->dims, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(a->data.size(), 24u);
    EXPECT_EQ(a->data.data(), file.data() + h.size());
  }
  auto scalar = ParseNpy(npy::Header("<i4", {}) + std::string(4, '\0'));
  ASSERT_TRUE(scalar.ok());
  EXPECT_TRUE(scalar->dims.empty());
  auto one = ParseNpy(npy::Header("<i4", {5}) + std::string(20, '\0'));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->dims, std::vector<int64_t>{5});
}

TEST(NpyTest, BadFilesAreRefused) {
  EXPECT_FALSE(ParseNpy("").ok());
  EXPECT_FALSE(ParseNpy("hello world, not npy").ok());
  std::string good = npy::Header("<f4", {4}) + std::string(16, '\0');
  EXPECT_FALSE(ParseNpy(good.substr(0, good.size() - 1)).ok());  // short data
  EXPECT_FALSE(ParseNpy(good.substr(0, 20)).ok());                // short header
}

TEST(ManifestTest, JsonRoundTrip) {
  Manifest m;
  m.compiler_version = "9.9";
  m.name = "net";
  m.target = "trn2";
  m.lnc = 2;
  m.optlevel = 3;
  m.auto_cast = "matmult";
  m.options = {"--target=trn2", "-O3"};
  m.replica_count = 4;
  m.inputs.push_back({"x", 0, 0, {}, hlo::ElementType::kBF16, {2, 3}, 12});
  m.outputs.push_back({"output0", 0, -1, {}, hlo::ElementType::kF32, {2}, 8});
  m.constants.push_back({"w", "constants/0.npy", hlo::ElementType::kF32, {300}, 1200});
  m.memory = {1200, 12, 8, 64, 1284};
  m.sharding.push_back({"dot.1", 0, 2});
  auto back = ManifestFromJson(ManifestToJson(m));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->target, "trn2");
  EXPECT_EQ(back->lnc, 2);
  EXPECT_EQ(back->optlevel, 3);
  EXPECT_EQ(back->options, m.options);
  EXPECT_EQ(back->replica_count, 4);
  ASSERT_EQ(back->inputs.size(), 1u);
  EXPECT_EQ(back->inputs[0].type, hlo::ElementType::kBF16);
  EXPECT_EQ(back->inputs[0].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(back->inputs[0].parameter, 0);
  ASSERT_EQ(back->constants.size(), 1u);
  EXPECT_EQ(back->constants[0].member, "constants/0.npy");
  EXPECT_EQ(back->memory.scratch_peak, 64);
  ASSERT_EQ(back->sharding.size(), 1u);
  EXPECT_EQ(back->sharding[0].instruction, "dot.1");
}

TEST(ManifestTest, BadJsonNamesTheKey) {
  EXPECT_FALSE(ManifestFromJson("").ok());
  EXPECT_FALSE(ManifestFromJson("[1,2]").ok());
  Manifest m;
  std::string json = ManifestToJson(m);
  auto broken = json;
  broken.replace(broken.find("\"lnc\": 1"), 8, "\"lnc\": \"x\"");
  auto r = ManifestFromJson(broken);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'lnc'"), std::string_view::npos) << r.status();
  auto bad_dtype = ManifestToJson([] {
    Manifest x;
    x.inputs.push_back({"x", 0, 0, {}, hlo::ElementType::kF32, {1}, 4});
    return x;
  }());
  bad_dtype.replace(bad_dtype.find("float32"), 7, "float99");
  r = ManifestFromJson(bad_dtype);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("float99"), std::string_view::npos);
}

TEST(ProtoWriterTest, ReaderReadsBackWhatTheWriterWrote) {
  auto m = Parse(ModuleWithConstants());
  ASSERT_TRUE(m);
  auto bytes = WriteModuleProto(*m);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto back = hlo::ParseProto(*bytes, "program.pb");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(hlo::Verify(**back).ok());
  EXPECT_EQ((*back)->config().replica_count, 2);
  hlo::PrintOptions no_md;
  EXPECT_EQ(hlo::PrintModule(**back), hlo::PrintModule(*m));
}

// The NEFF carries the program as a proto: every attribute a kernel reads
// must survive it (cholesky's lower was lost, so lower=true ran as upper).
TEST(ProtoWriterTest, LinearAlgebraOptionsSurviveTheProto) {
  auto m = Parse(R"(HloModule la
ENTRY main {
  a = f32[2,3,3]{2,1,0} parameter(0)
  b = f32[2,3,4]{2,1,0} parameter(1)
  l = f32[2,3,3]{2,1,0} cholesky(a), lower=true
  u = f32[2,3,3]{2,1,0} cholesky(a), lower=false
  x = f32[2,3,4]{2,1,0} triangular-solve(l, b), left_side=true, lower=true, unit_diagonal=true, transpose_a=TRANSPOSE
  y = f32[2,3,4]{2,1,0} triangular-solve(u, b), left_side=true, lower=false, unit_diagonal=false, transpose_a=ADJOINT
  ROOT t = (f32[2,3,3]{2,1,0}, f32[2,3,3]{2,1,0}, f32[2,3,4]{2,1,0}, f32[2,3,4]{2,1,0}) tuple(l, u, x, y)
}
)");
  ASSERT_TRUE(m);
  auto bytes = WriteModuleProto(*m);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto back = hlo::ParseProto(*bytes, "program.pb");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(hlo::PrintModule(**back), hlo::PrintModule(*m));
  const hlo::Attributes& l = (*back)->entry()->Find("l")->attrs();
  EXPECT_TRUE(l.lower);
  const hlo::Attributes& x = (*back)->entry()->Find("x")->attrs();
  EXPECT_TRUE(x.left_side && x.lower && x.unit_diagonal);
  EXPECT_EQ(x.transpose_a, "TRANSPOSE");
  EXPECT_EQ((*back)->entry()->Find("y")->attrs().transpose_a, "ADJOINT");
}

// ragged-dot's dimension numbers travel in XLA's ragged_dot_dimension_numbers
// (field 90), the dot's inside it.
TEST(ProtoWriterTest, RaggedDotDimensionsSurviveTheProto) {
  auto m = Parse(R"(HloModule rd
ENTRY main {
  a = f32[2,5,3]{2,1,0} parameter(0)
  b = f32[3,3,4]{2,1,0} parameter(1)
  g = s64[2,3]{1,0} parameter(2)
  ROOT r = f32[2,5,4]{2,1,0} ragged-dot(a, b, g), lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={1}, rhs_group_dims={0}
}
)");
  ASSERT_TRUE(m);
  auto bytes = WriteModuleProto(*m);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto back = hlo::ParseProto(*bytes, "program.pb");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(hlo::PrintModule(**back), hlo::PrintModule(*m));
  const hlo::DotDims& d = *(*back)->entry()->root()->attrs().dot;
  EXPECT_EQ(d.lhs_contracting, std::vector<int64_t>{2});
  EXPECT_EQ(d.lhs_ragged, std::vector<int64_t>{1});
  EXPECT_EQ(d.rhs_group, std::vector<int64_t>{0});
}

TEST(PackageTest, SerializeNeffDeserializeKeepsConstantsZeroCopy) {
  auto m = Parse(ModuleWithConstants());
  ASSERT_TRUE(m);
  for (bool fast : {false, true}) {
    SerializeInput in;
    in.module = m.get();
    in.manifest.name = "consts";
    in.manifest.target = "inf2";
    in.input_hlo_text = "HloModule consts";
    in.passes_json = "[]";
    in.page_align_constants = fast;
    std::deque<std::string> storage;
    auto members = Serialize(in, &storage);
    ASSERT_TRUE(members.ok()) << members.status();
    neff::WriteOptions wo;
    wo.fast_loading = fast;
    auto file = neff::Write(*members, wo);
    ASSERT_TRUE(file.ok()) << file.status();
    auto neff_package = neff::Read(*file, neff::ReadOptions{});
    ASSERT_TRUE(neff_package.ok()) << neff_package.status();
    for (const char* name : {"neff.json", "program.pb", "debug/hlo.txt", "debug/source_map.json",
                             "compile/passes.json", "constants/0.npy"}) {
      EXPECT_TRUE(neff_package->Find(name)) << name;
    }
    auto pkg = Deserialize(*neff_package);
    ASSERT_TRUE(pkg.ok()) << pkg.status();
    EXPECT_EQ(pkg->manifest.target, "inf2");
    ASSERT_EQ(pkg->manifest.constants.size(), 1u);  // only the big one
    EXPECT_EQ(pkg->manifest.constants[0].name, "big");
    ASSERT_EQ(pkg->constants.size(), 1u);
    const ConstantRef& ref = pkg->constants[0];
    EXPECT_EQ(ref.instruction, "big");
    ASSERT_EQ(ref.bytes.size(), 1600u);
    float v = 0;
    std::memcpy(&v, ref.bytes.data() + 4 * 3, 4);
    EXPECT_EQ(v, 1.5f);
    if (fast) {
      // Uncompressed payload: the view points into the NEFF bytes, page aligned.
      EXPECT_GE(ref.bytes.data(), file->data());
      EXPECT_LT(ref.bytes.data(), file->data() + file->size());
      EXPECT_EQ((ref.bytes.data() - file->data()) % 4096, 0);
    }
    hlo::Instruction* big = pkg->module->entry()->Find("big");
    ASSERT_TRUE(big);
    EXPECT_EQ(big->opcode(), hlo::Opcode::kConstant);
    ASSERT_TRUE(big->attrs().literal);
    EXPECT_TRUE(big->attrs().literal->elided());
    hlo::Instruction* small = pkg->module->entry()->Find("small");
    ASSERT_TRUE(small && small->attrs().literal);
    EXPECT_FALSE(small->attrs().literal->elided());
    EXPECT_EQ(small->attrs().literal->GetDouble(2), 3.0);
    EXPECT_EQ(pkg->module->entry()->Find("add")->operand(1), big);
    EXPECT_EQ(pkg->module->config().replica_count, 2);
    std::string_view map = neff_package->Find("debug/source_map.json")->data;
    EXPECT_NE(map.find("m.py"), std::string_view::npos);
  }
}

TEST(PackageTest, MissingOrDamagedMembersAreReported) {
  auto m = Parse(ModuleWithConstants());
  SerializeInput in;
  in.module = m.get();
  std::deque<std::string> storage;
  auto members = Serialize(in, &storage);
  ASSERT_TRUE(members.ok());
  for (const char* drop : {"neff.json", "program.pb", "constants/0.npy"}) {
    std::vector<neff::Member> kept;
    for (const auto& mem : *members) {
      if (mem.name != drop) kept.push_back(mem);
    }
    auto file = neff::Write(kept, neff::WriteOptions{});
    ASSERT_TRUE(file.ok());
    auto np = neff::Read(*file, neff::ReadOptions{});
    ASSERT_TRUE(np.ok());
    auto pkg = Deserialize(*np);
    ASSERT_FALSE(pkg.ok()) << drop;
    EXPECT_NE(pkg.status().message().find(drop), std::string_view::npos) << pkg.status();
  }
  // A program member that is not a proto.
  std::vector<neff::Member> bad = *members;
  for (auto& mem : bad) {
    if (mem.name == "program.pb") mem.data = "\xff\xff\xff garbage";
  }
  auto file = neff::Write(bad, neff::WriteOptions{});
  auto np = neff::Read(*file, neff::ReadOptions{});
  ASSERT_TRUE(np.ok());
  EXPECT_FALSE(Deserialize(*np).ok());
}

}  // namespace
}  // namespace neuron::program
