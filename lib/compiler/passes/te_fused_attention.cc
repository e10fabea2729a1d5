// TransformerEngine's fused attention (transformer_engine/jax/csrc/extensions/
// attention.cpp, cpp_extensions/attention.py in NVIDIA/TransformerEngine),
// lowered to plain HLO:
//   - te_fused_attn_forward_ffi(q, k, v, bias, [softmax_offset,] seed,
//     q_cu_seqlens, kv_cu_seqlens, q_seq_offsets, k_seq_offsets, ...) ->
//     (output, softmax_aux, rng_state, workspace):
//     O = softmax(L) V with the logits L = scale Q K^T (+ bias before or
//     after the scale), masked. softmax_aux is cuDNN's softmax statistic for
//     the arbitrary-length backend, f32 [b, h, sq, 1]: the log-sum-exp of
//     each row of L, which the backward uses to rebuild softmax(L); an aux
//     of [b, h, sq, skv] (the older max-512 backend) is the softmax itself.
//     rng_state and workspace are zeros.
//   - te_fused_attn_backward_ffi(q, k, v, bias, [softmax_offset,]
//     softmax_aux, rng_state, output, doutput, q_cu_seqlens, kv_cu_seqlens,
//     ...) -> (dq, dk, dv, dbias, [dsoftmax_offset,] workspace):
//     P rebuilt from the aux, dV = P^T dO, dP = dO V^T, D = rowsum(dO * O),
//     dL = P (dP - D), dQ = scale dL K, dK = scale dL^T Q, dbias = dL
//     (post-scale) or scale dL (pre-scale), summed over its broadcast
//     dimensions. The operand with softmax_offset comes with the
//     softmax_type attribute (TE's sink-attention versions); before them it
//     is absent.
// Sink softmax (softmax_type 1, off-by-one: a logit 0; 2, learnable: the
// logit softmax_offset[h]) adds exp(sink) to each row's denominator; the
// sink attends to no value, so dsoftmax_offset[h] = -sum p_sink D.
// GQA: K and V have num_gqa_groups heads, each shared by attn_heads /
// num_gqa_groups consecutive query heads; their gradients sum over the group.
// Masks (NVTE_Mask_Type): 0 none, 1 padding, 2 causal, 3 padding + causal,
// 4 causal bottom-right, 5 padding + causal bottom-right. Padding takes each
// sequence's length from the cu_seqlens (b + 1 cumulative offsets); rows
// with no key left give zeros. Sliding windows keep keys j with
// i - left <= j - diag <= i + right (-1: unbounded), diag = kv_len - q_len
// for the bottom-right masks (or bottom_right_diagonal), else 0; causal
// masks bound the right side at 0.
// Layouts (NVTE_QKV_Layout): SBHD, BSHD and BHSD with q, k and v separate
// (4, 9, 25), or packed as TE's JAX extension passes them: all three in q's
// operand (0 SB3HD, 1 SBH3D, 5 BS3HD, 6 BSH3D; k and v are placeholders) or
// k and v in k's (2, 3, 7, 8); the backward returns the gradients packed
// the same way. bf16/f16 compute in f32 and round once. Refused by name:
// dropout while training (the device's random stream is not modelled),
// ALiBi, ragged (THD), mixed and paged layouts, several sequences per row
// (max_segments_per_seq), FP8.
#include "lib/compiler/passes/te_fused_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "absl/strings/str_format.h"
#include "lib/compiler/diagnostics.h"
#include "lib/compiler/error_codes.h"
#include "lib/compiler/passes/mlir_attribute_dict.h"

