#include "lib/hlo/shape_inference.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/hlo/computation.h"
#include "lib/hlo/ragged_dot_dims.h"

namespace neuron::hlo {
namespace {

using Result = absl::StatusOr<std::optional<Shape>>;

absl::Status Fail(std::string message) { return absl::InvalidArgumentError(message); }

#define HLO_RETURN_IF_ERROR(expr)        \
  do {                                   \
    absl::Status _status = (expr);       \
    if (!_status.ok()) return _status;   \
  } while (0)

std::string S(const Shape& s) { return s.ToString(false); }
std::string Dims(const std::vector<int64_t>& v) { return "{" + absl::StrJoin(v, ",") + "}"; }

absl::Status Arity(const Instruction& inst, size_t n) {
  if (inst.operand_count() != n) {
    return Fail(absl::StrFormat("%s takes %d operands, got %d", inst.opcode_text(), n,
                                inst.operand_count()));
  }
  return absl::OkStatus();
}

absl::Status AtLeast(const Instruction& inst, size_t n) {
  if (inst.operand_count() < n) {
    return Fail(absl::StrFormat("%s takes at least %d operands, got %d", inst.opcode_text(), n,
                                inst.operand_count()));
  }
  return absl::OkStatus();
}

absl::Status IsArray(const Instruction& inst, size_t i) {
  const Shape& s = inst.operand(i)->shape();
  if (!s.IsArray()) {
    return Fail(absl::StrFormat("operand %d of %s must be an array, got %s", i, inst.opcode_text(), S(s)));
  }
  return absl::OkStatus();
}

absl::Status DimsInRange(const std::vector<int64_t>& dims, int64_t rank, std::string_view what,
                         bool unique = true) {
  std::set<int64_t> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return Fail(absl::StrFormat("%s %s has dimension %d out of range for rank %d", what, Dims(dims), d, rank));
    }
    if (unique && !seen.insert(d).second) {
      return Fail(absl::StrFormat("%s %s repeats dimension %d", what, Dims(dims), d));
    }
  }
  return absl::OkStatus();
}

Shape WithType(const Shape& s, ElementType t) {
  Shape out = Shape::Array(t, s.dims);
  out.dynamic = s.dynamic;
  return out;
}

Shape NoLayout(Shape s) {
  s.layout.reset();
  for (Shape& e : s.tuple) e = NoLayout(std::move(e));
  return s;
}

