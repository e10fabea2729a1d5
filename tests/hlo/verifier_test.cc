// Verifier: each check can fail, with the instruction and line named.
#include "gtest/gtest.h"
#include "lib/hlo/shape_inference.h"
#include "lib/hlo/text_parser.h"
#include "lib/hlo/verifier.h"

namespace neuron::hlo {
namespace {

// Parses a module whose ENTRY body is `body` (plus helper computations)
// and returns the verifier's message ("" when it passes).
std::string VerifyBody(const std::string& body) {
  std::string text = R"(HloModule v
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
lt { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=LT }
ENTRY main {
)" + body + "\n}\n";
  auto m = ParseText(text, "v.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return "parse failed";
  absl::Status s = Verify(**m);
  return s.ok() ? "" : std::string(s.message());
}

TEST(VerifierTest, AcceptsWellFormedOps) {
  EXPECT_EQ(VerifyBody(R"(
  p = f32[2,3] parameter(0)
  q = f32[3,4] parameter(1)
  i = s32[] parameter(2)
  d = f32[2,4] dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[5,2,4] broadcast(d), dimensions={1,2}
  t = f32[4,2] transpose(d), dimensions={1,0}
  r = f32[8] reshape(d)
  s = f32[1,2] slice(d), slice={[1:2], [0:4:2]}
  c = f32[2,8] concatenate(d, d), dimensions={1}
  z = f32[] constant(0)
  pd = f32[4,8] pad(d, z), padding=1_1x0_1_1
  red = f32[2] reduce(d, z), dimensions={1}, to_apply=add
  ds = f32[1,2] dynamic-slice(d, i, i), dynamic_slice_sizes={1,2}
  dus = f32[2,4] dynamic-update-slice(d, ds, i, i)
  cmp = pred[2,4] compare(d, dus), direction=GT
  sel = f32[2,4] select(cmp, d, dus)
  cv = bf16[2,4] convert(sel)
  io = s32[3,2] iota(), iota_dimension=1
  rv = f32[2,4] reverse(d), dimensions={0}
  rw = f32[1,2] reduce-window(d, z), window={size=2x2 stride=1x2}, to_apply=add
  srt = f32[2,4] sort(d), dimensions={1}, to_apply=lt
  tup = (f32[2,4], bf16[2,4]) tuple(sel, cv)
  ROOT g = bf16[2,4] get-tuple-element(tup), index=1)"),
            "");
}

TEST(VerifierTest, EachCheckCanFail) {
  struct Case {
    const char* body;
    const char* expected;  // a fragment of the message
  };
  const Case cases[] = {
      {"p = f32[2] parameter(0)\n  ROOT a = f32[3] add(p, p)",
       "instruction '%a' (line 6): declared shape f32[3] does not match the inferred shape f32[2]"},
      {"p = f32[2] parameter(0)\n  q = f32[3] parameter(1)\n  ROOT a = f32[2] add(p, q)", "same shape"},
      {"p = f32[2] parameter(0)\n  ROOT a = f32[2] add(p)", "add takes 2 operands, got 1"},
      {"p = s32[2] parameter(0)\n  ROOT a = s32[2] exponential(p)", "floating-point"},
      {"p = f32[2] parameter(0)\n  ROOT a = pred[2] compare(p, p)", "compare has no direction"},
      {"p = f32[2] parameter(0)\n  ROOT a = f32[2] select(p, p, p)", "predicate must be pred"},
      {"p = f32[2] parameter(0)\n  ROOT a = f32[3,4] broadcast(p), dimensions={1}", "broadcast maps operand dimension 0"},
      {"p = f32[2,3] parameter(0)\n  ROOT a = f32[7] reshape(p)", "element count"},
      {"p = f32[2,3] parameter(0)\n  ROOT a = f32[3,2] transpose(p), dimensions={0,0}", "repeats dimension"},
      {"p = f32[4] parameter(0)\n  ROOT a = f32[2] slice(p), slice={[2:5]}", "slice range [2:5:1] is invalid"},
      {"p = f32[2,3] parameter(0)\n  q = f32[3,3] parameter(1)\n  ROOT a = f32[5,3] concatenate(p, q), dimensions={1}",
       "differ outside dimension 1"},
      {"p = f32[2] parameter(0)\n  z = s32[] constant(0)\n  ROOT a = f32[4] pad(p, z), padding=1_1", "pad value"},
      {"p = f32[2,3] parameter(0)\n  q = f32[4,5] parameter(1)\n  ROOT d = f32[2,5] dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
       "contracting dimension sizes differ"},
      {"p = f32[1,5,5,2] parameter(0)\n  k = f32[3,3,4,8] parameter(1)\n  ROOT c = f32[1,3,3,8] convolution(p, k), window={size=3x3}, dim_labels=b01f_01io->b01f",
       "input feature size 2"},
      {"p = f32[2,3] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[2] reduce(p, z), dimensions={1}, to_apply=lt",
       "to_apply computation returns pred[], the accumulator is f32[]"},
      {"p = f32[2,3] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[2] reduce(p, z), dimensions={5}, to_apply=add",
       "out of range"},
      {"p = f32[4] parameter(0)\n  i = f32[] parameter(1)\n  ROOT d = f32[2] dynamic-slice(p, i), dynamic_slice_sizes={2}",
       "start index 0 must be an integer scalar"},
      {"p = (f32[], s32[]) parameter(0)\n  ROOT g = f32[] get-tuple-element(p), index=2", "tuple index 2 out of range"},
      {"ROOT i = f32[4] iota(), iota_dimension=1", "iota_dimension 1 out of range"},
      {"p = f32[] parameter(0)\n  q = f32[] parameter(0)\n  ROOT a = f32[] add(p, q)", "parameter number 0 is used twice"},
      {"p = f32[] parameter(1)\n  ROOT a = f32[] negate(p)", "leaves a gap"},
      {"p = f32[] parameter(0)\n  ROOT w = f32[] while(p), condition=add, body=add", "body computation 'add' takes 2"},
      {"p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=add", "called computation 'add' takes 2 parameters"},
      {"p = f32[2] parameter(0)\n  z = f32[] constant(0)\n  ROOT rw = f32[2] reduce-window(p, z), window={size=2x2}, to_apply=add",
       "window has 2 dimensions"},
      {"p = f32[3] parameter(0)\n  ROOT s = f32[3] sort(p), dimensions={0}, to_apply=add", "comparator must return pred[]"},
      // 2^62 elements of 4 bytes: the bytes wrap 64 bits to 0.
      {"p = f32[4611686018427387904] parameter(0)\n  ROOT n = f32[4611686018427387904] negate(p)",
       "too many elements"},
      {"p = (f32[], f64[2305843009213693952]) parameter(0)\n  ROOT g = f32[] get-tuple-element(p), index=0",
       "too many elements"},
  };
  for (const Case& c : cases) {
    std::string message = VerifyBody(c.body);
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << "body:\n" << c.body << "\nmessage: " << message << "\nexpected: " << c.expected;
    EXPECT_NE(message.find("v: computation 'main', instruction '%"), std::string::npos) << message;
  }
}

TEST(VerifierTest, CyclesAreReported) {
  auto m = ParseText("HloModule c\nENTRY e {\n  a = f32[] negate(b)\n  ROOT b = f32[] negate(a)\n}\n", "c.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  absl::Status s = Verify(**m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("cycle"), std::string::npos) << s.message();
}

TEST(ShapeInferenceTest, GatherAndConvolutionShapes) {
  auto m = ParseText(R"(HloModule g
ENTRY e {
  op = f32[5,7,9] parameter(0)
  idx = s32[4,2] parameter(1)
  g = f32[4,7,3] gather(op, idx), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0,2}, index_vector_dim=1, slice_sizes={1,7,3}
  img = f32[2,3,10,10] parameter(2)
  k = f32[6,3,3,3] parameter(3)
  ROOT c = f32[2,6,5,5] convolution(img, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})",
                     "g.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto g = InferShape(*(*m)->entry()->Find("g"));
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ((*g)->ToString(), "f32[4,7,3]");
  auto c = InferShape(*(*m)->entry()->root());
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ((*c)->ToString(), "f32[2,6,5,5]");
  EXPECT_TRUE(Verify(**m).ok());
}

}  // namespace
}  // namespace neuron::hlo