namespace neuron::compiler {
namespace {

using hlo::ElementType;
using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

constexpr char kForwardTarget[] = "te_fused_attn_forward_ffi";
constexpr char kBackwardTarget[] = "te_fused_attn_backward_ffi";

// Where batch, sequence, heads and head size sit in a q, k or v operand
// (once unpacked), and which of them TE packed into one operand along
// `pack` (-1: none): q, k and v in q's operand, or k and v in k's.
struct Layout {
  int64_t batch, seq, head, dim;
  enum Packing { kSeparate, kQkv, kKv } packing = kSeparate;
  int64_t pack = -1;
};

// NVTE_QKV_Layout values this file lowers; nullopt otherwise.
std::optional<Layout> KnownLayout(int64_t layout) {
  constexpr Layout kSbhd{1, 0, 2, 3}, kBshd{0, 1, 2, 3};
  auto packed = [](Layout l, Layout::Packing p, int64_t at) {
    l.packing = p;
    l.pack = at;
    return l;
  };
  switch (layout) {
    case 0: return packed(kSbhd, Layout::kQkv, 2);  // NVTE_SB3HD: [s, b, 3, h, d]
    case 1: return packed(kSbhd, Layout::kQkv, 3);  // NVTE_SBH3D: [s, b, h, 3, d]
    case 2: return packed(kSbhd, Layout::kKv, 2);   // NVTE_SBHD_SB2HD
    case 3: return packed(kSbhd, Layout::kKv, 3);   // NVTE_SBHD_SBH2D
    case 4: return kSbhd;                           // NVTE_SBHD_SBHD_SBHD
    case 5: return packed(kBshd, Layout::kQkv, 2);  // NVTE_BS3HD
    case 6: return packed(kBshd, Layout::kQkv, 3);  // NVTE_BSH3D
    case 7: return packed(kBshd, Layout::kKv, 2);   // NVTE_BSHD_BS2HD
    case 8: return packed(kBshd, Layout::kKv, 3);   // NVTE_BSHD_BSH2D
    case 9: return kBshd;                           // NVTE_BSHD_BSHD_BSHD
    case 25: return Layout{0, 2, 1, 3};             // NVTE_BHSD_BHSD_BHSD
    default: return std::nullopt;
  }
}

// The layouts TE defines that KnownLayout leaves out (ragged, mixed and
// paged), by value; empty for any other value.
std::string_view RefusedLayoutName(int64_t layout) {
  static constexpr std::string_view kNames[] = {
      "NVTE_T3HD",           "NVTE_TH3D",           "NVTE_THD_T2HD",
      "NVTE_THD_TH2D",       "NVTE_THD_THD_THD",    "NVTE_SBHD_BSHD_BSHD",
      "NVTE_BSHD_SBHD_SBHD", "NVTE_THD_BSHD_BSHD",  "NVTE_THD_SBHD_SBHD",
      "NVTE_Paged_KV_BSHD_BSHD_BSHD", "NVTE_Paged_KV_BSHD_SBHD_SBHD", "NVTE_Paged_KV_SBHD_BSHD_BSHD",
      "NVTE_Paged_KV_SBHD_SBHD_SBHD", "NVTE_Paged_KV_THD_BSHD_BSHD",  "NVTE_Paged_KV_THD_SBHD_SBHD"};
  constexpr int64_t kFirst = 10;  // NVTE_T3HD
  if (layout < kFirst || layout >= kFirst + static_cast<int64_t>(std::size(kNames))) return "";
  return kNames[layout - kFirst];
}

constexpr int64_t kMaxSequence = int64_t{1} << 29;

enum SoftmaxType : int64_t { kVanillaSoftmax = 0, kOffByOneSoftmax = 1, kLearnableSoftmax = 2 };

enum BiasType : int64_t { kNoBias = 0, kPreScaleBias = 1, kPostScaleBias = 2, kAlibi = 3 };

struct Config {
  Layout layout;
  int64_t mask_type = 0;
  int64_t bias_type = kNoBias;
  double scale = 1;
  int64_t window_left = -1, window_right = -1;
  std::optional<bool> bottom_right_diagonal;
  bool has_softmax_offset = false;  // TE versions with softmax_type
  int64_t softmax_type = 0;         // NVTE_Softmax_Type
  bool Padding() const { return mask_type == 1 || mask_type == 3 || mask_type == 5; }
  bool Causal() const { return mask_type >= 2; }
  bool BottomRight() const { return bottom_right_diagonal.value_or(mask_type == 4 || mask_type == 5); }
};

// The sizes of one call, read from q, k and v.
struct Sizes {
  int64_t b, sq, skv, heads, kv_heads, d, dv;
  int64_t group() const { return heads / kv_heads; }
};

class TeAttentionLowering {
 public:
  TeAttentionLowering(NeuronLoweringContext& ctx, hlo::Computation* c, Instruction* cc)
      : ctx_(ctx), c_(c), cc_(cc), backward_(cc->attrs().custom_call_target == kBackwardTarget) {}

  absl::StatusOr<Instruction*> Lower() {
    if (absl::Status s = ReadConfig(); !s.ok()) return s;
    if (absl::Status s = Unpack(); !s.ok()) return s;
    if (absl::Status s = ReadSizes(); !s.ok()) return s;
    return backward_ ? Backward() : Forward();
  }

 private:
  // Operand positions after bias, which move by one with softmax_offset.
  size_t At(size_t old_index) const { return old_index + (cfg_.has_softmax_offset ? 1 : 0); }
  size_t QCuSeqlens() const { return At(backward_ ? 8 : 5); }
  size_t KvCuSeqlens() const { return QCuSeqlens() + 1; }

  absl::Status Bad(std::string_view what) {
    return CompileError(kErrBadCustomCall, absl::StrFormat("custom-call '%s': %s", cc_->attrs().custom_call_target, what),
                        cc_);
  }
  absl::Status Refuse(std::string_view what) {
    return CompileError(kErrUnsupportedCustomCall,
                        absl::StrFormat("custom-call '%s': %s", cc_->attrs().custom_call_target, what), cc_);
  }