// Checks a called computation's parameters against `params` and returns its root shape.
absl::StatusOr<Shape> CheckCallee(const Instruction& inst, const Computation* c,
                                  const std::vector<Shape>& params, std::string_view role) {
  if (!c) return Fail(absl::StrFormat("%s is missing its %s computation", inst.opcode_text(), role));
  if (!c->root()) return Fail(absl::StrFormat("%s computation '%s' has no root", role, c->name()));
  if (c->parameters().size() != params.size()) {
    return Fail(absl::StrFormat("%s computation '%s' takes %d parameters, %s passes %d", role, c->name(),
                                c->parameters().size(), inst.opcode_text(), params.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const Instruction* p = c->parameter(i);
    if (!p) return Fail(absl::StrFormat("%s computation '%s' lacks parameter %d", role, c->name(), i));
    if (!p->shape().Compatible(params[i])) {
      return Fail(absl::StrFormat("parameter %d of %s computation '%s' is %s, but %s passes %s", i, role,
                                  c->name(), S(p->shape()), inst.opcode_text(), S(params[i])));
    }
  }
  return NoLayout(c->root()->shape());
}

std::vector<Shape> OperandShapes(const Instruction& inst, size_t from = 0, size_t to = SIZE_MAX) {
  std::vector<Shape> out;
  for (size_t i = from; i < std::min(to, inst.operand_count()); ++i) out.push_back(inst.operand(i)->shape());
  return out;
}

// Output size of one windowed dimension (convolution, reduce-window).
absl::StatusOr<int64_t> WindowedSize(int64_t in, const WindowDim& w) {
  if (w.size < 0 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
    return Fail("window has a negative size or a stride/dilation below 1");
  }
  int64_t dilated = in == 0 ? 0 : (in - 1) * w.base_dilation + 1;
  int64_t padded = dilated + w.pad_low + w.pad_high;
  int64_t window = w.size == 0 ? 0 : (w.size - 1) * w.window_dilation + 1;
  if (padded < window) return int64_t{0};
  return (padded - window) / w.stride + 1;
}

Result Elementwise(const Instruction& inst) {
  Opcode op = inst.opcode();
  OpKind kind = KindOf(op);
  size_t n = (kind == OpKind::kBinary || op == Opcode::kAnd || op == Opcode::kOr || op == Opcode::kXor ||
              op == Opcode::kShiftLeft || op == Opcode::kShiftRightArithmetic ||
              op == Opcode::kShiftRightLogical)
                 ? 2
                 : 1;
  HLO_RETURN_IF_ERROR(Arity(inst, n));
  const Shape& a = inst.operand(0)->shape();
  if (op == Opcode::kCopy && !a.IsArray()) return std::optional<Shape>(NoLayout(a));
  HLO_RETURN_IF_ERROR(IsArray(inst, 0));
  if (n == 2) {
    HLO_RETURN_IF_ERROR(IsArray(inst, 1));
    const Shape& b = inst.operand(1)->shape();
    if (a.dims != b.dims || a.type != b.type) {
      return Fail(absl::StrFormat("operands of %s must have the same shape, got %s and %s", inst.opcode_text(),
                                  S(a), S(b)));
    }
  }
  if (kind == OpKind::kLogical && !IsInteger(a.type) && a.type != ElementType::kPred) {
    return Fail(absl::StrFormat("%s needs integer or pred operands, got %s", inst.opcode_text(), S(a)));
  }
  if (kind == OpKind::kUnaryPred) {
    if (!IsFloatingPoint(a.type)) {
      return Fail(absl::StrFormat("%s needs a floating-point operand, got %s", inst.opcode_text(), S(a)));
    }
    return std::optional<Shape>(WithType(a, ElementType::kPred));
  }
  if (op == Opcode::kAbs && IsComplex(a.type)) return std::optional<Shape>(WithType(a, ComplexComponentType(a.type)));
  if ((op == Opcode::kExp || op == Opcode::kLog || op == Opcode::kSqrt || op == Opcode::kRsqrt ||
       op == Opcode::kSin || op == Opcode::kCos || op == Opcode::kTanh || op == Opcode::kLogistic) &&
      !IsFloatingPoint(a.type) && !IsComplex(a.type)) {
    return Fail(absl::StrFormat("%s needs a floating-point operand, got %s", inst.opcode_text(), S(a)));
  }
  return std::optional<Shape>(WithType(a, a.type));
}

// The result dims of a dot of l and r: batch, lhs free, rhs free (rhs's
// group dimension, for ragged-dot, is not free: it picks a matrix).
absl::StatusOr<std::vector<int64_t>> DotResultDims(const Shape& l, const Shape& r, const DotDims& d,
                                                   const std::vector<int64_t>& rhs_group = {}) {
  HLO_RETURN_IF_ERROR(DimsInRange(d.lhs_batch, l.rank(), "lhs_batch_dims"));
  HLO_RETURN_IF_ERROR(DimsInRange(d.rhs_batch, r.rank(), "rhs_batch_dims"));
  HLO_RETURN_IF_ERROR(DimsInRange(d.lhs_contracting, l.rank(), "lhs_contracting_dims"));
  HLO_RETURN_IF_ERROR(DimsInRange(d.rhs_contracting, r.rank(), "rhs_contracting_dims"));
  if (d.lhs_batch.size() != d.rhs_batch.size()) return Fail("lhs and rhs batch dimension counts differ");
  if (d.lhs_contracting.size() != d.rhs_contracting.size()) {
    return Fail("lhs and rhs contracting dimension counts differ");
  }
  for (size_t i = 0; i < d.lhs_batch.size(); ++i) {
    if (l.dims[d.lhs_batch[i]] != r.dims[d.rhs_batch[i]]) {
      return Fail(absl::StrFormat("batch dimension sizes differ: lhs %s, rhs %s", S(l), S(r)));
    }
  }
  for (size_t i = 0; i < d.lhs_contracting.size(); ++i) {
    if (l.dims[d.lhs_contracting[i]] != r.dims[d.rhs_contracting[i]]) {
      return Fail(absl::StrFormat("contracting dimension sizes differ: lhs %s dim %d, rhs %s dim %d", S(l),
                                  d.lhs_contracting[i], S(r), d.rhs_contracting[i]));
    }
  }
  std::vector<int64_t> dims;
  for (int64_t b : d.lhs_batch) dims.push_back(l.dims[b]);
  auto free = [&](const Shape& s, const std::vector<int64_t>& batch, const std::vector<int64_t>& contract,
                  const std::vector<int64_t>& skip) {
    for (int64_t i = 0; i < s.rank(); ++i) {
      if (std::count(batch.begin(), batch.end(), i) || std::count(contract.begin(), contract.end(), i) ||
          std::count(skip.begin(), skip.end(), i))
        continue;
      dims.push_back(s.dims[i]);
    }
  };
  free(l, d.lhs_batch, d.lhs_contracting, {});
  free(r, d.rhs_batch, d.rhs_contracting, rhs_group);
  return dims;
}

Result Dot(const Instruction& inst) {
  HLO_RETURN_IF_ERROR(Arity(inst, 2));
  HLO_RETURN_IF_ERROR(IsArray(inst, 0));
  HLO_RETURN_IF_ERROR(IsArray(inst, 1));
  DotDims d = inst.attrs().dot.value_or(DotDims{});
  if (!d.lhs_ragged.empty() || !d.rhs_group.empty()) return Fail("lhs_ragged_dims/rhs_group_dims belong to ragged-dot");
  auto dims = DotResultDims(inst.operand(0)->shape(), inst.operand(1)->shape(), d);
  if (!dims.ok()) return dims.status();
  // The result type may be a preferred type of its own: keep the declared one.
  return std::optional<Shape>(Shape::Array(inst.shape().type, *dims));
}

// scaled-dot(lhs, rhs, lhs_scale, rhs_scale[, global scales]): a dot of
// the operands times their block scales; a scale has its operand's rank
// and each of its dimensions divides the operand's (the block size).
Result ScaledDot(const Instruction& inst) {
  if (inst.operand_count() != 4 && inst.operand_count() != 6) {
    return Fail(absl::StrFormat("scaled-dot takes 4 operands (or 6 with global scales), got %d", inst.operand_count()));
  }
  for (size_t i = 0; i < inst.operand_count(); ++i) HLO_RETURN_IF_ERROR(IsArray(inst, i));
  for (size_t i = 0; i < 2; ++i) {
    const Shape& x = inst.operand(i)->shape();
    const Shape& s = inst.operand(i + 2)->shape();
    bool blocks = s.rank() == x.rank();
    for (int64_t d = 0; blocks && d < x.rank(); ++d) blocks = s.dims[d] > 0 && x.dims[d] % s.dims[d] == 0;
    if (!blocks) {
      return Fail(absl::StrFormat("scaled-dot scale %s does not divide its operand %s into blocks", S(s), S(x)));
    }
  }
  DotDims d = inst.attrs().dot.value_or(DotDims{});
  if (!d.lhs_ragged.empty() || !d.rhs_group.empty()) return Fail("lhs_ragged_dims/rhs_group_dims belong to ragged-dot");
  auto dims = DotResultDims(inst.operand(0)->shape(), inst.operand(1)->shape(), d);
  if (!dims.ok()) return dims.status();
  return std::optional<Shape>(Shape::Array(inst.shape().type, *dims));
}

// ragged-dot(lhs, rhs, group_sizes): one lhs dimension is split into
// consecutive groups. Ragged non-contracting: rhs has a group dimension
// and the result is the dot's; ragged contracting: the result gains a
// leading group dimension; ragged batch: the dot's result.
Result RaggedDot(const Instruction& inst) {
  HLO_RETURN_IF_ERROR(Arity(inst, 3));
  for (size_t i = 0; i < 3; ++i) HLO_RETURN_IF_ERROR(IsArray(inst, i));
  const Shape& l = inst.operand(0)->shape();
  const Shape& r = inst.operand(1)->shape();
  const Shape& g = inst.operand(2)->shape();
  DotDims d = inst.attrs().dot.value_or(DotDims{});
  if (d.lhs_ragged.size() != 1) return Fail("ragged-dot needs exactly one lhs_ragged_dims entry");
  HLO_RETURN_IF_ERROR(DimsInRange(d.lhs_ragged, l.rank(), "lhs_ragged_dims"));
  HLO_RETURN_IF_ERROR(DimsInRange(d.rhs_group, r.rank(), "rhs_group_dims"));
  if (!IsInteger(g.type) || g.rank() < 1) {
    return Fail(absl::StrFormat("ragged-dot group_sizes must be an integer array, got %s", S(g)));
  }
  const RaggedDotMode mode = RaggedDotModeOf(d);
  const bool non_contracting = mode == RaggedDotMode::kNonContracting;
  if (non_contracting != (d.rhs_group.size() == 1) || d.rhs_group.size() > 1) {
    return Fail("ragged-dot has one rhs_group_dims entry exactly when its ragged dimension is not batch or contracting");
  }
  if (non_contracting && (std::count(d.rhs_batch.begin(), d.rhs_batch.end(), d.rhs_group[0]) ||
                          std::count(d.rhs_contracting.begin(), d.rhs_contracting.end(), d.rhs_group[0]))) {
    return Fail("ragged-dot's rhs group dimension is also a batch or contracting dimension");
  }
  const int64_t groups = non_contracting ? r.dims[d.rhs_group[0]] : g.dims.back();
  if (g.dims.back() != groups) {
    return Fail(absl::StrFormat("ragged-dot group_sizes %s must end in the group count %d", S(g), groups));
  }
  // The dot's dimension numbers first: the group prefix indexes lhs by them.
  auto dims = DotResultDims(l, r, d, d.rhs_group);
  if (!dims.ok()) return dims.status();
  // group_sizes is [g] or [prefix..., g], the prefix sized as lhs's.
  const std::vector<int64_t> prefix = RaggedDotGroupPrefix(d, l.rank());
  bool prefix_fits = g.rank() == static_cast<int64_t>(prefix.size()) + 1;
  for (size_t i = 0; prefix_fits && i < prefix.size(); ++i) prefix_fits = g.dims[i] == l.dims[prefix[i]];
  if (g.rank() != 1 && !prefix_fits) {
    return Fail(absl::StrFormat("ragged-dot group_sizes %s must be [%d] or lhs's dimensions %s then [%d]", S(g),
                                groups, Dims(prefix), groups));
  }
  if (mode == RaggedDotMode::kContracting) dims->insert(dims->begin(), groups);
  return std::optional<Shape>(Shape::Array(inst.shape().type, *dims));
}

Result Convolution(const Instruction& inst) {
  HLO_RETURN_IF_ERROR(Arity(inst, 2));
  HLO_RETURN_IF_ERROR(IsArray(inst, 0));
  HLO_RETURN_IF_ERROR(IsArray(inst, 1));
  const Attributes& a = inst.attrs();
  if (!a.conv) return Fail("convolution has no dim_labels");
  const ConvDims& c = *a.conv;
  const Shape& in = inst.operand(0)->shape();
  const Shape& k = inst.operand(1)->shape();
  size_t spatial = c.input_spatial.size();
  int64_t rank = static_cast<int64_t>(spatial) + 2;
  if (in.rank() != rank || k.rank() != rank) {
    return Fail(absl::StrFormat("dim_labels describe rank %d, but input is %s and kernel %s", rank, S(in), S(k)));
  }
  if (a.window.size() != spatial) {
    return Fail(absl::StrFormat("window has %d dimensions, the convolution has %d spatial ones", a.window.size(),
                                spatial));
  }
  int64_t fgc = a.feature_group_count, bgc = a.batch_group_count;
  if (fgc < 1 || bgc < 1) return Fail("feature_group_count and batch_group_count must be at least 1");
  int64_t in_features = in.dims[c.input_feature];
  if (in_features != k.dims[c.kernel_input_feature] * fgc) {
    return Fail(absl::StrFormat("input feature size %d != kernel input feature size %d * feature_group_count %d",
                                in_features, k.dims[c.kernel_input_feature], fgc));
  }
  int64_t out_features = k.dims[c.kernel_output_feature];
  if (out_features % fgc != 0 || out_features % bgc != 0) {
    return Fail("kernel output features are not divisible by the group count");
  }
  if (in.dims[c.input_batch] % bgc != 0) return Fail("input batch is not divisible by batch_group_count");
  std::vector<int64_t> dims(rank, 0);
  dims[c.output_batch] = in.dims[c.input_batch] / bgc;
  dims[c.output_feature] = out_features;
  for (size_t i = 0; i < spatial; ++i) {
    if (a.window[i].size != k.dims[c.kernel_spatial[i]]) {
      return Fail(absl::StrFormat("window size %d of spatial dimension %d differs from the kernel's %d",
                                  a.window[i].size, i, k.dims[c.kernel_spatial[i]]));
    }
    auto size = WindowedSize(in.dims[c.input_spatial[i]], a.window[i]);
    if (!size.ok()) return size.status();
    dims[c.output_spatial[i]] = *size;
  }
  return std::optional<Shape>(Shape::Array(inst.shape().type, dims));
}

// The reducer must return the accumulator: a scalar of each init's type.
absl::Status CheckReducerResult(const Shape& root, const std::vector<Shape>& inits) {
  Shape expected = inits.size() == 1 ? NoLayout(inits[0]) : Shape::Tuple(inits);
  if (!root.Compatible(expected)) {
    return Fail(absl::StrFormat("to_apply computation returns %s, the accumulator is %s", S(root), S(expected)));
  }
  return absl::OkStatus();
}

Result Reduce(const Instruction& inst) {
  size_t n = inst.operand_count() / 2;
  if (inst.operand_count() < 2 || inst.operand_count() % 2) {
    return Fail(absl::StrFormat("reduce takes inputs and as many init values, got %d operands", inst.operand_count()));
  }
  const Shape& first = inst.operand(0)->shape();
  std::vector<Shape> results, params;
  for (size_t i = 0; i < n; ++i) {
    HLO_RETURN_IF_ERROR(IsArray(inst, i));
    const Shape& s = inst.operand(i)->shape();
    const Shape& init = inst.operand(n + i)->shape();
    if (s.dims != first.dims) return Fail("reduce inputs have different dimensions");
    if (!init.IsScalar()) return Fail(absl::StrFormat("reduce init value %d must be a scalar, got %s", i, S(init)));
    params.push_back(init);
  }
  const auto& dims = inst.attrs().dimensions;
  HLO_RETURN_IF_ERROR(DimsInRange(dims, first.rank(), "dimensions"));
  for (size_t i = 0; i < n; ++i) params.push_back(inst.operand(n + i)->shape());
  auto root = CheckCallee(inst, inst.to_apply(), params, "to_apply");
  if (!root.ok()) return root.status();
  HLO_RETURN_IF_ERROR(CheckReducerResult(*root, OperandShapes(inst, n)));
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < first.rank(); ++d) {
    if (!std::count(dims.begin(), dims.end(), d)) kept.push_back(first.dims[d]);
  }
  for (size_t i = 0; i < n; ++i) results.push_back(Shape::Array(inst.operand(n + i)->shape().type, kept));
  if (n == 1) return std::optional<Shape>(results[0]);
  return std::optional<Shape>(Shape::Tuple(results));
}

Result ReduceWindow(const Instruction& inst) {
  size_t n = inst.operand_count() / 2;
  if (inst.operand_count() < 2 || inst.operand_count() % 2) return Fail("reduce-window takes inputs and init values");
  const Attributes& a = inst.attrs();
  std::vector<Shape> results, params;
  for (size_t i = 0; i < n; ++i) {
    HLO_RETURN_IF_ERROR(IsArray(inst, i));
    const Shape& s = inst.operand(i)->shape();
    if (static_cast<int64_t>(a.window.size()) != s.rank()) {
      return Fail(absl::StrFormat("window has %d dimensions, operand %s has rank %d", a.window.size(), S(s), s.rank()));
    }
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < s.rank(); ++d) {
      auto size = WindowedSize(s.dims[d], a.window[d]);
      if (!size.ok()) return size.status();
      dims.push_back(*size);
    }
    results.push_back(Shape::Array(inst.operand(n + i)->shape().type, dims));
  }
  for (size_t i = 0; i < 2; ++i) {
    for (size_t j = 0; j < n; ++j) params.push_back(inst.operand(n + j)->shape());
  }
  auto root = CheckCallee(inst, inst.to_apply(), params, "to_apply");
  if (!root.ok()) return root.status();
  HLO_RETURN_IF_ERROR(CheckReducerResult(*root, OperandShapes(inst, n)));
  if (n == 1) return std::optional<Shape>(results[0]);
  return std::optional<Shape>(Shape::Tuple(results));
}

