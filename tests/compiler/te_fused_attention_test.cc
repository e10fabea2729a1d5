// TransformerEngine's fused attention custom-calls compiled and run: the
// forward against softmax attention computed here in double (masks, GQA,
// bias, layouts, sliding windows), the backward against central
// differences of that definition; configurations that are not modelled are
// refused by name.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "lib/compiler/diagnostics.h"
#include "lib/compiler/passes/mlir_attribute_dict.h"
#include "tests/compiler/lowered_run.h"
#include "tests/compiler/test_util.h"

namespace neuron::compiler {
namespace {

using kernels::Tensor;
using testing::CompileLoweredAndRun;
using testing::CompileText;
using testing::F32;
using testing::Values;

// NVTE_QKV_Layout values of the separate forms.
constexpr int kSbhd = 4, kBshd = 9, kBhsd = 25;

struct Case {
  std::string name;
  int layout = kBshd;
  int64_t b = 2, sq = 3, skv = 3, h = 2, hkv = 2, d = 4, dv = 4;
  int mask_type = 0;  // NVTE_Mask_Type
  int bias_type = 0;  // NVTE_Bias_Type: 1 pre-scale, 2 post-scale
  int64_t bias_b = 1, bias_h = 1;
  int64_t left = -1, right = -1;
  std::vector<int32_t> q_lens, kv_lens;  // the padding masks' lengths
  double scale = 0.5;
  std::string type = "f32";  // the custom-call's element type
  bool sink_version = false;  // TE's newer operand list (softmax_offset)
  int softmax_type = 0;       // NVTE_Softmax_Type (with sink_version): 1 off-by-one, 2 learnable
  std::optional<bool> bottom_right_diagonal;  // TE's newer window alignment attribute
  bool softmax_aux = false;  // the max-512 backend's aux: the softmax, not its statistic