  absl::Status ReadConfig() {
    absl::StatusOr<MlirAttributeDict> attrs = MlirAttributeDict::Parse(cc_->attrs().backend_config);
    if (!attrs.ok()) return Bad(std::string(attrs.status().message()));
    attrs_ = std::move(*attrs);
    absl::StatusOr<int64_t> layout = attrs_.Int("qkv_layout");
    absl::StatusOr<int64_t> mask = attrs_.Int("mask_type");
    absl::StatusOr<int64_t> bias = attrs_.IntOr("bias_type", kNoBias);
    absl::StatusOr<double> scale = attrs_.Float("scaling_factor");
    absl::StatusOr<double> dropout = attrs_.FloatOr("dropout_probability", 0);
    absl::StatusOr<bool> training = attrs_.BoolOr("is_training", false);
    absl::StatusOr<int64_t> left = attrs_.IntOr("window_size_left", -1);
    absl::StatusOr<int64_t> right = attrs_.IntOr("window_size_right", -1);
    absl::StatusOr<int64_t> softmax_type = attrs_.IntOr("softmax_type", 0);
    absl::StatusOr<int64_t> segments = attrs_.IntOr("max_segments_per_seq", 1);
    for (const absl::Status& s : {layout.status(), mask.status(), bias.status(), scale.status(), dropout.status(),
                                  training.status(), left.status(), right.status(), softmax_type.status(),
                                  segments.status()}) {
      if (!s.ok()) return Bad(std::string(s.message()));
    }
    if (attrs_.Has("bottom_right_diagonal")) {
      absl::StatusOr<bool> br = attrs_.Bool("bottom_right_diagonal");
      if (!br.ok()) return Bad(std::string(br.status().message()));
      cfg_.bottom_right_diagonal = *br;
    }
    std::optional<Layout> l = KnownLayout(*layout);
    if (!l) {
      std::string_view name = RefusedLayoutName(*layout);
      if (name.empty()) return Bad(absl::StrFormat("qkv_layout %d is not an NVTE_QKV_Layout", *layout));
      return Refuse(absl::StrFormat("qkv_layout %d (%s) is not supported: only BSHD, SBHD or BHSD q, k and v, "
                                    "separate or packed, are lowered",
                                    *layout, name));
    }
    cfg_.layout = *l;
    if (*mask < 0 || *mask > 5) return Bad(absl::StrFormat("mask_type %d is not an NVTE_Mask_Type", *mask));
    if (*bias == kAlibi) return Refuse("bias_type 3 (NVTE_ALIBI) is not supported");
    if (*bias < 0 || *bias > kAlibi) return Bad(absl::StrFormat("bias_type %d is not an NVTE_Bias_Type", *bias));
    if (*softmax_type < kVanillaSoftmax || *softmax_type > kLearnableSoftmax) {
      return Bad(absl::StrFormat("softmax_type %d is not an NVTE_Softmax_Type", *softmax_type));
    }
    cfg_.softmax_type = *softmax_type;
    if (*segments != 1) {
      return Refuse(absl::StrFormat("max_segments_per_seq %d (several sequences packed in one row) is not supported",
                                    *segments));
    }
    if (*dropout != 0 && *training) {
      return Refuse(absl::StrFormat("dropout_probability %g with is_training (the device's dropout random stream "
                                    "is not modelled)",
                                    *dropout));
    }
    if (!std::isfinite(*scale)) return Bad("scaling_factor is not finite");
    cfg_.mask_type = *mask;
    cfg_.bias_type = *bias;
    cfg_.scale = *scale;
    cfg_.window_left = *left;
    cfg_.window_right = *right;
    cfg_.has_softmax_offset = attrs_.Has("softmax_type");
    return absl::OkStatus();
  }

  // An attribute that, when given, must equal what the shapes say.
  absl::Status Matches(std::string_view name, int64_t value) {
    if (!attrs_.Has(name)) return absl::OkStatus();
    absl::StatusOr<int64_t> v = attrs_.Int(name);
    if (!v.ok()) return Bad(std::string(v.status().message()));
    if (*v != value) return Bad(absl::StrFormat("backend_config %s = %d, but the operands give %d", name, *v, value));
    return absl::OkStatus();
  }

  absl::Status ReadSizes() {
    size_t needed = backward_ ? At(10) : At(7);
    if (cc_->operand_count() < needed) {
      return Bad(absl::StrFormat("expected at least %d operands, got %d", needed, cc_->operand_count()));
    }
    const Shape& s = cc_->shape();
    size_t results = backward_ ? 4 : 2;
    if (!s.IsTuple() || s.tuple.size() < results) {
      return Bad(absl::StrFormat("expected a tuple of at least %d results", results));
    }
    for (const Shape& r : s.tuple) {
      if (!r.IsArray()) return Bad("a result is not an array");
    }
    const Shape& q = q_->shape();
    const Shape& k = k_->shape();
    const Shape& v = v_->shape();
    if (!q.IsArray() || !k.IsArray() || !v.IsArray() || q.rank() != 4 || k.rank() != 4 || v.rank() != 4) {
      return Bad("q, k and v must be rank-4 arrays");
    }
    if (q.type != k.type || q.type != v.type) return Bad("q, k and v must have one element type");
    if (hlo::IsFloatingPoint(q.type) && hlo::BitWidth(q.type) <= 8) {
      return Refuse("FP8 attention (its scaling factors and amax) is not supported");
    }
    if (q.type != ElementType::kF32 && q.type != ElementType::kBF16 && q.type != ElementType::kF16) {
      return Bad(absl::StrFormat("q has element type %s; expected bf16, f16 or f32", hlo::ElementTypeName(q.type)));
    }
    const Layout& l = cfg_.layout;
    sz_ = {q.dims[l.batch], q.dims[l.seq], k.dims[l.seq], q.dims[l.head], k.dims[l.head], q.dims[l.dim], v.dims[l.dim]};
    if (k.dims[l.batch] != sz_.b || v.dims[l.batch] != sz_.b || v.dims[l.seq] != sz_.skv ||
        v.dims[l.head] != sz_.kv_heads || k.dims[l.dim] != sz_.d) {
      return Bad(absl::StrFormat("k %s and v %s do not fit q %s in this layout", k.ToString(false), v.ToString(false),
                                 q.ToString(false)));
    }
    if (sz_.heads == 0 || sz_.kv_heads == 0 || sz_.heads % sz_.kv_heads != 0) {
      return Bad(absl::StrFormat("%d query heads are not a multiple of %d key/value heads", sz_.heads, sz_.kv_heads));
    }
    if (sz_.skv == 0) return Bad("the key sequence is empty");
    // Positions and their differences are s32 in the mask.
    if (sz_.sq > kMaxSequence || sz_.skv > kMaxSequence) {
      return Bad(absl::StrFormat("sequences of %d queries and %d keys are longer than %d", sz_.sq, sz_.skv,
                                 kMaxSequence));
    }
    for (auto [name, value] : {std::pair<std::string_view, int64_t>{"attn_heads", sz_.heads},
                               {"num_gqa_groups", sz_.kv_heads},
                               {"qk_head_dim", sz_.d},
                               {"v_head_dim", sz_.dv},
                               {"q_max_seqlen", sz_.sq},
                               {"kv_max_seqlen", sz_.skv},
                               {"input_batch", sz_.b}}) {
      if (absl::Status m = Matches(name, value); !m.ok()) return m;
    }
    if (cfg_.Padding()) {
      for (size_t i : {QCuSeqlens(), KvCuSeqlens()}) {
        const Shape& cu = cc_->operand(i)->shape();
        if (!cu.IsArray() || !hlo::IsInteger(cu.type) || cu.dims != std::vector<int64_t>{sz_.b + 1}) {
          return Bad(absl::StrFormat("a padding mask needs cu_seqlens of b + 1 = %d integers; operand %d is %s",
                                     sz_.b + 1, i, cu.ToString(false)));
        }
      }
    }
    if (cfg_.softmax_type == kLearnableSoftmax) {
      const Shape& offset = cc_->operand(4)->shape();
      if (!offset.IsArray() || !hlo::IsFloatingPoint(offset.type) ||
          offset.dims != std::vector<int64_t>{1, sz_.heads, 1, 1}) {
        return Bad(absl::StrFormat("softmax_offset %s is not [1, %d, 1, 1]", offset.ToString(false), sz_.heads));
      }
    }
    if (cfg_.bias_type != kNoBias) {
      const Shape& bias = cc_->operand(3)->shape();
      bool fits = bias.IsArray() && bias.rank() == 4 && hlo::IsFloatingPoint(bias.type) &&
                  (bias.dims[0] == 1 || bias.dims[0] == sz_.b) && (bias.dims[1] == 1 || bias.dims[1] == sz_.heads) &&
                  bias.dims[2] == sz_.sq && bias.dims[3] == sz_.skv;
      if (!fits) {
        return Bad(absl::StrFormat("bias %s is not [1 or %d, 1 or %d, %d, %d]", bias.ToString(false), sz_.b, sz_.heads,
                                   sz_.sq, sz_.skv));
      }
    }
    return absl::OkStatus();
  }