Result Gather(const Instruction& inst) {
  HLO_RETURN_IF_ERROR(Arity(inst, 2));
  const Attributes& a = inst.attrs();
  if (!a.gather) return Fail("gather has no dimension numbers");
  const GatherDims& g = *a.gather;
  const Shape& operand = inst.operand(0)->shape();
  const Shape& indices = inst.operand(1)->shape();
  if (!IsInteger(indices.type)) return Fail(absl::StrFormat("gather indices must be integers, got %s", S(indices)));
  if (static_cast<int64_t>(a.gather_slice_sizes.size()) != operand.rank()) {
    return Fail(absl::StrFormat("slice_sizes has %d entries, operand rank is %d", a.gather_slice_sizes.size(), operand.rank()));
  }
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (a.gather_slice_sizes[d] < 0 || a.gather_slice_sizes[d] > operand.dims[d]) {
      return Fail(absl::StrFormat("slice size %d of dimension %d exceeds the operand %s", a.gather_slice_sizes[d], d, S(operand)));
    }
  }
  if (g.index_vector_dim < 0 || g.index_vector_dim > indices.rank()) return Fail("index_vector_dim out of range");
  HLO_RETURN_IF_ERROR(DimsInRange(g.collapsed_slice_dims, operand.rank(), "collapsed_slice_dims"));
  HLO_RETURN_IF_ERROR(DimsInRange(g.operand_batching_dims, operand.rank(), "operand_batching_dims"));
  HLO_RETURN_IF_ERROR(DimsInRange(g.start_index_map, operand.rank(), "start_index_map"));
  int64_t index_count = g.index_vector_dim == indices.rank() ? 1 : indices.dims[g.index_vector_dim];
  if (index_count != static_cast<int64_t>(g.start_index_map.size())) {
    return Fail(absl::StrFormat("start_index_map has %d entries, the index vector has %d", g.start_index_map.size(), index_count));
  }
  std::vector<int64_t> offsets;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (std::count(g.collapsed_slice_dims.begin(), g.collapsed_slice_dims.end(), d) ||
        std::count(g.operand_batching_dims.begin(), g.operand_batching_dims.end(), d)) {
      if (a.gather_slice_sizes[d] > 1) return Fail(absl::StrFormat("collapsed dimension %d must have slice size 1", d));
      continue;
    }
    offsets.push_back(a.gather_slice_sizes[d]);
  }
  std::vector<int64_t> batch;
  for (int64_t d = 0; d < indices.rank(); ++d) {
    if (d != g.index_vector_dim) batch.push_back(indices.dims[d]);
  }
  int64_t rank = static_cast<int64_t>(offsets.size() + batch.size());
  if (offsets.size() != g.offset_dims.size()) {
    return Fail(absl::StrFormat("offset_dims has %d entries, %d slice dimensions remain", g.offset_dims.size(), offsets.size()));
  }
  HLO_RETURN_IF_ERROR(DimsInRange(g.offset_dims, rank, "offset_dims"));
  std::vector<int64_t> dims(rank);
  size_t oi = 0, bi = 0;
  std::vector<int64_t> sorted_offsets = g.offset_dims;
  std::sort(sorted_offsets.begin(), sorted_offsets.end());
  for (int64_t d = 0; d < rank; ++d) {
    if (std::binary_search(sorted_offsets.begin(), sorted_offsets.end(), d)) {
      dims[d] = offsets[oi++];
    } else {
      dims[d] = batch[bi++];
    }
  }
  return std::optional<Shape>(Shape::Array(operand.type, dims));
}