  // TE's packed layouts (0-3 on SBHD, 5-8 on BSHD): q, k and v in one
  // operand (3HD, H3D) or k and v in one (2HD, H2D), stacked along PackDim.
  int Base() const { return layout == kBhsd ? kBhsd : layout < 5 ? kSbhd : kBshd; }
  int PackedParts() const {
    if (layout >= 10) return 0;
    int r = layout % 5;
    return r <= 1 ? 3 : r <= 3 ? 2 : 0;
  }
  int64_t PackDim() const { return layout % 5 == 0 || layout % 5 == 2 ? 2 : 3; }
  bool padding() const { return mask_type == 1 || mask_type == 3 || mask_type == 5; }
  std::vector<int64_t> Dims(int64_t s, int64_t heads, int64_t x) const {
    if (Base() == kSbhd) return {s, b, heads, x};
    if (Base() == kBhsd) return {b, heads, s, x};
    return {b, s, heads, x};
  }
  // Offset of (batch, position, head, x) in a q/k/v-shaped buffer.
  int64_t At(int64_t bi, int64_t s, int64_t n, int64_t x, int64_t seq, int64_t heads, int64_t width) const {
    if (Base() == kSbhd) return ((s * b + bi) * heads + n) * width + x;
    if (Base() == kBhsd) return ((bi * heads + n) * seq + s) * width + x;
    return ((bi * seq + s) * heads + n) * width + x;
  }
  int64_t QLen(int64_t bi) const { return padding() ? q_lens[bi] : sq; }
  int64_t KvLen(int64_t bi) const { return padding() ? kv_lens[bi] : skv; }
  // TE's mask: padding, causal (top-left or bottom-right), sliding window.
  bool Allowed(int64_t bi, int64_t i, int64_t j) const {
    int64_t ql = QLen(bi), kl = KvLen(bi);
    if (i >= ql || j >= kl) return false;
    int64_t diag = bottom_right_diagonal.value_or(mask_type == 4 || mask_type == 5) ? kl - ql : 0;
    if (mask_type >= 2 && j > i + diag) return false;
    int64_t rel = j - i - diag;  // right of the diagonal; windows may be huge
    if (left >= 0 && rel < -left) return false;
    if (right >= 0 && rel > right) return false;
    return true;
  }
};

struct Inputs {
  std::vector<double> q, k, v, bias, dout;
  std::vector<double> offset;  // the learnable sink's logit per head
};

struct Forward {
  std::vector<double> out;  // in the layout, dv wide
  std::vector<double> lse;  // [b, h, sq]
  std::vector<bool> has_keys;
  std::vector<double> probs;  // [b, h, sq, skv]
};

Forward Attention(const Case& c, const Inputs& in) {
  Forward f;
  f.out.assign(c.b * c.sq * c.h * c.dv, 0.0);
  f.lse.assign(c.b * c.h * c.sq, 0.0);
  f.has_keys.assign(c.b * c.h * c.sq, false);
  f.probs.assign(c.b * c.h * c.sq * c.skv, 0.0);
  int64_t group = c.h / c.hkv;
  for (int64_t bi = 0; bi < c.b; ++bi) {
    for (int64_t n = 0; n < c.h; ++n) {
      for (int64_t i = 0; i < c.sq; ++i) {
        std::vector<double> logits(c.skv);
        std::vector<int64_t> keys;
        for (int64_t j = 0; j < c.skv; ++j) {
          if (!c.Allowed(bi, i, j)) continue;
          double dot = 0;
          for (int64_t x = 0; x < c.d; ++x) {
            dot += in.q[c.At(bi, i, n, x, c.sq, c.h, c.d)] * in.k[c.At(bi, j, n / group, x, c.skv, c.hkv, c.d)];
          }
          double bias = 0;
          if (c.bias_type) {
            int64_t bb = c.bias_b == 1 ? 0 : bi, bh = c.bias_h == 1 ? 0 : n;
            bias = in.bias[((bb * c.bias_h + bh) * c.sq + i) * c.skv + j];
          }
          logits[j] = c.bias_type == 1 ? c.scale * (dot + bias) : c.scale * dot + bias;
          keys.push_back(j);
        }
        // The sink: one more term in the denominator, attending to nothing.
        std::optional<double> sink;
        if (c.softmax_type == 1) sink = 0.0;
        if (c.softmax_type == 2) sink = in.offset[n];
        if (keys.empty() && !sink) continue;
        double m = sink.value_or(-INFINITY), sum = 0;
        for (int64_t j : keys) m = std::max(m, logits[j]);
        if (sink) sum = std::exp(*sink - m);
        for (int64_t j : keys) sum += std::exp(logits[j] - m);
        int64_t row = (bi * c.h + n) * c.sq + i;
        f.lse[row] = m + std::log(sum);
        f.has_keys[row] = true;
        for (int64_t j : keys) {
          double p = std::exp(logits[j] - f.lse[row]);
          f.probs[row * c.skv + j] = p;
          for (int64_t x = 0; x < c.dv; ++x) {
            f.out[c.At(bi, i, n, x, c.sq, c.h, c.dv)] += p * in.v[c.At(bi, j, n / group, x, c.skv, c.hkv, c.dv)];
          }
        }
      }
    }
  }
  return f;
}

std::string ShapeText(const std::string& type, const std::vector<int64_t>& dims) {
  return absl::StrFormat("%s[%s]", type, absl::StrJoin(dims, ","));
}

std::string Config(const Case& c) {
  std::string text = absl::StrFormat(
      "{attn_heads = %d : i64, bias_batch = %d : i64, bias_heads = %d : i64, bias_type = %d : i64, "
      "deterministic = false, dropout_probability = 0.000000e+00 : f64, input_batch = %d : i64, is_training = true, "
      "kv_max_seqlen = %d : i64, mask_type = %d : i64, max_segments_per_seq = 1 : i64, num_gqa_groups = %d : i64, "
      "q_max_seqlen = %d : i64, qk_head_dim = %d : i64, qkv_layout = %d : i64, scaling_factor = %.17g : f64, "
      "v_head_dim = %d : i64, window_size_left = %d : i64, window_size_right = %d : i64",
      c.h, c.bias_type ? c.bias_b : 0, c.bias_type ? c.bias_h : 0, c.bias_type, c.b, c.skv, c.mask_type, c.hkv, c.sq,
      c.d, c.layout, c.scale, c.dv, c.left, c.right);
  if (c.sink_version) text += absl::StrFormat(", softmax_type = %d : i64", c.softmax_type);
  if (c.bottom_right_diagonal) {
    text += absl::StrFormat(", bottom_right_diagonal = %s", *c.bottom_right_diagonal ? "true" : "false");
  }
  return text + "}";
}

// A module running the forward (and, with `backward`, the backward on its
// results) in the case's type; parameters q, k, v, [bias], q_cu, kv_cu,
// [dout] in f32.
std::string Module(const Case& c, bool backward) {
  const std::string& t = c.type;
  std::vector<int64_t> qd = c.Dims(c.sq, c.h, c.d), kd = c.Dims(c.skv, c.hkv, c.d), vd = c.Dims(c.skv, c.hkv, c.dv);
  std::vector<int64_t> od = c.Dims(c.sq, c.h, c.dv), bd = {c.bias_b, c.bias_h, c.sq, c.skv};
  std::string aux = ShapeText("f32", {c.b, c.h, c.sq, c.softmax_aux ? c.skv : 1});
  std::string s = "HloModule te\nENTRY e {\n";
  int param = 0;
  auto input = [&](const std::string& name, const std::vector<int64_t>& dims) {
    s += absl::StrFormat("  %s.in = %s parameter(%d)\n", name, ShapeText("f32", dims), param++);
    s += absl::StrFormat("  %s = %s convert(%s.in)\n", name, ShapeText(t, dims), name);
  };
  input("q", qd);
  input("k", kd);
  input("v", vd);
  if (c.bias_type) {
    input("bias", bd);
  } else {
    s += absl::StrFormat("  bias = %s[0] constant({})\n", t);
  }
  s += absl::StrFormat("  qcu = s32[%d] parameter(%d)\n  kvcu = s32[%d] parameter(%d)\n", c.b + 1, param, c.b + 1,
                       param + 1);
  param += 2;
  s += "  seed = u32[2] constant({0, 0})\n  none = f32[0] constant({})\n";
  // The operands as TE passes them: packed ones stacked, placeholders empty.
  std::vector<std::string> operand = {"q", "k", "v"};
  std::vector<std::vector<int64_t>> operand_dims = {qd, kd, vd};
  auto with_pack = [&](std::vector<int64_t> dims, int64_t n) {
    dims.insert(dims.begin() + c.PackDim(), n);
    return dims;
  };
  const int parts = c.PackedParts();
  const size_t packed_at = parts == 3 ? 0 : 1;  // the operand that holds them
  if (parts) {
    s += absl::StrFormat("  empty = %s[0] constant({})\n", t);
    std::vector<std::string> stacked;
    for (int i = 3 - parts; i < 3; ++i) {
      s += absl::StrFormat("  %s.w = %s reshape(%s)\n", operand[i], ShapeText(t, with_pack(operand_dims[i], 1)),
                           operand[i]);
      stacked.push_back(operand[i] + ".w");
    }
    std::vector<int64_t> dims = with_pack(kd, parts);
    s += absl::StrFormat("  packed = %s concatenate(%s), dimensions={%d}\n", ShapeText(t, dims),
                         absl::StrJoin(stacked, ", "), c.PackDim());
    for (size_t i = packed_at; i < 3; ++i) operand[i] = "empty", operand_dims[i] = {0};
    operand[packed_at] = "packed";
    operand_dims[packed_at] = dims;
  }
  const std::string qkv = absl::StrJoin(operand, ", ");
  // softmax_offset: [1, h, 1, 1] with a sink softmax, else empty.
  std::string offset = !c.sink_version ? "" : c.softmax_type ? "offset, " : "none, ";
  std::string offset_shape = ShapeText("f32", {1, c.h, 1, 1});
  if (c.softmax_type) s += absl::StrFormat("  offset = %s parameter(%d)\n", offset_shape, param++);
  std::string bias_shape = c.bias_type ? ShapeText(t, bd) : t + "[0]";
  s += absl::StrFormat(
      "  fwd = (%s, %s, u32[2,4], u8[48]) custom-call(%s, bias, %sseed, qcu, kvcu, none, none, none, none, none, "
      "none), custom_call_target=\"te_fused_attn_forward_ffi\", api_version=API_VERSION_TYPED_FFI, backend_config=%s\n",
      ShapeText(t, od), aux, qkv, offset, Config(c));
  s += absl::StrFormat("  o = %s get-tuple-element(fwd), index=0\n  aux = %s get-tuple-element(fwd), index=1\n",
                       ShapeText(t, od), aux);
  s += "  rng = u32[2,4] get-tuple-element(fwd), index=2\n";
  auto widen = [&](const std::string& name, const std::vector<int64_t>& dims) {
    s += absl::StrFormat("  %s.f = %s convert(%s)\n", name, ShapeText("f32", dims), name);
    return ShapeText("f32", dims);
  };
  if (!backward) {
    std::string os = widen("o", od);
    s += absl::StrFormat("  ROOT r = (%s, %s) tuple(o.f, aux)\n}\n", os, aux);
    return s;
  }
  input("do", od);
  s += absl::StrFormat(
      "  bwd = (%s, %s, %s, %s, %su8[16]) custom-call(%s, bias, %saux, rng, o, do, qcu, kvcu, none, none, none, "
      "none, none, none), custom_call_target=\"te_fused_attn_backward_ffi\", api_version=API_VERSION_TYPED_FFI, "
      "backend_config=%s\n",
      ShapeText(t, operand_dims[0]), ShapeText(t, operand_dims[1]), ShapeText(t, operand_dims[2]), bias_shape,
      !c.sink_version ? "" : c.softmax_type ? offset_shape + ", " : "f32[0], ", qkv, offset, Config(c));
  std::vector<std::vector<int64_t>> grads = {qd, kd, vd};
  if (c.bias_type) grads.push_back(bd);
  std::vector<std::string> names, shapes;
  for (size_t i = 0; i < grads.size(); ++i) {
    std::string g = absl::StrFormat("g%d", i);
    bool in_pack = parts && i < 3 && static_cast<int>(i) >= 3 - parts;
    if (!in_pack) {
      s += absl::StrFormat("  %s = %s get-tuple-element(bwd), index=%d\n", g, ShapeText(t, grads[i]), i);
    } else {  // this gradient's slice of the packed one
      std::vector<int64_t> dims = operand_dims[packed_at];
      std::vector<std::string> ranges;
      int64_t part = static_cast<int64_t>(i) - (3 - parts);
      for (size_t d = 0; d < dims.size(); ++d) {
        bool at = static_cast<int64_t>(d) == c.PackDim();
        ranges.push_back(absl::StrFormat("[%d:%d]", at ? part : 0, at ? part + 1 : dims[d]));
      }
      s += absl::StrFormat("  %s.p = %s get-tuple-element(bwd), index=%d\n", g, ShapeText(t, dims), packed_at);
      s += absl::StrFormat("  %s.s = %s slice(%s.p), slice={%s}\n", g, ShapeText(t, with_pack(grads[i], 1)), g,
                           absl::StrJoin(ranges, ", "));
      s += absl::StrFormat("  %s = %s reshape(%s.s)\n", g, ShapeText(t, grads[i]), g);
    }
    shapes.push_back(widen(g, grads[i]));
    names.push_back(g + ".f");
  }
  if (c.softmax_type == 2) {
    s += absl::StrFormat("  doffset = %s get-tuple-element(bwd), index=4\n", offset_shape);
    shapes.push_back(offset_shape);
    names.push_back("doffset");
  }
  s += absl::StrFormat("  ROOT r = (%s) tuple(%s)\n}\n", absl::StrJoin(shapes, ", "), absl::StrJoin(names, ", "));
  return s;
}

Inputs RandomInputs(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  auto fill = [&](int64_t n) {
    std::vector<double> v(n);
    for (double& x : v) x = u(rng);
    return v;
  };
  Inputs in;
  in.q = fill(c.b * c.sq * c.h * c.d);
  in.k = fill(c.b * c.skv * c.hkv * c.d);
  in.v = fill(c.b * c.skv * c.hkv * c.dv);
  in.bias = fill(c.bias_b * c.bias_h * c.sq * c.skv);
  in.dout = fill(c.b * c.sq * c.h * c.dv);
  in.offset = fill(c.h);
  return in;
}

Tensor FromDoubles(const std::vector<int64_t>& dims, const std::vector<double>& v) {
  return F32(dims, std::vector<float>(v.begin(), v.end()));
}

Tensor CuSeqlens(const Case& c, const std::vector<int32_t>& lens) {
  std::vector<int32_t> cu = {0};
  for (int64_t bi = 0; bi < c.b; ++bi) cu.push_back(cu.back() + (lens.empty() ? 0 : lens[bi]));
  Tensor t(hlo::ElementType::kS32, {c.b + 1});
  std::memcpy(t.data(), cu.data(), cu.size() * sizeof(int32_t));
  return t;
}

std::vector<Tensor> Arguments(const Case& c, const Inputs& in, bool backward) {
  std::vector<Tensor> args = {FromDoubles(c.Dims(c.sq, c.h, c.d), in.q), FromDoubles(c.Dims(c.skv, c.hkv, c.d), in.k),
                              FromDoubles(c.Dims(c.skv, c.hkv, c.dv), in.v)};
  if (c.bias_type) args.push_back(FromDoubles({c.bias_b, c.bias_h, c.sq, c.skv}, in.bias));
  args.push_back(CuSeqlens(c, c.q_lens));
  args.push_back(CuSeqlens(c, c.kv_lens));
  if (c.softmax_type) args.push_back(FromDoubles({1, c.h, 1, 1}, in.offset));
  if (backward) args.push_back(FromDoubles(c.Dims(c.sq, c.h, c.dv), in.dout));
  return args;
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  cases.push_back({.name = "bshd no mask"});
  cases.push_back({.name = "bshd causal gqa", .h = 4, .hkv = 2, .mask_type = 2});
  cases.push_back({.name = "bshd causal bottom-right, more keys", .sq = 2, .skv = 4, .mask_type = 4});
  cases.push_back({.name = "sbhd padding", .layout = kSbhd, .sq = 4, .skv = 3, .mask_type = 1, .q_lens = {3, 4},
                   .kv_lens = {2, 3}});
  cases.push_back({.name = "bhsd padding causal gqa", .layout = kBhsd, .sq = 4, .skv = 4, .h = 4, .hkv = 1,
                   .mask_type = 3, .q_lens = {4, 2}, .kv_lens = {3, 4}});
  cases.push_back({.name = "bshd padding causal bottom-right", .sq = 3, .skv = 4, .mask_type = 5, .q_lens = {2, 3},
                   .kv_lens = {4, 3}});
  cases.push_back({.name = "post-scale bias per head", .bias_type = 2, .bias_b = 1, .bias_h = 2});
  cases.push_back({.name = "pre-scale bias per batch, causal", .mask_type = 2, .bias_type = 1, .bias_b = 2,
                   .bias_h = 1});
  cases.push_back({.name = "sliding window", .sq = 5, .skv = 5, .left = 1, .right = 1});
  cases.push_back({.name = "causal sliding window", .sq = 5, .skv = 5, .mask_type = 2, .left = 2});
  cases.push_back({.name = "v head size differs", .dv = 3, .mask_type = 2});
  cases.push_back({.name = "softmax_offset operand", .h = 4, .hkv = 2, .mask_type = 2, .sink_version = true});
  cases.push_back({.name = "window on the bottom-right diagonal", .sq = 3, .skv = 5, .left = 1, .right = 0,
                   .bottom_right_diagonal = true});
  cases.push_back({.name = "bs3hd packed qkv", .layout = 5, .mask_type = 2});
  cases.push_back({.name = "sbh3d packed qkv, padding", .layout = 1, .mask_type = 1, .q_lens = {3, 2}, .kv_lens = {3, 2}});
  cases.push_back({.name = "bshd_bs2hd packed kv, gqa", .layout = 7, .sq = 2, .skv = 4, .h = 4, .hkv = 2,
                   .mask_type = 4});
  cases.push_back({.name = "sbhd_sbh2d packed kv, bias", .layout = 3, .bias_type = 2, .bias_b = 2, .bias_h = 2});
  cases.push_back({.name = "off-by-one softmax, padding", .mask_type = 1, .q_lens = {3, 1}, .kv_lens = {2, 0},
                   .sink_version = true, .softmax_type = 1});
  cases.push_back({.name = "learnable sink softmax, gqa causal", .h = 4, .hkv = 2, .mask_type = 2,
                   .sink_version = true, .softmax_type = 2});
  cases.push_back({.name = "softmax as the aux", .mask_type = 1, .q_lens = {2, 3}, .kv_lens = {3, 1},
                   .softmax_aux = true});
  return cases;
}

void ExpectNear(const std::vector<float>& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << what << " at " << i;
  }
}

TEST(TeFusedAttentionTest, ForwardMatchesSoftmaxAttention) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    Inputs in = RandomInputs(c, 1);
    auto out = CompileLoweredAndRun(Module(c, /*backward=*/false), Arguments(c, in, false));
    ASSERT_TRUE(out.ok()) << out.status();
    Forward want = Attention(c, in);
    ExpectNear(Values<float>((*out)[0], want.out.size()), want.out, 1e-5, "output");
    if (c.softmax_aux) {
      ExpectNear(Values<float>((*out)[1], want.probs.size()), want.probs, 1e-5, "softmax");
      continue;
    }
    std::vector<float> lse = Values<float>((*out)[1], want.lse.size());
    for (size_t row = 0; row < lse.size(); ++row) {
      if (want.has_keys[row]) {
        EXPECT_NEAR(lse[row], want.lse[row], 1e-5) << "log-sum-exp of row " << row;
      }
    }
  }
}