  // --- builders ---
  Instruction* Add(Opcode op, Shape s, const std::vector<Instruction*>& operands) {
    return AddInstruction(c_, op, ctx_.names.Get(std::string(hlo::OpcodeName(op))), std::move(s), operands);
  }
  Instruction* Binary(Opcode op, Instruction* a, Instruction* b) {
    return Add(op, Shape::Array(a->shape().type, a->shape().dims), {a, b});
  }
  Instruction* Unary(Opcode op, Instruction* x) { return Add(op, Shape::Array(x->shape().type, x->shape().dims), {x}); }
  Instruction* Convert(Instruction* x, ElementType type) {
    if (x->shape().type == type) return x;
    return Add(Opcode::kConvert, Shape::Array(type, x->shape().dims), {x});
  }
  Instruction* Broadcast(Instruction* x, std::vector<int64_t> dims, std::vector<int64_t> mapping) {
    Instruction* b = Add(Opcode::kBroadcast, Shape::Array(x->shape().type, std::move(dims)), {x});
    b->attrs().dimensions = std::move(mapping);
    b->attrs().has_dimensions = true;
    return b;
  }
  Instruction* Splat(ElementType type, const std::vector<int64_t>& dims, double v) {
    return Broadcast(AddScalarConstant(c_, ctx_.names, type, v), dims, {});
  }
  Instruction* Like(Instruction* x, double v) { return Splat(x->shape().type, x->shape().dims, v); }
  Instruction* Reshape(Instruction* x, std::vector<int64_t> dims) {
    return Add(Opcode::kReshape, Shape::Array(x->shape().type, std::move(dims)), {x});
  }
  Instruction* Transpose(Instruction* x, const std::vector<int64_t>& perm) {
    std::vector<int64_t> dims;
    for (int64_t p : perm) dims.push_back(x->shape().dims[p]);
    Instruction* t = Add(Opcode::kTranspose, Shape::Array(x->shape().type, dims), {x});
    t->attrs().dimensions = perm;
    t->attrs().has_dimensions = true;
    return t;
  }
  Instruction* Compare(Instruction* a, Instruction* b, hlo::ComparisonDirection d) {
    Instruction* cmp = Add(Opcode::kCompare, Shape::Array(ElementType::kPred, a->shape().dims), {a, b});
    cmp->attrs().comparison_direction = d;
    return cmp;
  }
  Instruction* Select(Instruction* pred, Instruction* a, Instruction* b) {
    return Add(Opcode::kSelect, Shape::Array(a->shape().type, a->shape().dims), {pred, a, b});
  }
  // x summed over `dims` (ascending).
  Instruction* Sum(Instruction* x, const std::vector<int64_t>& dims) {
    if (dims.empty()) return x;
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < x->shape().rank(); ++d) {
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept.push_back(x->shape().dims[d]);
    }
    Instruction* zero = AddScalarConstant(c_, ctx_.names, x->shape().type, 0);
    Instruction* r = Add(Opcode::kReduce, Shape::Array(x->shape().type, kept), {x, zero});
    r->attrs().dimensions = dims;
    r->attrs().has_dimensions = true;
    r->AddCalledComputation(ctx_.reducer(Opcode::kAdd, x->shape().type));
    return r;
  }
  Instruction* Dot(Instruction* a, Instruction* b, hlo::DotDims dims) {
    std::vector<int64_t> out;
    for (int64_t d : dims.lhs_batch) out.push_back(a->shape().dims[d]);
    auto free_dims = [&](Instruction* x, const std::vector<int64_t>& batch, const std::vector<int64_t>& contract) {
      for (int64_t d = 0; d < x->shape().rank(); ++d) {
        bool used = std::find(batch.begin(), batch.end(), d) != batch.end() ||
                    std::find(contract.begin(), contract.end(), d) != contract.end();
        if (!used) out.push_back(x->shape().dims[d]);
      }
    };
    free_dims(a, dims.lhs_batch, dims.lhs_contracting);
    free_dims(b, dims.rhs_batch, dims.rhs_contracting);
    Instruction* dot = Add(Opcode::kDot, Shape::Array(ElementType::kF32, out), {a, b});
    dot->attrs().dot = std::move(dims);
    return dot;
  }