Result Scatter(const Instruction& inst) {
  size_t count = inst.operand_count();
  if (count < 3 || (count - 1) % 2) return Fail("scatter takes operands, indices and as many updates");
  size_t n = (count - 1) / 2;
  const Attributes& a = inst.attrs();
  if (!a.scatter) return Fail("scatter has no dimension numbers");
  const ScatterDims& s = *a.scatter;
  const Shape& operand = inst.operand(0)->shape();
  const Shape& indices = inst.operand(n)->shape();
  if (!IsInteger(indices.type)) return Fail(absl::StrFormat("scatter indices must be integers, got %s", S(indices)));
  if (s.index_vector_dim < 0 || s.index_vector_dim > indices.rank()) return Fail("index_vector_dim out of range");
  HLO_RETURN_IF_ERROR(DimsInRange(s.inserted_window_dims, operand.rank(), "inserted_window_dims"));
  HLO_RETURN_IF_ERROR(DimsInRange(s.scatter_dims_to_operand_dims, operand.rank(), "scatter_dims_to_operand_dims"));
  int64_t index_count = s.index_vector_dim == indices.rank() ? 1 : indices.dims[s.index_vector_dim];
  if (index_count != static_cast<int64_t>(s.scatter_dims_to_operand_dims.size())) {
    return Fail("scatter_dims_to_operand_dims does not match the index vector size");
  }
  int64_t update_rank = static_cast<int64_t>(s.update_window_dims.size()) + indices.rank() -
                        (s.index_vector_dim < indices.rank() ? 1 : 0);
  std::vector<Shape> params;
  for (size_t i = 0; i < n; ++i) {
    const Shape& u = inst.operand(n + 1 + i)->shape();
    if (u.rank() != update_rank) {
      return Fail(absl::StrFormat("updates %s should have rank %d", S(u), update_rank));
    }
    if (inst.operand(i)->shape().dims != operand.dims) return Fail("scatter operands have different dimensions");
  }
  for (size_t i = 0; i < n; ++i) params.push_back(Shape::Scalar(inst.operand(i)->shape().type));
  for (size_t i = 0; i < n; ++i) params.push_back(Shape::Scalar(inst.operand(n + 1 + i)->shape().type));
  auto root = CheckCallee(inst, inst.to_apply(), params, "to_apply");
  if (!root.ok()) return root.status();
  if (n == 1) return std::optional<Shape>(WithType(operand, operand.type));
  std::vector<Shape> results;
  for (size_t i = 0; i < n; ++i) results.push_back(NoLayout(inst.operand(i)->shape()));
  return std::optional<Shape>(Shape::Tuple(results));
}