TEST(TeFusedAttentionTest, Bf16ComputesInF32) {
  Case c{.name = "bf16", .h = 4, .hkv = 2, .mask_type = 2, .type = "bf16"};
  Inputs in = RandomInputs(c, 2);
  auto round = [](std::vector<double>& v) {  // the inputs as bf16 sees them
    for (double& x : v) {
      float f = static_cast<float>(x);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      bits = (bits + 0x7fff + ((bits >> 16) & 1)) & 0xffff0000u;
      std::memcpy(&f, &bits, 4);
      x = f;
    }
  };
  round(in.q), round(in.k), round(in.v);
  auto out = CompileLoweredAndRun(Module(c, false), Arguments(c, in, false));
  ASSERT_TRUE(out.ok()) << out.status();
  Forward want = Attention(c, in);
  ExpectNear(Values<float>((*out)[0], want.out.size()), want.out, 8e-3, "output");  // one bf16 rounding
}

// d/dx of sum(dout * attention(...)) by central differences.
std::vector<double> NumericGradient(const Case& c, Inputs in, std::vector<double> Inputs::*field) {
  std::vector<double>& x = in.*field;
  std::vector<double> grad(x.size());
  const double h = 1e-4;
  auto loss = [&]() {
    Forward f = Attention(c, in);
    double l = 0;
    for (size_t i = 0; i < f.out.size(); ++i) l += f.out[i] * in.dout[i];
    return l;
  };
  for (size_t i = 0; i < x.size(); ++i) {
    double keep = x[i];
    x[i] = keep + h;
    double up = loss();
    x[i] = keep - h;
    double down = loss();
    x[i] = keep;
    grad[i] = (up - down) / (2 * h);
  }
  return grad;
}