  // --- attention pieces, on [b, h, sq, skv] scores ---
  Instruction* Operand(size_t i) { return Convert(cc_->operand(i), ElementType::kF32); }
  Instruction* Wide(Instruction* x) { return Convert(x, ElementType::kF32); }

  // Part `index` of a packed operand: the slice along `pack`, without it.
  Instruction* Part(Instruction* packed, int64_t index) {
    const Shape& ps = packed->shape();
    std::vector<int64_t> sliced = ps.dims, dims;
    sliced[cfg_.layout.pack] = 1;
    Instruction* s = Add(Opcode::kSlice, Shape::Array(ps.type, sliced), {packed});
    for (int64_t d = 0; d < ps.rank(); ++d) {
      s->attrs().slice.push_back({d == cfg_.layout.pack ? index : 0, d == cfg_.layout.pack ? index + 1 : ps.dims[d], 1});
      if (d != cfg_.layout.pack) dims.push_back(ps.dims[d]);
    }
    return Reshape(s, dims);
  }

  // q, k and v from the operands, in the layout's order of dimensions.
  absl::Status Unpack() {
    q_ = cc_->operand(0), k_ = cc_->operand(1), v_ = cc_->operand(2);
    const Layout& l = cfg_.layout;
    if (l.packing == Layout::kSeparate) return absl::OkStatus();
    Instruction* packed = l.packing == Layout::kQkv ? q_ : k_;
    int64_t parts = l.packing == Layout::kQkv ? 3 : 2;
    const Shape& ps = packed->shape();
    if (!ps.IsArray() || ps.rank() != 5 || ps.dims[l.pack] != parts) {
      return Bad(absl::StrFormat("the packed %s operand %s does not have %d parts along dimension %d",
                                 parts == 3 ? "qkv" : "kv", ps.ToString(false), parts, l.pack));
    }
    if (l.packing == Layout::kQkv) q_ = Part(packed, 0);
    k_ = Part(packed, parts - 2);
    v_ = Part(packed, parts - 1);
    return absl::OkStatus();
  }

  // The gradients of q, k and v packed as their operands were: one per
  // operand of q, k and v (nullptr where an operand carries no part).
  std::vector<Instruction*> Pack(Instruction* dq, Instruction* dk, Instruction* dv) {
    const Layout& l = cfg_.layout;
    if (l.packing == Layout::kSeparate) return {dq, dk, dv};
    auto concat = [&](const std::vector<Instruction*>& grads) {
      std::vector<Instruction*> widened;
      for (Instruction* g : grads) {
        std::vector<int64_t> dims = g->shape().dims;
        dims.insert(dims.begin() + l.pack, 1);
        widened.push_back(Reshape(g, dims));
      }
      std::vector<int64_t> dims = widened[0]->shape().dims;
      dims[l.pack] = static_cast<int64_t>(grads.size());
      Instruction* c = Add(Opcode::kConcatenate, Shape::Array(dq->shape().type, dims), widened);
      c->attrs().dimensions = {l.pack};
      c->attrs().has_dimensions = true;
      return c;
    };
    if (l.packing == Layout::kQkv) return {concat({dq, dk, dv}), nullptr, nullptr};
    return {dq, concat({dk, dv}), nullptr};
  }
  std::vector<int64_t> Scores() const { return {sz_.b, sz_.heads, sz_.sq, sz_.skv}; }

  // k or v (in the layout) with each key/value head repeated for its group
  // of query heads: the head dimension grows to `heads`.
  Instruction* RepeatKvHeads(Instruction* x) {
    if (sz_.group() == 1) return x;
    const Layout& l = cfg_.layout;
    std::vector<int64_t> wide, mapping;
    for (int64_t d = 0; d < 4; ++d) {
      mapping.push_back(d <= l.head ? d : d + 1);
      wide.push_back(x->shape().dims[d]);
      if (d == l.head) wide.push_back(sz_.group());
    }
    std::vector<int64_t> merged = x->shape().dims;
    merged[l.head] = sz_.heads;
    return Reshape(Broadcast(x, wide, mapping), merged);
  }

  // A [b, h, s, x] result of the dots put into the operands' layout.
  Instruction* ToLayout(Instruction* x) {
    const Layout& l = cfg_.layout;
    std::vector<int64_t> perm(4);
    perm[l.batch] = 0;
    perm[l.head] = 1;
    perm[l.seq] = 2;
    perm[l.dim] = 3;
    return Transpose(x, perm);
  }