Result Infer(const Instruction& inst) {
  const Attributes& a = inst.attrs();
  const Shape& declared = inst.shape();
  Opcode op = inst.opcode();
  if (KindOf(op) != OpKind::kOther) return Elementwise(inst);
  switch (op) {
    case Opcode::kParameter:
      HLO_RETURN_IF_ERROR(Arity(inst, 0));
      if (a.parameter_number < 0) return Fail("parameter has no number");
      return std::optional<Shape>();
    case Opcode::kConstant: {
      HLO_RETURN_IF_ERROR(Arity(inst, 0));
      if (!a.literal) return Fail("constant has no value");
      if (!a.literal->elided() && !a.literal->shape().Compatible(declared)) {
        return Fail(absl::StrFormat("constant value has shape %s, declared %s", S(a.literal->shape()), S(declared)));
      }
      return std::optional<Shape>(NoLayout(declared));
    }
    case Opcode::kIota:
      HLO_RETURN_IF_ERROR(Arity(inst, 0));
      if (!declared.IsArray() || declared.rank() == 0) return Fail("iota needs an array shape of rank 1 or more");
      if (a.iota_dimension < 0 || a.iota_dimension >= declared.rank()) {
        return Fail(absl::StrFormat("iota_dimension %d out of range for %s", a.iota_dimension, S(declared)));
      }
      return std::optional<Shape>(NoLayout(declared));
    case Opcode::kCompare: {
      HLO_RETURN_IF_ERROR(Arity(inst, 2));
      HLO_RETURN_IF_ERROR(IsArray(inst, 0));
      const Shape& l = inst.operand(0)->shape();
      const Shape& r = inst.operand(1)->shape();
      if (l.dims != r.dims || l.type != r.type) {
        return Fail(absl::StrFormat("compare operands must have the same shape, got %s and %s", S(l), S(r)));
      }
      if (!a.comparison_direction) return Fail("compare has no direction");
      return std::optional<Shape>(WithType(l, ElementType::kPred));
    }
    case Opcode::kSelect: {
      HLO_RETURN_IF_ERROR(Arity(inst, 3));
      const Shape& p = inst.operand(0)->shape();
      const Shape& t = inst.operand(1)->shape();
      const Shape& f = inst.operand(2)->shape();
      if (p.type != ElementType::kPred) return Fail(absl::StrFormat("select predicate must be pred, got %s", S(p)));
      if (!t.Compatible(f)) return Fail(absl::StrFormat("select branches differ: %s and %s", S(t), S(f)));
      if (!p.IsScalar() && p.dims != t.dims) {
        return Fail(absl::StrFormat("select predicate %s does not match the branches %s", S(p), S(t)));
      }
      return std::optional<Shape>(NoLayout(t));
    }
    case Opcode::kClamp: {
      HLO_RETURN_IF_ERROR(Arity(inst, 3));
      const Shape& lo = inst.operand(0)->shape();
      const Shape& x = inst.operand(1)->shape();
      const Shape& hi = inst.operand(2)->shape();
      for (const Shape* b : {&lo, &hi}) {
        if (b->type != x.type || (!b->IsScalar() && b->dims != x.dims)) {
          return Fail(absl::StrFormat("clamp bound %s does not fit operand %s", S(*b), S(x)));
        }
      }
      return std::optional<Shape>(WithType(x, x.type));
    }
    case Opcode::kConvert:
    case Opcode::kStochasticConvert: {
      HLO_RETURN_IF_ERROR(Arity(inst, op == Opcode::kConvert ? 1 : 2));
      HLO_RETURN_IF_ERROR(IsArray(inst, 0));
      if (!declared.IsArray()) return Fail("convert result must be an array");
      return std::optional<Shape>(WithType(inst.operand(0)->shape(), declared.type));
    }
    case Opcode::kBitcastConvert: {
      HLO_RETURN_IF_ERROR(Arity(inst, 1));
      HLO_RETURN_IF_ERROR(IsArray(inst, 0));
      const Shape& s = inst.operand(0)->shape();
      if (BitWidth(s.type) != BitWidth(declared.type)) return std::optional<Shape>();  // adds/drops a dimension
      return std::optional<Shape>(WithType(s, declared.type));
    }
    case Opcode::kReal:
    case Opcode::kImag: {
      HLO_RETURN_IF_ERROR(Arity(inst, 1));
      const Shape& s = inst.operand(0)->shape();
      return std::optional<Shape>(WithType(s, ComplexComponentType(s.type)));
    }
    case Opcode::kComplex: {
      HLO_RETURN_IF_ERROR(Arity(inst, 2));
      const Shape& l = inst.operand(0)->shape();
      const Shape& r = inst.operand(1)->shape();
      if (l.dims != r.dims || l.type != r.type) return Fail("complex operands must have the same shape");
      if (l.type != ElementType::kF32 && l.type != ElementType::kF64) return Fail("complex needs f32 or f64 operands");
      return std::optional<Shape>(WithType(l, l.type == ElementType::kF32 ? ElementType::kC64 : ElementType::kC128));
    }
    case Opcode::kBroadcast: {
      HLO_RETURN_IF_ERROR(Arity(inst, 1));
      HLO_RETURN_IF_ERROR(IsArray(inst, 0));
      const Shape& s = inst.operand(0)->shape();
      if (static_cast<int64_t>(a.dimensions.size()) != s.rank()) {
        return Fail(absl::StrFormat("broadcast dimensions %s must have one entry per operand dimension of %s",
                                    Dims(a.dimensions), S(s)));
      }
      HLO_RETURN_IF_ERROR(DimsInRange(a.dimensions, declared.rank(), "broadcast dimensions"));
      for (size_t i = 0; i < a.dimensions.size(); ++i) {
        if (s.dims[i] != declared.dims[a.dimensions[i]]) {
          return Fail(absl::StrFormat("broadcast maps operand dimension %d (size %d) to result dimension %d (size %d)",
                                      i, s.dims[i], a.dimensions[i], declared.dims[a.dimensions[i]]));
        }
      }
      return std::optional<Shape>(WithType(declared, s.type));
    }
    case Opcode::kReshape: {
      HLO_RETURN_IF_ERROR(Arity(inst, 1));
      HLO_RETURN_IF_ERROR(IsArray(inst, 0));
      const Shape& s = inst.operand(0)->shape();
      if (s.ElementCount() != declared.ElementCount() && s.dynamic.empty() && declared.dynamic.empty()) {
        return Fail(absl::StrFormat("reshape changes the element count: %s to %s", S(s), S(declared)));
      }
      return std::optional<Shape>(WithType(declared, s.type));
    }
    case Opcode::kTranspose: {
      HLO_RETURN_IF_ERROR(Arity(inst, 1));
      HLO_RETURN_IF_ERROR(IsArray(inst, 0));
      const Shape& s = inst.operand(0)->shape();
      if (static_cast<int64_t>(a.dimensions.size()) != s.rank()) {
        return Fail(absl::StrFormat("transpose dimensions %s are not a permutation of rank %d", Dims(a.dimensions), s.rank()));
      }
      HLO_RETURN_IF_ERROR(DimsInRange(a.dimensions, s.rank(), "transpose dimensions"));
      std::vector<int64_t> dims;
      for (int64_t d : a.dimensions) dims.push_back(s.dims[d]);
      return std::optional<Shape>(Shape::Array(s.type, dims));
    }
    case Opcode::kReverse: {
      HLO_RETURN_IF_ERROR(Arity(inst, 1));
      const Shape& s = inst.operand(0)->shape();
      HLO_RETURN_IF_ERROR(DimsInRange(a.dimensions, s.rank(), "reverse dimensions"));
      return std::optional<Shape>(WithType(s, s.type));
    }
    case Opcode::kSlice: {
      HLO_RETURN_IF_ERROR(Arity(inst, 1));
      HLO_RETURN_IF_ERROR(IsArray(inst, 0));
      const Shape& s = inst.operand(0)->shape();
      if (static_cast<int64_t>(a.slice.size()) != s.rank()) {
        return Fail(absl::StrFormat("slice has %d ranges for operand rank %d", a.slice.size(), s.rank()));
      }
      std::vector<int64_t> dims;
      for (int64_t d = 0; d < s.rank(); ++d) {
        const SliceDim& r = a.slice[d];
        if (r.start < 0 || r.start > r.limit || r.limit > s.dims[d] || r.stride < 1) {
          return Fail(absl::StrFormat("slice range [%d:%d:%d] is invalid for dimension %d of size %d", r.start,
                                      r.limit, r.stride, d, s.dims[d]));
        }
        dims.push_back((r.limit - r.start + r.stride - 1) / r.stride);
      }
      return std::optional<Shape>(Shape::Array(s.type, dims));
    }
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice: {
      bool update = op == Opcode::kDynamicUpdateSlice;
      HLO_RETURN_IF_ERROR(AtLeast(inst, update ? 2 : 1));
      HLO_RETURN_IF_ERROR(IsArray(inst, 0));
      const Shape& s = inst.operand(0)->shape();
      size_t first_index = update ? 2 : 1;
      size_t n_index = inst.operand_count() - first_index;
      // One scalar per dimension, or (old form) a single index vector.
      bool vector_form = n_index == 1 && inst.operand(first_index)->shape().rank() == 1;
      if (!vector_form && static_cast<int64_t>(n_index) != s.rank()) {
        return Fail(absl::StrFormat("%s needs %d start indices, got %d", inst.opcode_text(), s.rank(), n_index));
      }
      for (size_t i = first_index; i < inst.operand_count(); ++i) {
        const Shape& idx = inst.operand(i)->shape();
        if (!IsInteger(idx.type) || (!vector_form && !idx.IsScalar())) {
          return Fail(absl::StrFormat("start index %d must be an integer scalar, got %s", i - first_index, S(idx)));
        }
      }
      if (update) {
        const Shape& u = inst.operand(1)->shape();
        if (u.rank() != s.rank() || u.type != s.type) {
          return Fail(absl::StrFormat("update %s does not fit operand %s", S(u), S(s)));
        }
        for (int64_t d = 0; d < s.rank(); ++d) {
          if (u.dims[d] > s.dims[d]) return Fail(absl::StrFormat("update %s is larger than operand %s", S(u), S(s)));
        }
        return std::optional<Shape>(WithType(s, s.type));
      }
      if (static_cast<int64_t>(a.dynamic_slice_sizes.size()) != s.rank()) {
        return Fail(absl::StrFormat("dynamic_slice_sizes %s must have one entry per dimension of %s",
                                    Dims(a.dynamic_slice_sizes), S(s)));
      }
      for (int64_t d = 0; d < s.rank(); ++d) {
        if (a.dynamic_slice_sizes[d] < 0 || a.dynamic_slice_sizes[d] > s.dims[d]) {
          return Fail(absl::StrFormat("dynamic slice size %d exceeds dimension %d of %s", a.dynamic_slice_sizes[d], d, S(s)));
        }
      }
      return std::optional<Shape>(Shape::Array(s.type, a.dynamic_slice_sizes));
    }
    case Opcode::kConcatenate: {
      HLO_RETURN_IF_ERROR(AtLeast(inst, 1));
      if (a.dimensions.size() != 1) return Fail("concatenate needs exactly one dimension");
      HLO_RETURN_IF_ERROR(IsArray(inst, 0));
      const Shape& first = inst.operand(0)->shape();
      int64_t dim = a.dimensions[0];
      HLO_RETURN_IF_ERROR(DimsInRange(a.dimensions, first.rank(), "concatenate dimension"));
      std::vector<int64_t> dims = first.dims;
      for (size_t i = 1; i < inst.operand_count(); ++i) {
        const Shape& s = inst.operand(i)->shape();
        if (s.rank() != first.rank() || s.type != first.type) {
          return Fail(absl::StrFormat("concatenate operands %s and %s differ in rank or type", S(first), S(s)));
        }
        for (int64_t d = 0; d < s.rank(); ++d) {
          if (d != dim && s.dims[d] != first.dims[d]) {
            return Fail(absl::StrFormat("concatenate operands %s and %s differ outside dimension %d", S(first), S(s), dim));
          }
        }
        dims[dim] += s.dims[dim];
      }
      return std::optional<Shape>(Shape::Array(first.type, dims));
    }
    case Opcode::kPad: {
      HLO_RETURN_IF_ERROR(Arity(inst, 2));
      HLO_RETURN_IF_ERROR(IsArray(inst, 0));
      const Shape& s = inst.operand(0)->shape();
      const Shape& v = inst.operand(1)->shape();
      if (!v.IsScalar() || v.type != s.type) {
        return Fail(absl::StrFormat("pad value must be a %s scalar, got %s", ElementTypeName(s.type), S(v)));
      }
      if (static_cast<int64_t>(a.padding.size()) != s.rank()) {
        return Fail(absl::StrFormat("padding has %d dimensions, operand %s has %d", a.padding.size(), S(s), s.rank()));
      }
      std::vector<int64_t> dims;
      for (int64_t d = 0; d < s.rank(); ++d) {
        const PaddingDim& p = a.padding[d];
        if (p.interior < 0) return Fail("interior padding cannot be negative");
        int64_t size = p.low + p.high + s.dims[d] + std::max<int64_t>(s.dims[d] - 1, 0) * p.interior;
        if (size < 0) return Fail(absl::StrFormat("padding makes dimension %d negative", d));
        dims.push_back(size);
      }
      return std::optional<Shape>(Shape::Array(s.type, dims));
    }
    case Opcode::kDot:
      return Dot(inst);
    case Opcode::kRaggedDot:
      return RaggedDot(inst);
    case Opcode::kScaledDot:
      return ScaledDot(inst);
    case Opcode::kConvolution:
      return Convolution(inst);
    case Opcode::kReduce:
      return Reduce(inst);
    case Opcode::kReduceWindow:
      return ReduceWindow(inst);
    case Opcode::kSelectAndScatter: {
      HLO_RETURN_IF_ERROR(Arity(inst, 3));
      const Shape& s = inst.operand(0)->shape();
      if (inst.called_computations().size() != 2) return Fail("select-and-scatter needs select and scatter computations");
      return std::optional<Shape>(WithType(s, s.type));
    }
    case Opcode::kGather:
      return Gather(inst);
    case Opcode::kScatter:
      return Scatter(inst);
    case Opcode::kSort: {
      HLO_RETURN_IF_ERROR(AtLeast(inst, 1));
      const Shape& first = inst.operand(0)->shape();
      std::vector<Shape> params;
      for (size_t i = 0; i < inst.operand_count(); ++i) {
        if (inst.operand(i)->shape().dims != first.dims) return Fail("sort operands have different dimensions");
        params.push_back(Shape::Scalar(inst.operand(i)->shape().type));
        params.push_back(Shape::Scalar(inst.operand(i)->shape().type));
      }
      if (a.dimensions.size() != 1) return Fail("sort needs exactly one dimension");
      HLO_RETURN_IF_ERROR(DimsInRange(a.dimensions, first.rank(), "sort dimension"));
      auto root = CheckCallee(inst, inst.to_apply(), params, "comparator");
      if (!root.ok()) return root.status();
      if (!(root->IsScalar() && root->type == ElementType::kPred)) return Fail("sort comparator must return pred[]");
      if (inst.operand_count() == 1) return std::optional<Shape>(NoLayout(first));
      return std::optional<Shape>(Shape::Tuple(OperandShapes(inst)));
    }
    case Opcode::kTuple: {
      std::vector<Shape> elements;
      for (const Shape& s : OperandShapes(inst)) elements.push_back(NoLayout(s));
      return std::optional<Shape>(Shape::Tuple(elements));
    }
    case Opcode::kGetTupleElement: {
      HLO_RETURN_IF_ERROR(Arity(inst, 1));
      const Shape& s = inst.operand(0)->shape();
      if (!s.IsTuple()) return Fail(absl::StrFormat("get-tuple-element operand must be a tuple, got %s", S(s)));
      if (a.tuple_index < 0 || a.tuple_index >= static_cast<int64_t>(s.tuple.size())) {
        return Fail(absl::StrFormat("tuple index %d out of range for %s", a.tuple_index, S(s)));
      }
      return std::optional<Shape>(NoLayout(s.tuple[a.tuple_index]));
    }
    case Opcode::kWhile: {
      HLO_RETURN_IF_ERROR(Arity(inst, 1));
      const Shape& s = inst.operand(0)->shape();
      auto body = CheckCallee(inst, inst.while_body(), {s}, "body");
      if (!body.ok()) return body.status();
      if (!body->Compatible(s)) {
        return Fail(absl::StrFormat("while body returns %s, the loop state is %s", S(*body), S(s)));
      }
      auto cond = CheckCallee(inst, inst.while_condition(), {s}, "condition");
      if (!cond.ok()) return cond.status();
      if (!(cond->IsScalar() && cond->type == ElementType::kPred)) {
        return Fail(absl::StrFormat("while condition must return pred[], returns %s", S(*cond)));
      }
      return std::optional<Shape>(NoLayout(s));
    }
    case Opcode::kConditional: {
      HLO_RETURN_IF_ERROR(AtLeast(inst, 1));
      const auto& branches = inst.called_computations();
      if (branches.empty()) return Fail("conditional has no branch computations");
      if (inst.operand_count() != branches.size() + 1) {
        return Fail(absl::StrFormat("conditional has %d branches but %d branch operands", branches.size(),
                                    inst.operand_count() - 1));
      }
      const Shape& selector = inst.operand(0)->shape();
      bool pred_ok = selector.type == ElementType::kPred && branches.size() == 2;
      if (!selector.IsScalar() || (!pred_ok && selector.type != ElementType::kS32)) {
        return Fail(absl::StrFormat("conditional selector must be pred[] (2 branches) or s32[], got %s", S(selector)));
      }
      std::optional<Shape> result;
      for (size_t i = 0; i < branches.size(); ++i) {
        auto root = CheckCallee(inst, branches[i], {inst.operand(i + 1)->shape()}, "branch");
        if (!root.ok()) return root.status();
        if (result && !result->Compatible(*root)) return Fail("conditional branches return different shapes");
        result = *root;
      }
      return result;
    }
    case Opcode::kCall:
    case Opcode::kFusion: {
      auto root = CheckCallee(inst, inst.to_apply(), OperandShapes(inst),
                              op == Opcode::kCall ? "called" : "fused");
      if (!root.ok()) return root.status();
      return std::optional<Shape>(*root);
    }
    case Opcode::kMap: {
      HLO_RETURN_IF_ERROR(AtLeast(inst, 1));
      std::vector<Shape> params;
      for (const Shape& s : OperandShapes(inst)) {
        if (s.dims != inst.operand(0)->shape().dims) return Fail("map operands have different dimensions");
        params.push_back(Shape::Scalar(s.type));
      }
      auto root = CheckCallee(inst, inst.to_apply(), params, "to_apply");
      if (!root.ok()) return root.status();
      return std::optional<Shape>(WithType(inst.operand(0)->shape(), root->type));
    }
    case Opcode::kAllReduce:
    case Opcode::kCollectivePermute:
    case Opcode::kOptimizationBarrier: {
      if (op != Opcode::kAllReduce || inst.to_apply()) {
        // all-reduce's to_apply is a scalar reduction of the element type.
      }
      if (op == Opcode::kCollectivePermute && inst.operand_count() != 1) return std::optional<Shape>();
      if (inst.operand_count() == 1) return std::optional<Shape>(NoLayout(inst.operand(0)->shape()));
      return std::optional<Shape>(Shape::Tuple(OperandShapes(inst)));
    }
    case Opcode::kAllGather:
    case Opcode::kReduceScatter: {
      // The group size comes from the runtime's replica count; check what
      // does not depend on it.
      if (inst.operand_count() != 1 || a.dimensions.size() != 1) return std::optional<Shape>();
      const Shape& s = inst.operand(0)->shape();
      if (!declared.IsArray() || declared.rank() != s.rank() || declared.type != s.type) {
        return Fail(absl::StrFormat("%s result %s must keep the operand's rank and type (%s)", inst.opcode_text(),
                                    S(declared), S(s)));
      }
      HLO_RETURN_IF_ERROR(DimsInRange(a.dimensions, s.rank(), "dimensions"));
      return std::optional<Shape>(NoLayout(declared));
    }
    case Opcode::kRaggedAllToAll: {
      // (input, output, input_offsets, send_sizes, output_offsets,
      // recv_sizes): rows of input land in output, whose shape the result
      // keeps; the four index arrays hold one entry per peer.
      HLO_RETURN_IF_ERROR(Arity(inst, 6));
      for (size_t i = 0; i < 6; ++i) HLO_RETURN_IF_ERROR(IsArray(inst, i));
      const Shape& in = inst.operand(0)->shape();
      const Shape& out = inst.operand(1)->shape();
      if (in.type != out.type || in.rank() < 1 || in.rank() != out.rank() ||
          !std::equal(in.dims.begin() + 1, in.dims.end(), out.dims.begin() + 1)) {
        return Fail(absl::StrFormat("ragged-all-to-all input %s and output %s must differ only in dimension 0",
                                    S(in), S(out)));
      }
      const Shape& offsets = inst.operand(2)->shape();
      for (size_t i = 2; i < 6; ++i) {
        const Shape& s = inst.operand(i)->shape();
        if (!IsInteger(s.type) || s.ElementCount() != offsets.ElementCount()) {
          return Fail(absl::StrFormat("ragged-all-to-all offsets and sizes must be integer arrays of one size, got %s",
                                      S(s)));
        }
      }
      return std::optional<Shape>(NoLayout(out));
    }
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
      HLO_RETURN_IF_ERROR(Arity(inst, 0));
      return std::optional<Shape>(Shape::Scalar(ElementType::kU32));
    case Opcode::kAfterAll:
      return std::optional<Shape>(Shape::Token());
    case Opcode::kAddDependency:
      HLO_RETURN_IF_ERROR(Arity(inst, 2));
      return std::optional<Shape>(NoLayout(inst.operand(0)->shape()));
    case Opcode::kRngBitGenerator: {
      HLO_RETURN_IF_ERROR(Arity(inst, 1));
      if (!declared.IsTuple() || declared.tuple.size() != 2 ||
          !declared.tuple[0].Compatible(inst.operand(0)->shape())) {
        return Fail("rng-bit-generator returns (state, bits) with the state shaped like its operand");
      }
      return std::optional<Shape>(NoLayout(declared));
    }
    default:
      return std::optional<Shape>();
  }
}

}  // namespace

absl::StatusOr<std::optional<Shape>> InferShape(const Instruction& instruction) {
  for (const Instruction* operand : instruction.operands()) {
    if (!operand) return Fail("an operand is missing");
  }
  return Infer(instruction);
}

}  // namespace neuron::hlo