TEST(TeFusedAttentionTest, BackwardMatchesFiniteDifferences) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    Inputs in = RandomInputs(c, 3);
    auto out = CompileLoweredAndRun(Module(c, /*backward=*/true), Arguments(c, in, true));
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<std::pair<const char*, std::vector<double> Inputs::*>> grads = {
        {"dq", &Inputs::q}, {"dk", &Inputs::k}, {"dv", &Inputs::v}};
    if (c.bias_type) grads.push_back({"dbias", &Inputs::bias});
    if (c.softmax_type == 2) grads.push_back({"dsoftmax_offset", &Inputs::offset});
    ASSERT_EQ(out->size(), grads.size());
    for (size_t g = 0; g < grads.size(); ++g) {
      std::vector<double> want = NumericGradient(c, in, grads[g].second);
      ExpectNear(Values<float>((*out)[g], want.size()), want, 1e-4, grads[g].first);
    }
  }
}

std::string RefusalOf(const Case& c, const std::string& from, const std::string& to) {
  std::string text = Module(c, false);
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  auto r = CompileText(text, CompileOptions{}, /*emit_neff=*/false);
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  std::string msg(r.status().message());
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;  // one line
  return std::string(ErrorCodeOf(r.status())) + " " + msg;
}

TEST(TeFusedAttentionTest, UnmodelledConfigurationsAreRefusedByName) {
  Case c{.name = "refused"};
  std::string dropout = RefusalOf(c, "dropout_probability = 0.000000e+00", "dropout_probability = 1.000000e-01");
  EXPECT_NE(dropout.find("NCC-E0202"), std::string::npos) << dropout;
  EXPECT_NE(dropout.find("dropout"), std::string::npos) << dropout;
  std::string alibi = RefusalOf(c, "bias_type = 0", "bias_type = 3");
  EXPECT_NE(alibi.find("NCC-E0202"), std::string::npos) << alibi;
  EXPECT_NE(alibi.find("NVTE_ALIBI"), std::string::npos) << alibi;
  std::string mixed = RefusalOf(c, "qkv_layout = 9", "qkv_layout = 16");
  EXPECT_NE(mixed.find("NCC-E0202"), std::string::npos) << mixed;
  EXPECT_NE(mixed.find("NVTE_BSHD_SBHD_SBHD"), std::string::npos) << mixed;
  std::string paged = RefusalOf(c, "qkv_layout = 9", "qkv_layout = 19");
  EXPECT_NE(paged.find("NVTE_Paged_KV_BSHD_BSHD_BSHD"), std::string::npos) << paged;
  std::string ragged = RefusalOf(c, "qkv_layout = 9", "qkv_layout = 14");
  EXPECT_NE(ragged.find("NVTE_THD_THD_THD"), std::string::npos) << ragged;
  std::string segments = RefusalOf(c, "max_segments_per_seq = 1", "max_segments_per_seq = 2");
  EXPECT_NE(segments.find("max_segments_per_seq"), std::string::npos) << segments;
}