  // [b, h, s, x] summed over each group of query heads: [b, kv_heads, s, x].
  Instruction* SumOverGroups(Instruction* x) {
    if (sz_.group() == 1) return x;
    const std::vector<int64_t>& d = x->shape().dims;
    return Sum(Reshape(x, {d[0], sz_.kv_heads, sz_.group(), d[2], d[3]}), {2});
  }

  // s32[b] lengths from cumulative offsets cu[0..b].
  Instruction* Lengths(size_t operand) {
    Instruction* cu = Convert(cc_->operand(operand), ElementType::kS32);
    auto part = [&](int64_t start) {
      Instruction* s = Add(Opcode::kSlice, Shape::Array(ElementType::kS32, {sz_.b}), {cu});
      s->attrs().slice = {hlo::SliceDim{start, start + sz_.b, 1}};
      return s;
    };
    return Binary(Opcode::kSubtract, part(1), part(0));
  }

  // Which scores are kept (pred [b, h, sq, skv]); nullptr when all are.
  Instruction* Mask() {
    // A window wider than both sequences bounds nothing (and would not fit s32).
    const int64_t span = sz_.sq + sz_.skv;
    bool left = cfg_.window_left >= 0 && cfg_.window_left <= span;
    bool right = cfg_.Causal() || (cfg_.window_right >= 0 && cfg_.window_right <= span);
    if (!cfg_.Padding() && !left && !right) return nullptr;
    std::vector<int64_t> dims = {sz_.b, sz_.sq, sz_.skv};
    auto iota = [&](int64_t dim) {
      Instruction* i = Add(Opcode::kIota, Shape::Array(ElementType::kS32, dims), {});
      i->attrs().iota_dimension = dim;
      return i;
    };
    auto per_batch = [&](Instruction* lengths) { return Broadcast(lengths, dims, {0}); };
    Instruction* i = iota(1);
    Instruction* j = iota(2);
    Instruction* q_len = cfg_.Padding() ? per_batch(Lengths(QCuSeqlens())) : Splat(ElementType::kS32, dims, sz_.sq);
    Instruction* kv_len = cfg_.Padding() ? per_batch(Lengths(KvCuSeqlens())) : Splat(ElementType::kS32, dims, sz_.skv);
    Instruction* keep = nullptr;
    auto both = [&](Instruction* cond) { keep = keep ? Binary(Opcode::kAnd, keep, cond) : cond; };
    using hlo::ComparisonDirection;
    if (cfg_.Padding()) {
      both(Compare(i, q_len, ComparisonDirection::kLt));
      both(Compare(j, kv_len, ComparisonDirection::kLt));
    }
    // j - diag - i, the key's distance right of the query's diagonal.
    Instruction* rel = Binary(Opcode::kSubtract, j, i);
    if (cfg_.BottomRight()) rel = Binary(Opcode::kSubtract, rel, Binary(Opcode::kSubtract, kv_len, q_len));
    if (right) {
      int64_t bound = cfg_.Causal() ? 0 : cfg_.window_right;
      if (cfg_.Causal() && cfg_.window_right >= 0) bound = std::min<int64_t>(bound, cfg_.window_right);
      bound = std::min(bound, span);
      both(Compare(rel, Splat(ElementType::kS32, dims, bound), ComparisonDirection::kLe));
    }
    if (left) both(Compare(rel, Splat(ElementType::kS32, dims, -cfg_.window_left), ComparisonDirection::kGe));
    return Broadcast(keep, Scores(), {0, 2, 3});
  }

  // The bias in f32, broadcast to the scores.
  Instruction* Bias() {
    Instruction* bias = Operand(3);
    const std::vector<int64_t>& d = bias->shape().dims;
    std::vector<int64_t> kept_dims, mapping;
    if (d[0] == sz_.b) kept_dims.push_back(d[0]), mapping.push_back(0);
    if (d[1] == sz_.heads) kept_dims.push_back(d[1]), mapping.push_back(1);
    kept_dims.push_back(sz_.sq), kept_dims.push_back(sz_.skv);
    mapping.push_back(2), mapping.push_back(3);
    return Broadcast(Reshape(bias, kept_dims), Scores(), mapping);
  }

  // The logits: scale Q K^T, with the bias before or after the scale.
  Instruction* Logits(Instruction* q, Instruction* k) {
    const Layout& l = cfg_.layout;
    Instruction* s = Dot(q, RepeatKvHeads(k), {{l.batch, l.head}, {l.batch, l.head}, {l.dim}, {l.dim}});
    if (cfg_.bias_type == kPreScaleBias) s = Binary(Opcode::kAdd, s, Bias());
    s = Binary(Opcode::kMultiply, s, Like(s, cfg_.scale));
    if (cfg_.bias_type == kPostScaleBias) s = Binary(Opcode::kAdd, s, Bias());
    return s;
  }

  // [b, h, sq, skv] probabilities times v: [b, h, sq, dv].
  Instruction* Attend(Instruction* p, Instruction* v) {
    const Layout& l = cfg_.layout;
    return Dot(p, RepeatKvHeads(v), {{0, 1}, {l.batch, l.head}, {3}, {l.seq}});
  }

  // The sink's logit, the extra term of each row's softmax that attends to
  // nothing (TE's softmax_type): 0 for off-by-one, softmax_offset[h] for
  // learnable, broadcast to `dims` with the heads at `head`. nullptr for the
  // vanilla softmax.
  Instruction* Sink(const std::vector<int64_t>& dims, int64_t head) {
    if (cfg_.softmax_type == kVanillaSoftmax) return nullptr;
    if (cfg_.softmax_type == kOffByOneSoftmax) return Splat(ElementType::kF32, dims, 0);
    return Broadcast(Reshape(Operand(4), {sz_.heads}), dims, {head});
  }

  // Zeros for the results that carry no values here (rng state, workspace).
  Instruction* Zeros(const Shape& s) { return Splat(s.type, s.dims, 0); }

  absl::StatusOr<Instruction*> Forward() {
    const Shape& s = cc_->shape();
    std::vector<int64_t> out_dims = q_->shape().dims;
    out_dims[cfg_.layout.dim] = sz_.dv;
    if (s.tuple[0].dims != out_dims || !hlo::IsFloatingPoint(s.tuple[0].type)) {
      return Bad(absl::StrFormat("output %s is not q's shape with v's head size", s.tuple[0].ToString(false)));
    }
    bool stats = AuxIsStatistic(s.tuple[1]);
    if (!stats && (!AuxIsSoftmax(s.tuple[1]) || cfg_.softmax_type != kVanillaSoftmax)) return BadAux(s.tuple[1]);

    Instruction* logits = Logits(Wide(q_), Wide(k_));
    Instruction* keep = Mask();
    const double lowest = std::numeric_limits<float>::lowest();
    Instruction* kept = keep ? Select(keep, logits, Like(logits, lowest)) : logits;
    Instruction* row_max = AddReduceBroadcast(c_, ctx_.names, kept, 3, ctx_.reducer(Opcode::kMaximum, ElementType::kF32),
                                              -std::numeric_limits<double>::infinity());
    Instruction* sink = Sink(Scores(), 1);
    if (sink) row_max = Binary(Opcode::kMaximum, row_max, sink);
    Instruction* e = Unary(Opcode::kExp, Binary(Opcode::kSubtract, kept, row_max));
    if (keep) e = Select(keep, e, Like(e, 0));
    Instruction* sum = AddReduceBroadcast(c_, ctx_.names, e, 3, ctx_.reducer(Opcode::kAdd, ElementType::kF32), 0);
    if (sink) sum = Binary(Opcode::kAdd, sum, Unary(Opcode::kExp, Binary(Opcode::kSubtract, sink, row_max)));
    // A row with a key left (or a sink) sums to at least 1 (its largest
    // term is exp(0)); a row with none gives zeros rather than 0/0.
    if (keep) sum = Binary(Opcode::kMaximum, sum, Like(sum, 1));
    Instruction* p = Binary(Opcode::kDivide, e, sum);

    Instruction* out = Convert(ToLayout(Attend(p, Wide(v_))), s.tuple[0].type);
    Instruction* aux = nullptr;
    if (stats) {
      Instruction* lse = Binary(Opcode::kAdd, row_max, Unary(Opcode::kLog, sum));
      aux = Add(Opcode::kSlice, Shape::Array(ElementType::kF32, {sz_.b, sz_.heads, sz_.sq, 1}), {lse});
      aux->attrs().slice = {{0, sz_.b, 1}, {0, sz_.heads, 1}, {0, sz_.sq, 1}, {0, 1, 1}};
    } else {
      aux = p;
    }
    std::vector<Instruction*> results = {out, Convert(aux, s.tuple[1].type)};
    for (size_t i = 2; i < s.tuple.size(); ++i) results.push_back(Zeros(s.tuple[i]));
    return AddInstruction(c_, Opcode::kTuple, ctx_.names.Get("tuple"), s, results);
  }

  bool AuxIsStatistic(const Shape& aux) const {
    return aux.type == ElementType::kF32 && aux.dims == std::vector<int64_t>{sz_.b, sz_.heads, sz_.sq, 1};
  }
  bool AuxIsSoftmax(const Shape& aux) const {
    return sz_.skv > 1 && hlo::IsFloatingPoint(aux.type) &&
           aux.dims == std::vector<int64_t>{sz_.b, sz_.heads, sz_.sq, sz_.skv};
  }
  absl::Status BadAux(const Shape& aux) {
    return Bad(absl::StrFormat("softmax_aux %s is neither f32[%d,%d,%d,1] statistics nor the [%d,%d,%d,%d] softmax",
                               aux.ToString(false), sz_.b, sz_.heads, sz_.sq, sz_.b, sz_.heads, sz_.sq, sz_.skv));
  }