TEST(TeFusedAttentionTest, MalformedCallsAreRefusedNotCrashed) {
  Case c{.name = "malformed"};
  std::string heads = RefusalOf(c, "attn_heads = 2", "attn_heads = 3");
  EXPECT_NE(heads.find("NCC-E0205"), std::string::npos) << heads;
  EXPECT_NE(heads.find("attn_heads"), std::string::npos) << heads;
  std::string layout = RefusalOf(c, "qkv_layout = 9", "qkv_layout = 99");
  EXPECT_NE(layout.find("NCC-E0205"), std::string::npos) << layout;
  std::string mask = RefusalOf(c, "mask_type = 0", "mask_type = 7");
  EXPECT_NE(mask.find("NCC-E0205"), std::string::npos) << mask;
  std::string config = RefusalOf(c, "{attn_heads = 2 : i64,", "{attn_heads 2,");
  EXPECT_NE(config.find("NCC-E0205"), std::string::npos) << config;
  std::string operands = RefusalOf(c, "custom-call(q, k, v, bias, seed, qcu, kvcu, none, none, none, none, none, none)",
                                   "custom-call(q, k, v)");
  EXPECT_NE(operands.find("NCC-E0205"), std::string::npos) << operands;
  Case huge_window{.name = "huge window", .left = int64_t{1} << 62, .right = 9223372036854775807};
  Inputs in = RandomInputs(huge_window, 4);
  auto out = CompileLoweredAndRun(Module(huge_window, false), Arguments(huge_window, in, false));
  ASSERT_TRUE(out.ok()) << out.status();  // as wide as unbounded
  Forward want = Attention(huge_window, in);
  ExpectNear(Values<float>((*out)[0], want.out.size()), want.out, 1e-5, "huge window");
  std::string unpacked = RefusalOf(c, "qkv_layout = 9", "qkv_layout = 5");  // q is not [b, s, 3, h, d]
  EXPECT_NE(unpacked.find("packed qkv"), std::string::npos) << unpacked;
  std::string sink = RefusalOf(c, "window_size_right = -1 : i64", "window_size_right = -1 : i64, softmax_type = 3 : i64");
  EXPECT_NE(sink.find("NCC-E0205"), std::string::npos) << sink;
  EXPECT_NE(sink.find("softmax_type"), std::string::npos) << sink;
  std::string no_bias = RefusalOf(c, "bias_type = 0", "bias_type = 2");  // the bias operand is f32[0]
  EXPECT_NE(no_bias.find("NCC-E0205"), std::string::npos) << no_bias;
  Case padded{.name = "padded", .mask_type = 1, .q_lens = {1, 2}, .kv_lens = {3, 3}};
  std::string lengths = RefusalOf(padded, "qcu = s32[3] parameter(3)", "qcu = s32[2] parameter(3)");
  EXPECT_NE(lengths.find("cu_seqlens"), std::string::npos) << lengths;
}

TEST(MlirAttributeDictTest, ReadsTypedValuesAndNamesErrors) {
  auto d = MlirAttributeDict::Parse("{a = 32 : i64, s = -1.500000e+00 : f64, t = true, n = \"x, y\"}");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d->Int("a"), 32);
  EXPECT_EQ(*d->Float("s"), -1.5);
  EXPECT_TRUE(*d->Bool("t"));
  EXPECT_FALSE(d->Int("missing").ok());
  EXPECT_FALSE(d->Int("t").ok());
  EXPECT_EQ(*d->IntOr("missing", 7), 7);
  EXPECT_FALSE(MlirAttributeDict::Parse("a = 1").ok());
  EXPECT_FALSE(MlirAttributeDict::Parse("{a}").ok());
  EXPECT_TRUE(MlirAttributeDict::Parse("{}").ok());
}

}  // namespace
}  // namespace neuron::compiler