  absl::StatusOr<Instruction*> Backward() {
    const Shape& s = cc_->shape();
    const Layout& l = cfg_.layout;
    for (int i = 0; i < 3; ++i) {
      if (!s.tuple[i].Compatible(cc_->operand(i)->shape())) {
        return Bad(absl::StrFormat("gradient %d %s does not have the shape of its operand %s", i,
                                   s.tuple[i].ToString(false), cc_->operand(i)->shape().ToString(false)));
      }
    }
    if (cfg_.bias_type != kNoBias && !s.tuple[3].Compatible(cc_->operand(3)->shape())) {
      return Bad(absl::StrFormat("dbias %s does not have the bias's shape %s", s.tuple[3].ToString(false),
                                 cc_->operand(3)->shape().ToString(false)));
    }
    Instruction* aux_in = cc_->operand(At(4));
    const Shape& aux = aux_in->shape();
    bool stats = AuxIsStatistic(aux);
    if (!stats && (!AuxIsSoftmax(aux) || cfg_.softmax_type != kVanillaSoftmax)) return BadAux(aux);
    std::vector<int64_t> out_dims = q_->shape().dims;
    out_dims[l.dim] = sz_.dv;
    for (size_t i : {At(6), At(7)}) {
      if (cc_->operand(i)->shape().dims != out_dims || !hlo::IsFloatingPoint(cc_->operand(i)->shape().type)) {
        return Bad(absl::StrFormat("output and doutput must be floating-point %s; operand %d is %s",
                                   Shape::Array(q_->shape().type, out_dims).ToString(false), i,
                                   cc_->operand(i)->shape().ToString(false)));
      }
    }
    Instruction* q = Wide(q_);
    Instruction* k = Wide(k_);
    Instruction* v = Wide(v_);
    Instruction* o = Operand(At(6));
    Instruction* d_o = Operand(At(7));
    Instruction* keep = Mask();
    Instruction* p = nullptr;
    Instruction* lse = nullptr;
    if (stats) {
      lse = Reshape(aux_in, {sz_.b, sz_.heads, sz_.sq});
      Instruction* rebuilt = Binary(Opcode::kSubtract, Logits(q, k), Broadcast(lse, Scores(), {0, 1, 2}));
      p = Unary(Opcode::kExp, rebuilt);
    } else {
      p = Convert(aux_in, ElementType::kF32);
    }
    if (keep) p = Select(keep, p, Like(p, 0));

    Instruction* dv = Dot(p, d_o, {{0, 1}, {l.batch, l.head}, {2}, {l.seq}});                       // [b,h,skv,dv]
    Instruction* dp = Dot(d_o, RepeatKvHeads(v), {{l.batch, l.head}, {l.batch, l.head}, {l.dim}, {l.dim}});  // scores
    Instruction* row = Dot(d_o, o, {{l.batch, l.head, l.seq}, {l.batch, l.head, l.seq}, {l.dim}, {l.dim}});  // [b,h,sq]
    Instruction* dlogits = Binary(Opcode::kMultiply, p, Binary(Opcode::kSubtract, dp, Broadcast(row, Scores(), {0, 1, 2})));
    Instruction* dscores = Binary(Opcode::kMultiply, dlogits, Like(dlogits, cfg_.scale));
    Instruction* dq = Dot(dscores, RepeatKvHeads(k), {{0, 1}, {l.batch, l.head}, {3}, {l.seq}});  // [b,h,sq,d]
    Instruction* dk = Dot(dscores, q, {{0, 1}, {l.batch, l.head}, {2}, {l.seq}});                 // [b,h,skv,d]

    std::vector<Instruction*> grads = Pack(ToLayout(dq), ToLayout(SumOverGroups(dk)), ToLayout(SumOverGroups(dv)));
    std::vector<Instruction*> results;
    for (int i = 0; i < 3; ++i) results.push_back(grads[i] ? Convert(grads[i], s.tuple[i].type) : Zeros(s.tuple[i]));
    if (cfg_.bias_type != kNoBias) {
      Instruction* dbias = cfg_.bias_type == kPreScaleBias ? dscores : dlogits;
      const std::vector<int64_t>& bd = s.tuple[3].dims;
      std::vector<int64_t> summed;
      if (bd[0] != sz_.b) summed.push_back(0);
      if (bd[1] != sz_.heads) summed.push_back(1);
      results.push_back(Convert(Reshape(Sum(dbias, summed), bd), s.tuple[3].type));
    } else {
      results.push_back(Zeros(s.tuple[3]));
    }
    size_t next = 4;
    if (cfg_.softmax_type == kLearnableSoftmax && s.tuple.size() > next) {
      // d/d offset[h] of the sink's share: -sum over batch and rows of p_sink D.
      const std::vector<int64_t> rows = {sz_.b, sz_.heads, sz_.sq};
      Instruction* p_sink = Unary(Opcode::kExp, Binary(Opcode::kSubtract, Sink(rows, 1), lse));
      if (!s.tuple[next].Compatible(cc_->operand(4)->shape())) {
        return Bad(absl::StrFormat("dsoftmax_offset %s does not have softmax_offset's shape %s",
                                   s.tuple[next].ToString(false), cc_->operand(4)->shape().ToString(false)));
      }
      Instruction* d = Unary(Opcode::kNegate, Sum(Binary(Opcode::kMultiply, p_sink, row), {0, 2}));
      results.push_back(Convert(Reshape(d, s.tuple[next].dims), s.tuple[next].type));
      ++next;
    }
    for (size_t i = next; i < s.tuple.size(); ++i) results.push_back(Zeros(s.tuple[i]));
    return AddInstruction(c_, Opcode::kTuple, ctx_.names.Get("tuple"), s, results);
  }

  NeuronLoweringContext& ctx_;
  hlo::Computation* c_;
  Instruction* cc_;
  bool backward_;
  MlirAttributeDict attrs_;
  Config cfg_;
  Sizes sz_{};
  Instruction* q_ = nullptr;  // q, k and v, unpacked, in their own type
  Instruction* k_ = nullptr;
  Instruction* v_ = nullptr;
};

}  // namespace

bool IsTransformerEngineAttentionTarget(std::string_view target) {
  return target == kForwardTarget || target == kBackwardTarget;
}

absl::StatusOr<Instruction*> LowerTransformerEngineAttention(NeuronLoweringContext& ctx, hlo::Computation* c,
                                                             Instruction* cc) {
  if (!IsTransformerEngineAttentionTarget(cc->attrs().custom_call_target)) return nullptr;
  return TeAttentionLowering(ctx, c, cc).Lower();
}

}  // namespace neuron::compiler
