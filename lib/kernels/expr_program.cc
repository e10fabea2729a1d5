#include "lib/kernels/expr_program.h"

#include <algorithm>
#include <array>
#include <bit>
#include <complex>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lib/hlo/literal.h"
#include "lib/kernels/vector_math.h"

namespace neuron::kernels {

using hlo::Opcode;
using ET = ElementType;

enum class NodeKind : uint8_t { kInput, kConst, kIota, kAlias, kOp };

struct ExprNode {
  NodeKind kind = NodeKind::kOp;
  Opcode op = Opcode::kUnknown;
  ET type = ET::kInvalid;
  Domain dom = Domain::kF32;
  int a = -1, b = -1, c = -1;  // operand nodes
  int input = -1;              // kInput: index into inputs_
  double cf = 0;               // kConst value (float domains)
  int64_t ci = 0;              // kConst value (int domain)
  double cf_imag = 0;          // kConst imaginary part (complex domains)
  int64_t iota_stride = 1, iota_dim = 1;  // kIota over the lane dims
  hlo::ComparisonDirection dir = hlo::ComparisonDirection::kEq;
  bool total_order = false;
  int exponent_bits = 0, mantissa_bits = 0;
  uint64_t salt = 0;  // stochastic rounding stream of this node
};

namespace {

bool IsSimpleElementwise(Opcode op) {
  switch (op) {
    case Opcode::kAbs: case Opcode::kAdd: case Opcode::kAnd: case Opcode::kAtan2:
    case Opcode::kCbrt: case Opcode::kCeil: case Opcode::kClamp: case Opcode::kClz:
    case Opcode::kCompare: case Opcode::kConvert: case Opcode::kCopy: case Opcode::kCos:
    case Opcode::kDivide: case Opcode::kErf: case Opcode::kExp: case Opcode::kExpm1:
    case Opcode::kFloor: case Opcode::kIsFinite: case Opcode::kLog: case Opcode::kLog1p:
    case Opcode::kLogistic: case Opcode::kMaximum: case Opcode::kMinimum:
    case Opcode::kMultiply: case Opcode::kNegate: case Opcode::kNot: case Opcode::kOr:
    case Opcode::kPopulationCount: case Opcode::kPower: case Opcode::kReducePrecision:
    case Opcode::kRemainder: case Opcode::kRoundNearestAfz: case Opcode::kRoundNearestEven:
    case Opcode::kRsqrt: case Opcode::kSelect: case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic: case Opcode::kShiftRightLogical: case Opcode::kSign:
    case Opcode::kSin: case Opcode::kSqrt: case Opcode::kSubtract: case Opcode::kTan:
    case Opcode::kTanh: case Opcode::kXor: case Opcode::kBitcastConvert:
    case Opcode::kStochasticConvert: case Opcode::kReal: case Opcode::kImag:
    case Opcode::kComplex:
      return true;
    default:
      return false;
  }
}

int64_t Count(const hlo::Shape& s) { return s.ElementCount().value_or(-1); }

// The direction that compares b with a as `dir` compares a with b.
hlo::ComparisonDirection Mirrored(hlo::ComparisonDirection dir) {
  using D = hlo::ComparisonDirection;
  switch (dir) {
    case D::kGe: return D::kLe;
    case D::kGt: return D::kLt;
    case D::kLe: return D::kGe;
    case D::kLt: return D::kGt;
    default: return dir;
  }
}

}  // namespace

bool IsExprOpcode(Opcode op) { return IsSimpleElementwise(op); }

ExprProgram::ExprProgram() = default;
ExprProgram::~ExprProgram() = default;
ExprProgram::ExprProgram(ExprProgram&&) noexcept = default;
ExprProgram& ExprProgram::operator=(ExprProgram&&) noexcept = default;

class ExprProgram::Builder {
 public:
  Builder(ExprProgram& p, bool lanes_mode, int64_t lane_count)
      : p_(p), lanes_mode_(lanes_mode), lane_count_(lane_count) {}

  int Add(ExprNode n) {
    n.dom = DomainOf(n.type);
    n.salt = p_.nodes_.size() * 0x9e3779b97f4a7c15ull + 1;
    p_.nodes_.push_back(n);
    return static_cast<int>(p_.nodes_.size()) - 1;
  }

  int AddInput(ExprInput in) {
    p_.inputs_.push_back(std::move(in));
    ExprNode n;
    n.kind = NodeKind::kInput;
    n.type = p_.inputs_.back().type;
    n.input = static_cast<int>(p_.inputs_.size()) - 1;
    return Add(n);
  }

  // Node for a parameter used at lane-shape or scalar-shape.
  int ParamNode(const hlo::Instruction* param, InputMode mode) {
    auto key = std::make_pair(param, static_cast<int>(mode));
    auto it = param_nodes_.find(key);
    if (it != param_nodes_.end()) return it->second;
    ExprInput in;
    in.parameter = static_cast<int>(param->attrs().parameter_number);
    in.mode = mode;
    in.type = param->shape().type;
    int id = AddInput(std::move(in));
    param_nodes_[key] = id;
    return id;
  }

  absl::StatusOr<int> Visit(const hlo::Instruction* instr) {
    auto it = done_.find(instr);
    if (it != done_.end()) return it->second;
    absl::StatusOr<int> r = VisitNew(instr);
    if (r.ok()) done_[instr] = *r;
    return r;
  }

 private:
  absl::Status Unsupported(const hlo::Instruction* instr, std::string_view why) {
    return absl::UnimplementedError(
        absl::StrCat("not elementwise: ", instr->Describe(), ": ", std::string(why)));
  }

  absl::StatusOr<int> VisitNew(const hlo::Instruction* instr) {
    const hlo::Shape& shape = instr->shape();
    if (!shape.IsArray() || !IsSupportedElementType(shape.type))
      return Unsupported(instr, "element type");
    int64_t count = Count(shape);
    bool lane_shaped = lanes_mode_ || count == lane_count_;
    if (!lane_shaped && count != 1) return Unsupported(instr, "shape differs from the result");
    Opcode op = instr->opcode();
    if (op == Opcode::kParameter) {
      if (lanes_mode_) return ParamNode(instr, InputMode::kFull);
      return ParamNode(instr, count == lane_count_ ? InputMode::kFull : InputMode::kSplat);
    }
    if (op == Opcode::kConstant) {
      const auto& lit = instr->attrs().literal;
      if (!lit || lit->elided()) return Unsupported(instr, "constant without values");
      if (count == 1 || lanes_mode_) {
        ExprNode n;
        n.kind = NodeKind::kConst;
        n.type = shape.type;
        if (DomainOf(shape.type) == Domain::kI64) {
          n.ci = lit->GetInt(0);
        } else {
          n.cf = lit->GetDouble(0);
          if (IsComplexDomain(DomainOf(shape.type))) n.cf_imag = lit->GetImag(0);
        }
        return Add(n);
      }
      ExprInput in;
      in.mode = InputMode::kFull;
      in.type = shape.type;
      in.constant = lit->data();
      return AddInput(std::move(in));
    }
    if (op == Opcode::kIota) {
      if (lanes_mode_) return Unsupported(instr, "iota in a reducer");
      ExprNode n;
      n.kind = NodeKind::kIota;
      n.type = shape.type;
      int64_t dim = instr->attrs().iota_dimension;
      if (count == 1) { n.iota_dim = 1; n.iota_stride = 1; return Add(n); }
      if (dim < 0 || dim >= shape.rank()) return Unsupported(instr, "iota dimension");
      int64_t stride = 1;
      for (int64_t d = shape.rank() - 1; d > dim; --d) stride *= shape.dims[d];
      n.iota_stride = stride;
      n.iota_dim = shape.dims[dim];
      // The lane dims must be this iota's dims for the index to mean the same.
      if (shape.dims != p_.lane_dims_) return Unsupported(instr, "iota reshaped");
      return Add(n);
    }
    if (op == Opcode::kReshape || op == Opcode::kBitcast ||
        (op == Opcode::kBroadcast && Count(instr->operand(0)->shape()) == count) ||
        (op == Opcode::kCopy)) {
      // Same elements in the same row-major order.
      const hlo::Instruction* src = instr->operand(0);
      if (src->shape().type != shape.type) return Unsupported(instr, "type change");
      if (op == Opcode::kBroadcast) {
        // Adding size-1 dims keeps order only if dims are increasing.
        const auto& dims = instr->attrs().dimensions;
        for (size_t i = 1; i < dims.size(); ++i)
          if (dims[i] < dims[i - 1]) return Unsupported(instr, "transposing broadcast");
      }
      absl::StatusOr<int> a = Visit(src);
      if (!a.ok()) return a;
      ExprNode n;
      n.kind = NodeKind::kAlias;
      n.type = shape.type;
      n.a = *a;
      return Add(n);
    }
    if (op == Opcode::kBroadcast) {
      const hlo::Instruction* src = instr->operand(0);
      if (Count(src->shape()) == 1) {
        // Scalar broadcast: the operand is computed per lane, splat.
        absl::StatusOr<int> a = Visit(src);
        if (!a.ok()) return a;
        ExprNode n;
        n.kind = NodeKind::kAlias;
        n.type = shape.type;
        n.a = *a;
        return Add(n);
      }
      if (src->opcode() != Opcode::kParameter && src->opcode() != Opcode::kConstant)
        return Unsupported(instr, "broadcast of a computed value");
      if (shape.dims != p_.lane_dims_) return Unsupported(instr, "broadcast reshaped");
      ExprInput in;
      in.mode = InputMode::kMapped;
      in.type = shape.type;
      in.out_dims = shape.dims;
      in.src_strides.assign(shape.rank(), 0);
      const auto& bdims = instr->attrs().dimensions;
      int64_t stride = 1;
      for (int64_t i = static_cast<int64_t>(bdims.size()) - 1; i >= 0; --i) {
        in.src_strides[bdims[i]] = stride;
        stride *= src->shape().dims[i];
      }
      if (src->opcode() == Opcode::kParameter) {
        in.parameter = static_cast<int>(src->attrs().parameter_number);
      } else {
        if (!src->attrs().literal || src->attrs().literal->elided())
          return Unsupported(instr, "constant without values");
        in.constant = src->attrs().literal->data();
      }
      return AddInput(std::move(in));
    }
    if (!IsSimpleElementwise(op)) return Unsupported(instr, "opcode");
    ExprNode n;
    n.op = op;
    n.type = shape.type;
    int ids[3] = {-1, -1, -1};
    if (instr->operand_count() > 3) return Unsupported(instr, "operand count");
    for (size_t i = 0; i < instr->operand_count(); ++i) {
      if (!IsSupportedElementType(instr->operand(i)->shape().type))
        return Unsupported(instr, "operand element type");
      absl::StatusOr<int> r = Visit(instr->operand(i));
      if (!r.ok()) return r;
      ids[i] = *r;
    }
    n.a = ids[0];
    n.b = ids[1];
    n.c = ids[2];
    if (op == Opcode::kCompare) {
      n.dir = instr->attrs().comparison_direction.value_or(hlo::ComparisonDirection::kEq);
      n.total_order = instr->attrs().comparison_type == "TOTALORDER";
    }
    if (op == Opcode::kReducePrecision) {
      n.exponent_bits = static_cast<int>(instr->attrs().exponent_bits);
      n.mantissa_bits = static_cast<int>(instr->attrs().mantissa_bits);
    }
    if (op == Opcode::kBitcastConvert &&
        hlo::BitWidth(shape.type) != hlo::BitWidth(instr->operand(0)->shape().type))
      return Unsupported(instr, "bitcast-convert changing width");
    return Add(n);
  }

  ExprProgram& p_;
  bool lanes_mode_;
  int64_t lane_count_;
  std::map<const hlo::Instruction*, int> done_;
  std::map<std::pair<const hlo::Instruction*, int>, int> param_nodes_;
};

absl::StatusOr<ExprProgram> ExprProgram::Compile(const hlo::Computation& comp,
                                                 bool lanes_mode) {
  if (comp.root() == nullptr) return absl::InvalidArgumentError("computation without root");
  return CompileValue(*comp.root(), lanes_mode);
}

absl::StatusOr<ExprProgram> ExprProgram::CompileValue(const hlo::Instruction& value,
                                                      bool lanes_mode) {
  ExprProgram p;
  const hlo::Instruction* root = &value;
  std::vector<const hlo::Instruction*> outs;
  if (root->opcode() == Opcode::kTuple) {
    for (auto* o : root->operands()) outs.push_back(o);
  } else {
    outs.push_back(root);
  }
  for (auto* o : outs)
    if (!o->shape().IsArray()) return absl::UnimplementedError("non-array output");
  p.lane_dims_ = outs[0]->shape().dims;
  int64_t lanes = Count(outs[0]->shape());
  for (auto* o : outs)
    if (!lanes_mode && Count(o->shape()) != lanes)
      return absl::UnimplementedError("outputs of different sizes");
  Builder b(p, lanes_mode, lanes);
  for (auto* o : outs) {
    absl::StatusOr<int> id = b.Visit(o);
    if (!id.ok()) return id.status();
    p.outputs_.push_back(*id);
    p.output_types_.push_back(o->shape().type);
  }
  // Recognize op(p0, p1) for reducer fast paths.
  if (lanes_mode && outs.size() == 1 && p.nodes_.size() == 3 &&
      p.nodes_[2].kind == NodeKind::kOp && p.nodes_[2].a >= 0 && p.nodes_[2].b >= 0 &&
      p.nodes_[p.nodes_[2].a].kind == NodeKind::kInput &&
      p.nodes_[p.nodes_[2].b].kind == NodeKind::kInput &&
      p.inputs_.size() == 2 && p.inputs_[0].parameter != p.inputs_[1].parameter) {
    p.simple_binary_ = p.nodes_[2].op;
    const ExprNode& cmp = p.nodes_[2];
    if (cmp.op == Opcode::kCompare && !cmp.total_order) {
      const bool swapped = p.inputs_[p.nodes_[cmp.a].input].parameter != 0;
      p.simple_compare_ = swapped ? Mirrored(cmp.dir) : cmp.dir;
    }
  }
  return p;
}

bool ExprProgram::WidenNarrowFloats() {
  for (const ExprNode& nd : nodes_) {
    if (nd.kind != NodeKind::kOp || nd.op != Opcode::kBitcastConvert) continue;
    if (IsNarrowFloat(nd.type) || IsNarrowFloat(nodes_[nd.a].type)) return false;
  }
  for (ExprNode& nd : nodes_)
    if (IsNarrowFloat(nd.type) && nd.dom == Domain::kF32) nd.type = ET::kF32;
  return true;
}

absl::StatusOr<ExprProgram> ExprProgram::CompileInstruction(const hlo::Instruction& instr,
                                                            const std::vector<bool>& splat) {
  if (!IsSimpleElementwise(instr.opcode()))
    return absl::UnimplementedError(absl::StrCat("not elementwise: ", instr.Describe()));
  ExprProgram p;
  p.lane_dims_ = instr.shape().dims;
  int64_t lanes = Count(instr.shape());
  std::vector<int> ids;
  for (size_t i = 0; i < instr.operand_count(); ++i) {
    const hlo::Shape& s = instr.operand(i)->shape();
    if (!s.IsArray() || !IsSupportedElementType(s.type))
      return absl::UnimplementedError(absl::StrCat("element type of operand ", i, " of ", instr.Describe()));
    ExprInput in;
    in.parameter = static_cast<int>(i);
    in.type = s.type;
    bool as_splat = i < splat.size() && splat[i];
    in.mode = (Count(s) == lanes && !as_splat) ? InputMode::kFull : InputMode::kSplat;
    p.inputs_.push_back(std::move(in));
    ExprNode n;
    n.kind = NodeKind::kInput;
    n.type = s.type;
    n.dom = DomainOf(s.type);
    n.input = static_cast<int>(i);
    p.nodes_.push_back(n);
    ids.push_back(static_cast<int>(i));
  }
  ExprNode n;
  n.op = instr.opcode();
  n.type = instr.shape().type;
  if (!IsSupportedElementType(n.type))
    return absl::UnimplementedError(absl::StrCat("element type of ", instr.Describe()));
  n.dom = DomainOf(n.type);
  n.a = ids.size() > 0 ? ids[0] : -1;
  n.b = ids.size() > 1 ? ids[1] : -1;
  n.c = ids.size() > 2 ? ids[2] : -1;
  n.salt = 0x51ed270b27e2a3c5ull;
  if (n.op == Opcode::kCompare) {
    n.dir = instr.attrs().comparison_direction.value_or(hlo::ComparisonDirection::kEq);
    n.total_order = instr.attrs().comparison_type == "TOTALORDER";
  }
  if (n.op == Opcode::kReducePrecision) {
    n.exponent_bits = static_cast<int>(instr.attrs().exponent_bits);
    n.mantissa_bits = static_cast<int>(instr.attrs().mantissa_bits);
  }
  if (n.op == Opcode::kBitcastConvert &&
      hlo::BitWidth(n.type) != hlo::BitWidth(instr.operand(0)->shape().type))
    return absl::UnimplementedError("bitcast-convert changing width");
  p.nodes_.push_back(n);
  p.outputs_.push_back(static_cast<int>(p.nodes_.size()) - 1);
  p.output_types_.push_back(n.type);
  return p;
}

bool ExprProgram::IsPlainConvert() const {
  if (outputs_.size() != 1 || inputs_.size() != 1 || inputs_[0].mode != InputMode::kFull)
    return false;
  const ExprNode& out = nodes_[outputs_[0]];
  if (out.kind != NodeKind::kOp || out.op != Opcode::kConvert) return false;
  int a = out.a;
  while (nodes_[a].kind == NodeKind::kAlias) a = nodes_[a].a;
  return nodes_[a].kind == NodeKind::kInput;
}

ExprScratch ExprProgram::MakeScratch() const {
  ExprScratch s;
  s.regs.assign(nodes_.size() * kTile * 2, 0);  // 16 bytes per lane
  s.bytes.assign(kTile * 16, 0);
  // Constants never change: their registers are filled here, once.
  for (size_t id = 0; id < nodes_.size(); ++id) {
    const ExprNode& nd = nodes_[id];
    if (nd.kind != NodeKind::kConst) continue;
    void* slot = s.regs.data() + id * kTile * 2;
    if (nd.dom == Domain::kC64) {
      std::fill_n(static_cast<std::complex<float>*>(slot), kTile,
                  std::complex<float>(static_cast<float>(nd.cf), static_cast<float>(nd.cf_imag)));
    } else if (nd.dom == Domain::kC128) {
      std::fill_n(static_cast<std::complex<double>*>(slot), kTile, std::complex<double>(nd.cf, nd.cf_imag));
    } else if (nd.dom == Domain::kF32) {
      float v = static_cast<float>(nd.cf);
      if (IsNarrowFloat(nd.type)) QuantizeF32(nd.type, &v, 1);
      std::fill_n(static_cast<float*>(slot), kTile, v);
    } else if (nd.dom == Domain::kF64) {
      std::fill_n(static_cast<double*>(slot), kTile, nd.cf);
    } else {
      std::fill_n(static_cast<int64_t*>(slot), kTile, WrapInt(nd.type, nd.ci));
    }
  }
  return s;
}

namespace {

std::optional<F32Op> F32OpOf(Opcode op) {
  switch (op) {
    case Opcode::kAdd: return F32Op::kAdd;
    case Opcode::kSubtract: return F32Op::kSubtract;
    case Opcode::kMultiply: return F32Op::kMultiply;
    case Opcode::kDivide: return F32Op::kDivide;
    case Opcode::kMaximum: return F32Op::kMaximum;
    case Opcode::kMinimum: return F32Op::kMinimum;
    case Opcode::kNegate: return F32Op::kNegate;
    case Opcode::kAbs: return F32Op::kAbs;
    case Opcode::kSqrt: return F32Op::kSqrt;
    case Opcode::kRsqrt: return F32Op::kRsqrt;
    case Opcode::kExp: return F32Op::kExp;
    case Opcode::kTanh: return F32Op::kTanh;
    case Opcode::kLogistic: return F32Op::kLogistic;
    case Opcode::kLog: return F32Op::kLog;
    case Opcode::kFloor: return F32Op::kFloor;
    case Opcode::kCeil: return F32Op::kCeil;
    case Opcode::kRoundNearestEven: return F32Op::kRoundNearestEven;
    default: return std::nullopt;
  }
}

bool IsF32Binary(F32Op op) { return op <= kLastBinaryF32Op; }

// A broadcast whose source dims are one contiguous run of the output's
// dims, in order (a bias along the last dims, a per-channel scale, ...):
// lane i then reads element (i / repeat) % period. Or two such runs with
// broadcast dims between them (a rotary table [tokens, d] for every head
// of [tokens, heads, d]): the first run is the outer period.
std::optional<StreamMap> BroadcastAsPeriods(const ExprInput& in) {
  const int64_t rank = static_cast<int64_t>(in.out_dims.size());
  auto spans = [&](int64_t d) { return in.src_strides[d] != 0 && in.out_dims[d] != 1; };
  auto broadcast = [&](int64_t d) { return in.src_strides[d] == 0 && in.out_dims[d] != 1; };
  // The runs of dims the source spans, as [first, last] pairs (dims of
  // size 1 belong to either).
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t d = 0; d < rank; ++d) {
    if (!spans(d)) continue;
    bool joins = !runs.empty();
    for (int64_t e = joins ? runs.back().second + 1 : d; e < d; ++e) joins = joins && !broadcast(e);
    if (joins) runs.back().second = d;
    else runs.push_back({d, d});
  }
  if (runs.empty() || runs.size() > 2) return std::nullopt;  // a splat, or too scattered
  // Each run must be dense in the source, the later one innermost.
  int64_t stride = 1;
  std::vector<int64_t> extent;
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
    int64_t e = 1;
    for (int64_t d = it->second; d >= it->first; --d) {
      if (in.out_dims[d] == 1) continue;
      if (in.src_strides[d] != stride) return std::nullopt;
      stride *= in.out_dims[d];
      e *= in.out_dims[d];
    }
    extent.push_back(e);
  }
  auto lanes_after = [&](int64_t d) {
    int64_t r = 1;
    for (int64_t e = d + 1; e < rank; ++e) r *= in.out_dims[e];
    return r;
  };
  StreamMap map;
  map.period = extent[0];
  map.repeat = lanes_after(runs.back().second);
  if (runs.size() == 2) {
    map.outer_period = extent[1];
    map.outer_repeat = lanes_after(runs.front().second);
  }
  return map;
}

}  // namespace

namespace {

// The formats the tile runner computes on (in f32) and stores.
std::optional<TileStorage> TileStorageOf(ET type) {
  switch (type) {
    case ET::kF32: return TileStorage::kF32;
    case ET::kBF16: return TileStorage::kBF16;
    case ET::kF16: return TileStorage::kF16;
    default: return std::nullopt;
  }
}

// The step that rounds an f32 value to `type`'s grid; none for f32.
std::optional<F32Op> RoundingTo(ET type) {
  if (type == ET::kBF16) return F32Op::kRoundBF16;
  if (type == ET::kF16) return F32Op::kRoundF16;
  return std::nullopt;
}

// Ops whose result is one of their operands' values or an integer, so it
// stays on a bf16/f16 operand's grid without rounding.
bool KeepsTheGrid(F32Op op) {
  switch (op) {
    case F32Op::kMaximum: case F32Op::kMinimum: case F32Op::kNegate: case F32Op::kAbs:
    case F32Op::kFloor: case F32Op::kCeil: case F32Op::kRoundNearestEven:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::optional<F32Plan> ExprProgram::LowerToF32() const {
  F32Plan plan;
  for (ET t : output_types_) {
    std::optional<TileStorage> storage = TileStorageOf(t);
    if (!storage) return std::nullopt;
    plan.output_storage.push_back(*storage);
  }
  const int count = static_cast<int>(nodes_.size());
  // Copies, converts that cannot change the value (to the same type, or
  // widening to f32) are the value they copy.
  std::vector<int> root(count);
  // Predicates made inside the program (compares, their and/or/not, pred
  // constants) are lane masks; pred inputs and outputs are not taken.
  for (int id = 0; id < count; ++id) {
    const ExprNode& nd = nodes_[id];
    const bool mask = nd.type == ET::kPred && nd.kind != NodeKind::kInput;
    if (!TileStorageOf(nd.type) && !mask) return std::nullopt;
    const bool convert = nd.kind == NodeKind::kOp &&
                         (nd.op == Opcode::kConvert || nd.op == Opcode::kStochasticConvert);
    const bool from_mask = convert && nodes_[nd.a].type == ET::kPred;
    if (convert && mask && !from_mask) return std::nullopt;  // a value to pred
    const bool same = nd.kind == NodeKind::kAlias ||
                      (nd.kind == NodeKind::kOp && nd.op == Opcode::kCopy) ||
                      (convert && (nodes_[nd.a].type == nd.type || (nd.type == ET::kF32 && !from_mask)));
    root[id] = same ? root[nd.a] : id;
  }

  // Leaves become streams and scalars; ops become steps, in order, each
  // narrow result followed by its rounding step. A step's operands are
  // values: >= 0 a step's result, < 0 the leaf node -(v + 1).
  std::vector<F32Operand> leaf(count);
  std::vector<int> value_of(count, 0);  // node -> its value
  std::vector<std::array<int, 2>> step_args;
  std::vector<int> stream_of_input(inputs_.size(), -1);
  auto add_step = [&](F32Op op, int a, int b) {
    plan.steps.push_back(F32Step{op});
    step_args.push_back({a, b});
    return static_cast<int>(plan.steps.size()) - 1;
  };
  // A scalar no node stands for (a mask's all-ones, 1.0 for a converted
  // mask): a leaf past the nodes'.
  auto add_scalar = [&](float v) {
    leaf.push_back({F32Operand::kScalar, static_cast<int32_t>(plan.scalars.size())});
    plan.scalars.push_back(v);
    plan.scalar_inputs.push_back(-1);
    return -static_cast<int>(leaf.size());
  };
  const float all_ones = std::bit_cast<float>(~uint32_t{0});
  auto compare_op = [](hlo::ComparisonDirection dir) {
    switch (dir) {
      case hlo::ComparisonDirection::kEq: return F32Op::kCompareEq;
      case hlo::ComparisonDirection::kNe: return F32Op::kCompareNe;
      case hlo::ComparisonDirection::kLt: return F32Op::kCompareLt;
      case hlo::ComparisonDirection::kLe: return F32Op::kCompareLe;
      case hlo::ComparisonDirection::kGt: return F32Op::kCompareGt;
      case hlo::ComparisonDirection::kGe: break;
    }
    return F32Op::kCompareGe;
  };
  for (int id = 0; id < count; ++id) {
    const ExprNode& nd = nodes_[id];
    if (root[id] != id) {
      value_of[id] = value_of[root[id]];
      continue;
    }
    switch (nd.kind) {
      case NodeKind::kInput: {
        const ExprInput& in = inputs_[nd.input];
        const std::optional<TileStorage> storage = TileStorageOf(in.type);
        if (!storage) return std::nullopt;
        if (in.mode == InputMode::kFull || in.mode == InputMode::kMapped) {
          if (stream_of_input[nd.input] < 0) {
            StreamMap map;  // a whole array
            if (in.mode == InputMode::kMapped) {
              std::optional<StreamMap> periodic = BroadcastAsPeriods(in);
              if (!periodic) return std::nullopt;
              map = *periodic;
            }
            stream_of_input[nd.input] = static_cast<int>(plan.stream_inputs.size());
            plan.stream_inputs.push_back(nd.input);
            plan.stream_storage.push_back(*storage);
            plan.stream_maps.push_back(map);
          }
          leaf[id] = {F32Operand::kStream, stream_of_input[nd.input]};
        } else if (in.mode == InputMode::kSplat) {
          leaf[id] = {F32Operand::kScalar, static_cast<int32_t>(plan.scalars.size())};
          plan.scalars.push_back(0.0f);
          plan.scalar_inputs.push_back(nd.input);
        } else {
          return std::nullopt;
        }
        value_of[id] = -(id + 1);
        continue;
      }
      case NodeKind::kConst: {
        float v = static_cast<float>(nd.cf);
        if (nd.type == ET::kPred) v = (nd.dom == Domain::kI64 ? nd.ci != 0 : nd.cf != 0) ? all_ones : 0.0f;
        if (IsNarrowFloat(nd.type)) QuantizeF32(nd.type, &v, 1);
        leaf[id] = {F32Operand::kScalar, static_cast<int32_t>(plan.scalars.size())};
        plan.scalars.push_back(v);
        plan.scalar_inputs.push_back(-1);
        value_of[id] = -(id + 1);
        continue;
      }
      case NodeKind::kIota:
      case NodeKind::kAlias:
        return std::nullopt;  // aliases were resolved above
      case NodeKind::kOp:
        break;
    }
    const bool mask = nd.type == ET::kPred;
    if (nd.op == Opcode::kConvert && nodes_[nd.a].type == ET::kPred) {
      // A mask to 1 or 0 (exact in every float type).
      value_of[id] = add_step(F32Op::kAndBits, value_of[nd.a], add_scalar(1.0f));
      continue;
    }
    if (nd.op == Opcode::kCompare) {
      if (nd.total_order || !TileStorageOf(nodes_[nd.a].type)) return std::nullopt;
      value_of[id] = add_step(compare_op(nd.dir), value_of[nd.a], value_of[nd.b]);
      continue;
    }
    if (mask && (nd.op == Opcode::kAnd || nd.op == Opcode::kOr || nd.op == Opcode::kXor)) {
      const F32Op op = nd.op == Opcode::kAnd ? F32Op::kAndBits : nd.op == Opcode::kOr ? F32Op::kOrBits : F32Op::kXorBits;
      value_of[id] = add_step(op, value_of[nd.a], value_of[nd.b]);
      continue;
    }
    if (mask && nd.op == Opcode::kNot) {
      value_of[id] = add_step(F32Op::kXorBits, value_of[nd.a], add_scalar(all_ones));
      continue;
    }
    if (mask) return std::nullopt;
    if (nd.op == Opcode::kSelect) {
      // (p & on_true) | (~p & on_false): one of the two values, bit for bit.
      if (nodes_[nd.a].type != ET::kPred) return std::nullopt;
      const int t = add_step(F32Op::kAndBits, value_of[nd.a], value_of[nd.b]);
      const int f = add_step(F32Op::kAndNotBits, value_of[nd.a], value_of[nd.c]);
      value_of[id] = add_step(F32Op::kOrBits, t, f);
      continue;
    }
    if (nd.op == Opcode::kClamp) {
      // clamp(lo, x, hi) = min(max(x, lo), hi), as the interpreter has it.
      const int v = add_step(F32Op::kMaximum, value_of[nd.b], value_of[nd.a]);
      value_of[id] = add_step(F32Op::kMinimum, v, value_of[nd.c]);
      continue;
    }
    if (nd.op == Opcode::kConvert) {
      // Narrowing (f32 -> bf16, f16 <-> bf16): one rounding step. With
      // stochastic rounding on, the interpreter runs these instead.
      value_of[id] = add_step(*RoundingTo(nd.type), value_of[nd.a], 0);
      plan.rounds_converts = true;
      continue;
    }
    std::optional<F32Op> op = F32OpOf(nd.op);
    if (!op || nd.c >= 0 || (nd.b >= 0) != IsF32Binary(*op)) return std::nullopt;
    int value = add_step(*op, value_of[nd.a], nd.b >= 0 ? value_of[nd.b] : 0);
    if (std::optional<F32Op> round = RoundingTo(nd.type); round && !KeepsTheGrid(*op))
      value = add_step(*round, value, 0);
    value_of[id] = value;
  }
  if (plan.stream_inputs.size() > 64) return std::nullopt;
  // A last step that rounds what only narrow outputs of its type take is
  // the stores' own rounding: drop it (rounding twice to one grid is
  // rounding once).
  if (!plan.steps.empty()) {
    const int last = static_cast<int>(plan.steps.size()) - 1;
    const F32Op op = plan.steps[last].op;
    const std::optional<TileStorage> grid =
        op == F32Op::kRoundBF16 ? std::optional(TileStorage::kBF16)
        : op == F32Op::kRoundF16 ? std::optional(TileStorage::kF16)
                                 : std::nullopt;
    bool only_stored = grid.has_value();
    for (int i = 0; i < last && only_stored; ++i)
      only_stored = step_args[i][0] != last && step_args[i][1] != last;
    for (size_t j = 0; j < outputs_.size() && only_stored; ++j)
      only_stored = value_of[outputs_[j]] != last || plan.output_storage[j] == *grid;
    if (only_stored) {
      const int rounded = step_args[last][0];
      for (int o : outputs_)
        if (value_of[o] == last) value_of[o] = rounded;
      plan.steps.pop_back();
      step_args.pop_back();
    }
  }
  const int steps = static_cast<int>(plan.steps.size());
  auto arity = [&](int step) { return IsF32Binary(plan.steps[step].op) ? 2 : 1; };

  // A step's result stays in registers for the step right after it; it is
  // also stored to a slot when anything else reads it.
  constexpr int kForever = 1 << 30;
  std::vector<int> last_read(steps, -1);  // last step reading it from a slot
  std::vector<bool> spill(steps, false);
  auto note_read = [&](int value, int reader_step) {
    if (value < 0 || reader_step == value + 1) return;
    spill[value] = true;
    last_read[value] = std::max(last_read[value], reader_step);
  };
  for (int i = 0; i < steps; ++i)
    for (int k = 0; k < arity(i); ++k) note_read(step_args[i][k], i);
  for (int o : outputs_) {
    const int producer = value_of[o];
    if (producer >= 0 && producer != steps - 1) {
      spill[producer] = true;
      last_read[producer] = kForever;
    }
  }

  auto operand = [&](int value, int reader_step) -> F32Operand {
    if (value < 0) return leaf[-value - 1];
    if (value == reader_step - 1) return {F32Operand::kAcc, 0};
    return {F32Operand::kSlot, plan.steps[value].dst};
  };
  std::vector<int> free_slots;
  std::vector<std::vector<int>> release_after(steps);  // slots free once a step ran
  for (int i = 0; i < steps; ++i) {
    F32Step& step = plan.steps[i];
    step.a = operand(step_args[i][0], i);
    if (arity(i) == 2) step.b = operand(step_args[i][1], i);
    // Slots read for the last time by the step before are free now: this
    // step's operands are still being read, so they keep theirs.
    if (i > 0)
      for (int slot : release_after[i - 1]) free_slots.push_back(slot);
    step.spill = spill[i];
    if (!step.spill) continue;
    if (free_slots.empty()) {
      step.dst = plan.slot_count++;
    } else {
      step.dst = free_slots.back();
      free_slots.pop_back();
    }
    if (last_read[i] < kForever) release_after[last_read[i]].push_back(step.dst);
  }
  for (int o : outputs_) plan.outputs.push_back(operand(value_of[o], steps));
  return plan;
}

// ---------------------------------------------------------------------------
// Lane kernels.
namespace {

template <typename F>
inline F ReducePrecision(F x, int exponent_bits, int mantissa_bits);

template <>
inline float ReducePrecision<float>(float x, int eb, int mb) {
  if (std::isnan(x)) return mb > 0 ? x : std::numeric_limits<float>::infinity();
  uint32_t u = std::bit_cast<uint32_t>(x);
  if (mb < 23) {
    uint32_t last = 1u << (23 - mb);
    uint32_t bias = (last >> 1) - 1;
    uint32_t lastbit = (u & last) >> (23 - mb);
    u = (u + lastbit + bias) & ~(last - 1);
  }
  if (eb < 8) {
    uint32_t exp_mask = 0xffu << 23;
    int64_t red_bias = (int64_t{1} << (eb - 1)) - 1;
    uint32_t max_e = static_cast<uint32_t>(127 + red_bias);
    uint32_t min_e = static_cast<uint32_t>(127 - red_bias);
    uint32_t e = u & exp_mask;
    uint32_t sign = u & 0x80000000u;
    if (e > (max_e << 23)) u = sign | exp_mask;
    else if (e <= (min_e << 23)) u = sign;
  }
  return std::bit_cast<float>(u);
}

template <>
inline double ReducePrecision<double>(double x, int eb, int mb) {
  if (std::isnan(x)) return mb > 0 ? x : std::numeric_limits<double>::infinity();
  uint64_t u = std::bit_cast<uint64_t>(x);
  if (mb < 52) {
    uint64_t last = uint64_t{1} << (52 - mb);
    uint64_t bias = (last >> 1) - 1;
    uint64_t lastbit = (u & last) >> (52 - mb);
    u = (u + lastbit + bias) & ~(last - 1);
  }
  if (eb < 11) {
    uint64_t exp_mask = uint64_t{0x7ff} << 52;
    int64_t red_bias = (int64_t{1} << (eb - 1)) - 1;
    uint64_t max_e = static_cast<uint64_t>(1023 + red_bias);
    uint64_t min_e = static_cast<uint64_t>(1023 - red_bias);
    uint64_t e = u & exp_mask;
    uint64_t sign = u & (uint64_t{1} << 63);
    if (e > (max_e << 52)) u = sign | exp_mask;
    else if (e <= (min_e << 52)) u = sign;
  }
  return std::bit_cast<double>(u);
}

// Total order key of a float: -NaN < -inf < ... < -0 < +0 < ... < +NaN.
inline int64_t TotalKey(float x) {
  int32_t i = std::bit_cast<int32_t>(x);
  return i ^ ((i >> 31) & 0x7fffffff);
}
inline int64_t TotalKey(double x) {
  int64_t i = std::bit_cast<int64_t>(x);
  return i ^ ((i >> 63) & 0x7fffffffffffffffll);
}

template <typename T>
inline bool CompareOp(hlo::ComparisonDirection d, T a, T b) {
  switch (d) {
    case hlo::ComparisonDirection::kEq: return a == b;
    case hlo::ComparisonDirection::kNe: return a != b;
    case hlo::ComparisonDirection::kGe: return a >= b;
    case hlo::ComparisonDirection::kGt: return a > b;
    case hlo::ComparisonDirection::kLe: return a <= b;
    case hlo::ComparisonDirection::kLt: return a < b;
  }
  return false;
}

template <typename F>
void FloatUnary(Opcode op, const F* a, F* r, int64_t n) {
  switch (op) {
    case Opcode::kAbs: for (int64_t i = 0; i < n; ++i) r[i] = std::fabs(a[i]); break;
    case Opcode::kNegate: for (int64_t i = 0; i < n; ++i) r[i] = -a[i]; break;
    case Opcode::kSign:
      for (int64_t i = 0; i < n; ++i) r[i] = a[i] > 0 ? F(1) : (a[i] < 0 ? F(-1) : a[i]);
      break;
    case Opcode::kExp:
      if constexpr (sizeof(F) == 4) { VecExp(a, r, n); break; }
      for (int64_t i = 0; i < n; ++i) r[i] = std::exp(a[i]);
      break;
    case Opcode::kExpm1: for (int64_t i = 0; i < n; ++i) r[i] = std::expm1(a[i]); break;
    case Opcode::kLog:
      if constexpr (sizeof(F) == 4) { VecLog(a, r, n); break; }
      for (int64_t i = 0; i < n; ++i) r[i] = std::log(a[i]);
      break;
    case Opcode::kLog1p: for (int64_t i = 0; i < n; ++i) r[i] = std::log1p(a[i]); break;
    case Opcode::kSqrt: for (int64_t i = 0; i < n; ++i) r[i] = std::sqrt(a[i]); break;
    case Opcode::kRsqrt: for (int64_t i = 0; i < n; ++i) r[i] = F(1) / std::sqrt(a[i]); break;
    case Opcode::kCbrt: for (int64_t i = 0; i < n; ++i) r[i] = std::cbrt(a[i]); break;
    case Opcode::kTanh:
      if constexpr (sizeof(F) == 4) { VecTanh(a, r, n); break; }
      for (int64_t i = 0; i < n; ++i) r[i] = std::tanh(a[i]);
      break;
    case Opcode::kLogistic:
      if constexpr (sizeof(F) == 4) { VecLogistic(a, r, n); break; }
      for (int64_t i = 0; i < n; ++i) r[i] = F(1) / (F(1) + std::exp(-a[i]));
      break;
    case Opcode::kSin: for (int64_t i = 0; i < n; ++i) r[i] = std::sin(a[i]); break;
    case Opcode::kCos: for (int64_t i = 0; i < n; ++i) r[i] = std::cos(a[i]); break;
    case Opcode::kTan: for (int64_t i = 0; i < n; ++i) r[i] = std::tan(a[i]); break;
    case Opcode::kErf: for (int64_t i = 0; i < n; ++i) r[i] = std::erf(a[i]); break;
    case Opcode::kFloor: for (int64_t i = 0; i < n; ++i) r[i] = std::floor(a[i]); break;
    case Opcode::kCeil: for (int64_t i = 0; i < n; ++i) r[i] = std::ceil(a[i]); break;
    case Opcode::kRoundNearestAfz: for (int64_t i = 0; i < n; ++i) r[i] = std::round(a[i]); break;
    case Opcode::kRoundNearestEven: for (int64_t i = 0; i < n; ++i) r[i] = std::nearbyint(a[i]); break;
    case Opcode::kCopy: std::memcpy(r, a, n * sizeof(F)); break;
    default: break;
  }
}

template <typename F>
void FloatBinary(Opcode op, const F* a, const F* b, F* r, int64_t n) {
  switch (op) {
    case Opcode::kAdd: for (int64_t i = 0; i < n; ++i) r[i] = a[i] + b[i]; break;
    case Opcode::kSubtract: for (int64_t i = 0; i < n; ++i) r[i] = a[i] - b[i]; break;
    case Opcode::kMultiply: for (int64_t i = 0; i < n; ++i) r[i] = a[i] * b[i]; break;
    case Opcode::kDivide: for (int64_t i = 0; i < n; ++i) r[i] = a[i] / b[i]; break;
    case Opcode::kRemainder: for (int64_t i = 0; i < n; ++i) r[i] = std::fmod(a[i], b[i]); break;
    case Opcode::kMaximum:
      for (int64_t i = 0; i < n; ++i)
        r[i] = (a[i] != a[i]) ? a[i] : (b[i] != b[i] ? b[i] : (a[i] > b[i] ? a[i] : b[i]));
      break;
    case Opcode::kMinimum:
      for (int64_t i = 0; i < n; ++i)
        r[i] = (a[i] != a[i]) ? a[i] : (b[i] != b[i] ? b[i] : (a[i] < b[i] ? a[i] : b[i]));
      break;
    case Opcode::kPower: for (int64_t i = 0; i < n; ++i) r[i] = std::pow(a[i], b[i]); break;
    case Opcode::kAtan2: for (int64_t i = 0; i < n; ++i) r[i] = std::atan2(a[i], b[i]); break;
    default: break;
  }
}

inline uint64_t Mask(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

int64_t IntPow(int64_t base, int64_t exp, ET type) {
  if (exp < 0 && hlo::IsSignedInt(type)) return base == 1 ? 1 : 0;
  uint64_t result = 1, b = static_cast<uint64_t>(base), e = static_cast<uint64_t>(exp);
  while (e) {
    if (e & 1) result *= b;
    b *= b;
    e >>= 1;
  }
  return static_cast<int64_t>(result);
}

void IntUnary(Opcode op, ET type, const int64_t* a, int64_t* r, int64_t n) {
  int bits = type == ET::kPred ? 1 : hlo::BitWidth(type);
  uint64_t mask = Mask(bits);
  switch (op) {
    case Opcode::kAbs: for (int64_t i = 0; i < n; ++i) r[i] = a[i] < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a[i])) : a[i]; break;
    case Opcode::kNegate: for (int64_t i = 0; i < n; ++i) r[i] = static_cast<int64_t>(0 - static_cast<uint64_t>(a[i])); break;
    case Opcode::kSign: for (int64_t i = 0; i < n; ++i) r[i] = (a[i] > 0) - (a[i] < 0); break;
    case Opcode::kNot:
      if (type == ET::kPred) for (int64_t i = 0; i < n; ++i) r[i] = !a[i];
      else for (int64_t i = 0; i < n; ++i) r[i] = ~a[i];
      break;
    case Opcode::kPopulationCount:
      for (int64_t i = 0; i < n; ++i) r[i] = std::popcount(static_cast<uint64_t>(a[i]) & mask);
      break;
    case Opcode::kClz:
      for (int64_t i = 0; i < n; ++i) {
        uint64_t v = static_cast<uint64_t>(a[i]) & mask;
        r[i] = v == 0 ? bits : std::countl_zero(v) - (64 - bits);
      }
      break;
    case Opcode::kCopy: std::memcpy(r, a, n * 8); break;
    default: break;
  }
}

void IntBinary(Opcode op, ET type, const int64_t* a, const int64_t* b, int64_t* r, int64_t n) {
  bool u64 = type == ET::kU64;
  int bits = type == ET::kPred ? 1 : hlo::BitWidth(type);
  uint64_t mask = Mask(bits);
  switch (op) {
    case Opcode::kAdd: for (int64_t i = 0; i < n; ++i) r[i] = static_cast<int64_t>(static_cast<uint64_t>(a[i]) + static_cast<uint64_t>(b[i])); break;
    case Opcode::kSubtract: for (int64_t i = 0; i < n; ++i) r[i] = static_cast<int64_t>(static_cast<uint64_t>(a[i]) - static_cast<uint64_t>(b[i])); break;
    case Opcode::kMultiply: for (int64_t i = 0; i < n; ++i) r[i] = static_cast<int64_t>(static_cast<uint64_t>(a[i]) * static_cast<uint64_t>(b[i])); break;
    case Opcode::kAnd: for (int64_t i = 0; i < n; ++i) r[i] = a[i] & b[i]; break;
    case Opcode::kOr: for (int64_t i = 0; i < n; ++i) r[i] = a[i] | b[i]; break;
    case Opcode::kXor: for (int64_t i = 0; i < n; ++i) r[i] = a[i] ^ b[i]; break;
    case Opcode::kDivide:
      for (int64_t i = 0; i < n; ++i) {
        if (b[i] == 0) r[i] = -1;
        else if (u64) r[i] = static_cast<int64_t>(static_cast<uint64_t>(a[i]) / static_cast<uint64_t>(b[i]));
        else if (b[i] == -1) r[i] = static_cast<int64_t>(0 - static_cast<uint64_t>(a[i]));
        else r[i] = a[i] / b[i];
      }
      break;
    case Opcode::kRemainder:
      for (int64_t i = 0; i < n; ++i) {
        if (b[i] == 0) r[i] = a[i];
        else if (u64) r[i] = static_cast<int64_t>(static_cast<uint64_t>(a[i]) % static_cast<uint64_t>(b[i]));
        else if (b[i] == -1) r[i] = 0;
        else r[i] = a[i] % b[i];
      }
      break;
    case Opcode::kMaximum:
      for (int64_t i = 0; i < n; ++i)
        r[i] = u64 ? (static_cast<uint64_t>(a[i]) > static_cast<uint64_t>(b[i]) ? a[i] : b[i]) : std::max(a[i], b[i]);
      break;
    case Opcode::kMinimum:
      for (int64_t i = 0; i < n; ++i)
        r[i] = u64 ? (static_cast<uint64_t>(a[i]) < static_cast<uint64_t>(b[i]) ? a[i] : b[i]) : std::min(a[i], b[i]);
      break;
    case Opcode::kPower: for (int64_t i = 0; i < n; ++i) r[i] = IntPow(a[i], b[i], type); break;
    case Opcode::kShiftLeft:
      for (int64_t i = 0; i < n; ++i) {
        uint64_t s = static_cast<uint64_t>(b[i]) & mask;
        r[i] = s >= static_cast<uint64_t>(bits) ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a[i]) << s);
      }
      break;
    case Opcode::kShiftRightLogical:
      for (int64_t i = 0; i < n; ++i) {
        uint64_t s = static_cast<uint64_t>(b[i]) & mask;
        r[i] = s >= static_cast<uint64_t>(bits) ? 0 : static_cast<int64_t>((static_cast<uint64_t>(a[i]) & mask) >> s);
      }
      break;
    case Opcode::kShiftRightArithmetic:
      for (int64_t i = 0; i < n; ++i) {
        uint64_t s = static_cast<uint64_t>(b[i]) & mask;
        // Sign-extend from the type's width, also for unsigned types.
        int64_t v = a[i];
        if (bits < 64 && ((static_cast<uint64_t>(v) >> (bits - 1)) & 1))
          v = static_cast<int64_t>(static_cast<uint64_t>(v) | ~mask);
        r[i] = s >= static_cast<uint64_t>(bits) ? (v < 0 ? -1 : 0) : (v >> s);
      }
      break;
    default: break;
  }
}

inline void WrapAll(ET type, int64_t* r, int64_t n) {
  if (type == ET::kS64 || type == ET::kU64) return;
  for (int64_t i = 0; i < n; ++i) r[i] = WrapInt(type, r[i]);
}

template <typename F>
inline int64_t FloatToInt(F v, ET type) {
  if (v != v) return 0;
  if (type == ET::kPred) return v != 0;
  int bits = hlo::BitWidth(type);
  if (hlo::IsUnsignedInt(type)) {
    if (v <= 0) return 0;
    if (bits == 64) {
      if (v >= F(18446744073709551616.0)) return -1;
      return static_cast<int64_t>(static_cast<uint64_t>(v));
    }
    double mx = static_cast<double>(Mask(bits));
    if (v >= mx) return static_cast<int64_t>(Mask(bits));
    return static_cast<int64_t>(v);
  }
  double mx = bits == 64 ? 9223372036854775807.0 : static_cast<double>((int64_t{1} << (bits - 1)) - 1);
  double mn = bits == 64 ? -9223372036854775808.0 : -static_cast<double>(int64_t{1} << (bits - 1));
  if (v >= mx) return bits == 64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(mx);
  if (v <= mn) return bits == 64 ? std::numeric_limits<int64_t>::min() : static_cast<int64_t>(mn);
  return static_cast<int64_t>(v);
}

// Reads lane i of a register of any domain as a complex<T>.
template <typename T>
std::complex<T> LaneAsComplex(Domain dom, ET type, const void* r, int64_t i) {
  switch (dom) {
    case Domain::kC64: { auto v = static_cast<const std::complex<float>*>(r)[i]; return {T(v.real()), T(v.imag())}; }
    case Domain::kC128: { auto v = static_cast<const std::complex<double>*>(r)[i]; return {T(v.real()), T(v.imag())}; }
    case Domain::kF32: return {T(static_cast<const float*>(r)[i]), T(0)};
    case Domain::kF64: return {T(static_cast<const double*>(r)[i]), T(0)};
    case Domain::kI64: {
      int64_t v = static_cast<const int64_t*>(r)[i];
      return {type == ET::kU64 ? T(static_cast<uint64_t>(v)) : T(v), T(0)};
    }
  }
  return {};
}

// Stores a real value into lane i of a register of a real domain.
template <typename T>
void StoreReal(const ExprNode& nd, void* slot, int64_t i, T v) {
  if (nd.dom == Domain::kF32) static_cast<float*>(slot)[i] = static_cast<float>(v);
  else if (nd.dom == Domain::kF64) static_cast<double*>(slot)[i] = static_cast<double>(v);
  else static_cast<int64_t*>(slot)[i] = FloatToInt(v, nd.type);
}

// One node that produces or consumes complex values (T: float/double).
template <typename T>
void EvalComplexNode(const ExprNode& nd, const ExprNode& na, const void* A, const void* B,
                     const void* C, int64_t n, void* slot) {
  using Z = std::complex<T>;
  const Opcode op = nd.op;
  const bool out_complex = IsComplexDomain(nd.dom);
  for (int64_t i = 0; i < n; ++i) {
    Z a = LaneAsComplex<T>(na.dom, na.type, A, i);
    Z r(0, 0);
    T real = 0;
    bool as_real = false;
    switch (op) {
      case Opcode::kConvert: case Opcode::kStochasticConvert: case Opcode::kCopy: r = a; real = a.real(); as_real = !out_complex; break;
      case Opcode::kReal: real = a.real(); as_real = true; break;
      case Opcode::kImag: real = a.imag(); as_real = true; break;
      case Opcode::kAbs: real = std::abs(a); as_real = true; break;
      case Opcode::kComplex: r = Z(a.real(), LaneAsComplex<T>(DomainOf(nd.type) == Domain::kC64 ? Domain::kF32 : Domain::kF64, nd.type, B, i).real()); break;
      case Opcode::kNegate: r = -a; break;
      case Opcode::kExp: r = std::exp(a); break;
      case Opcode::kExpm1: r = std::exp(a) - Z(1); break;
      case Opcode::kLog: r = std::log(a); break;
      case Opcode::kLog1p: r = std::log(a + Z(1)); break;
      case Opcode::kSqrt: r = std::sqrt(a); break;
      case Opcode::kRsqrt: r = Z(1) / std::sqrt(a); break;
      case Opcode::kSin: r = std::sin(a); break;
      case Opcode::kCos: r = std::cos(a); break;
      case Opcode::kTan: r = std::tan(a); break;
      case Opcode::kTanh: r = std::tanh(a); break;
      case Opcode::kSign: r = (a == Z(0)) ? a : a / std::abs(a); break;
      case Opcode::kIsFinite: real = std::isfinite(a.real()) && std::isfinite(a.imag()); as_real = true; break;
      case Opcode::kSelect: {
        bool p = static_cast<const int64_t*>(A)[i] != 0;
        const ExprNode* src = &nd;  // result and both choices share the result domain
        r = p ? LaneAsComplex<T>(src->dom, nd.type, B, i) : LaneAsComplex<T>(src->dom, nd.type, C, i);
        break;
      }
      default: {
        Z b = LaneAsComplex<T>(na.dom, na.type, B, i);
        switch (op) {
          case Opcode::kAdd: r = a + b; break;
          case Opcode::kSubtract: r = a - b; break;
          case Opcode::kMultiply: r = a * b; break;
          case Opcode::kDivide: r = a / b; break;
          case Opcode::kPower: r = (b == Z(0)) ? Z(1) : std::pow(a, b); break;
          case Opcode::kAtan2:  // -i log((b + i a) / sqrt(b^2 + a^2)), as XLA
            r = Z(0, -1) * std::log((b + Z(0, 1) * a) / std::sqrt(b * b + a * a));
            break;
          case Opcode::kCompare:
            real = nd.dir == hlo::ComparisonDirection::kEq ? (a == b) : (a != b);
            as_real = true;
            break;
          default: r = Z(std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::quiet_NaN()); break;
        }
      }
    }
    if (as_real || !out_complex) {
      if (nd.dom == Domain::kI64 && (op == Opcode::kCompare || op == Opcode::kIsFinite))
        static_cast<int64_t*>(slot)[i] = real != 0;
      else
        StoreReal<T>(nd, slot, i, as_real ? real : r.real());
    } else if (nd.dom == Domain::kC64) {
      static_cast<std::complex<float>*>(slot)[i] = {static_cast<float>(r.real()), static_cast<float>(r.imag())};
    } else {
      static_cast<std::complex<double>*>(slot)[i] = {static_cast<double>(r.real()), static_cast<double>(r.imag())};
    }
  }
  if (IsNarrowFloat(nd.type)) QuantizeF32(nd.type, static_cast<float*>(slot), n);
}

}  // namespace

void ExprProgram::Eval(const void* const* in_tiles, int64_t n, int64_t first_index,
                       ExprScratch& s, const ExprRunContext& ctx,
                       const void** out_regs) const {
  const size_t count = nodes_.size();
  // Register pointers: inputs and aliases point elsewhere, others own a slot.
  const void* regp[256];
  std::vector<const void*> big;
  const void** reg = regp;
  if (count > 256) {
    big.resize(count);
    reg = big.data();
  }
  for (size_t id = 0; id < count; ++id) {
    const ExprNode& nd = nodes_[id];
    void* slot = s.regs.data() + id * kTile * 2;
    switch (nd.kind) {
      case NodeKind::kInput: reg[id] = in_tiles[nd.input]; continue;
      case NodeKind::kAlias: reg[id] = reg[nd.a]; continue;
      case NodeKind::kConst:  // filled once by MakeScratch
        reg[id] = slot;
        continue;
      case NodeKind::kIota: {
        for (int64_t i = 0; i < n; ++i) {
          int64_t v = ((first_index + i) / nd.iota_stride) % nd.iota_dim;
          if (nd.dom == Domain::kF32) static_cast<float*>(slot)[i] = static_cast<float>(v);
          else if (nd.dom == Domain::kF64) static_cast<double*>(slot)[i] = static_cast<double>(v);
          else static_cast<int64_t*>(slot)[i] = WrapInt(nd.type, v);
        }
        if (IsNarrowFloat(nd.type)) QuantizeF32(nd.type, static_cast<float*>(slot), n);
        reg[id] = slot;
        continue;
      }
      case NodeKind::kOp: break;
    }
    reg[id] = slot;
    const Opcode op = nd.op;
    const ExprNode& na = nodes_[nd.a];
    const void* A = reg[nd.a];
    const void* B = nd.b >= 0 ? reg[nd.b] : nullptr;
    const void* C = nd.c >= 0 ? reg[nd.c] : nullptr;
    if (IsComplexDomain(nd.dom) || IsComplexDomain(na.dom) ||
        (nd.b >= 0 && IsComplexDomain(nodes_[nd.b].dom))) {
      if (op == Opcode::kBitcastConvert) {
        StoreFromDomain(na.type, A, n, s.bytes.data());
        LoadToDomain(nd.type, s.bytes.data(), n, slot);
      } else if (nd.dom == Domain::kC128 || na.dom == Domain::kC128) {
        EvalComplexNode<double>(nd, na, A, B, C, n, slot);
      } else {
        EvalComplexNode<float>(nd, na, A, B, C, n, slot);
      }
      continue;
    }
    if (op == Opcode::kConvert || op == Opcode::kStochasticConvert) {
      if (nd.dom == Domain::kF32) {
        float* r = static_cast<float*>(slot);
        if (na.dom == Domain::kF32 && IsNarrowFloat(nd.type) && na.type != nd.type &&
            !ctx.stochastic_rounding) {
          // f32 -> bf16/f16 (autocast before a dot): round in one pass.
          QuantizeF32(nd.type, static_cast<const float*>(A), n, r);
          continue;
        }
        if (na.dom == Domain::kF32) std::memcpy(r, A, n * 4);
        else if (na.dom == Domain::kF64) for (int64_t i = 0; i < n; ++i) r[i] = static_cast<float>(static_cast<const double*>(A)[i]);
        else if (na.type == ET::kU64) for (int64_t i = 0; i < n; ++i) r[i] = static_cast<float>(static_cast<uint64_t>(static_cast<const int64_t*>(A)[i]));
        else for (int64_t i = 0; i < n; ++i) r[i] = static_cast<float>(static_cast<const int64_t*>(A)[i]);
        if (IsNarrowFloat(nd.type) && na.type != nd.type) {
          if (ctx.stochastic_rounding)
            QuantizeF32Stochastic(nd.type, r, n, ctx.seed, nd.salt, first_index);
          else
            QuantizeF32(nd.type, r, n);
        }
      } else if (nd.dom == Domain::kF64) {
        double* r = static_cast<double*>(slot);
        if (na.dom == Domain::kF32) for (int64_t i = 0; i < n; ++i) r[i] = static_cast<const float*>(A)[i];
        else if (na.dom == Domain::kF64) std::memcpy(r, A, n * 8);
        else if (na.type == ET::kU64) for (int64_t i = 0; i < n; ++i) r[i] = static_cast<double>(static_cast<uint64_t>(static_cast<const int64_t*>(A)[i]));
        else for (int64_t i = 0; i < n; ++i) r[i] = static_cast<double>(static_cast<const int64_t*>(A)[i]);
      } else {
        int64_t* r = static_cast<int64_t*>(slot);
        if (na.dom == Domain::kF32) for (int64_t i = 0; i < n; ++i) r[i] = FloatToInt(static_cast<const float*>(A)[i], nd.type);
        else if (na.dom == Domain::kF64) for (int64_t i = 0; i < n; ++i) r[i] = FloatToInt(static_cast<const double*>(A)[i], nd.type);
        else {
          const int64_t* a = static_cast<const int64_t*>(A);
          if (nd.type == ET::kPred) for (int64_t i = 0; i < n; ++i) r[i] = a[i] != 0;
          else for (int64_t i = 0; i < n; ++i) r[i] = WrapInt(nd.type, a[i]);
        }
      }
      continue;
    }
    if (op == Opcode::kBitcastConvert) {
      StoreFromDomain(na.type, A, n, s.bytes.data());
      LoadToDomain(nd.type, s.bytes.data(), n, slot);
      continue;
    }
    if (op == Opcode::kCompare) {
      int64_t* r = static_cast<int64_t*>(slot);
      if (na.dom == Domain::kF32) {
        const float* a = static_cast<const float*>(A);
        const float* b = static_cast<const float*>(B);
        if (nd.total_order) for (int64_t i = 0; i < n; ++i) r[i] = CompareOp(nd.dir, TotalKey(a[i]), TotalKey(b[i]));
        else for (int64_t i = 0; i < n; ++i) r[i] = CompareOp(nd.dir, a[i], b[i]);
      } else if (na.dom == Domain::kF64) {
        const double* a = static_cast<const double*>(A);
        const double* b = static_cast<const double*>(B);
        if (nd.total_order) for (int64_t i = 0; i < n; ++i) r[i] = CompareOp(nd.dir, TotalKey(a[i]), TotalKey(b[i]));
        else for (int64_t i = 0; i < n; ++i) r[i] = CompareOp(nd.dir, a[i], b[i]);
      } else {
        const int64_t* a = static_cast<const int64_t*>(A);
        const int64_t* b = static_cast<const int64_t*>(B);
        if (na.type == ET::kU64)
          for (int64_t i = 0; i < n; ++i) r[i] = CompareOp(nd.dir, static_cast<uint64_t>(a[i]), static_cast<uint64_t>(b[i]));
        else for (int64_t i = 0; i < n; ++i) r[i] = CompareOp(nd.dir, a[i], b[i]);
      }
      continue;
    }
    if (op == Opcode::kIsFinite) {
      int64_t* r = static_cast<int64_t*>(slot);
      if (na.dom == Domain::kF32) for (int64_t i = 0; i < n; ++i) r[i] = std::isfinite(static_cast<const float*>(A)[i]);
      else if (na.dom == Domain::kF64) for (int64_t i = 0; i < n; ++i) r[i] = std::isfinite(static_cast<const double*>(A)[i]);
      else for (int64_t i = 0; i < n; ++i) r[i] = 1;
      continue;
    }
    if (op == Opcode::kSelect) {
      const int64_t* p = static_cast<const int64_t*>(A);
      if (nd.dom == Domain::kF32) {
        const float* b = static_cast<const float*>(B); const float* c = static_cast<const float*>(C);
        float* r = static_cast<float*>(slot);
        for (int64_t i = 0; i < n; ++i) r[i] = p[i] ? b[i] : c[i];
      } else {
        const int64_t* b = static_cast<const int64_t*>(B); const int64_t* c = static_cast<const int64_t*>(C);
        int64_t* r = static_cast<int64_t*>(slot);
        for (int64_t i = 0; i < n; ++i) r[i] = p[i] ? b[i] : c[i];
      }
      continue;
    }
    if (op == Opcode::kClamp) {
      // clamp(lo, x, hi) = min(max(x, lo), hi)
      if (nd.dom == Domain::kF32) {
        float* r = static_cast<float*>(slot);
        FloatBinary(Opcode::kMaximum, static_cast<const float*>(B), static_cast<const float*>(A), r, n);
        FloatBinary(Opcode::kMinimum, r, static_cast<const float*>(C), r, n);
      } else if (nd.dom == Domain::kF64) {
        double* r = static_cast<double*>(slot);
        FloatBinary(Opcode::kMaximum, static_cast<const double*>(B), static_cast<const double*>(A), r, n);
        FloatBinary(Opcode::kMinimum, r, static_cast<const double*>(C), r, n);
      } else {
        int64_t* r = static_cast<int64_t*>(slot);
        IntBinary(Opcode::kMaximum, nd.type, static_cast<const int64_t*>(B), static_cast<const int64_t*>(A), r, n);
        IntBinary(Opcode::kMinimum, nd.type, r, static_cast<const int64_t*>(C), r, n);
      }
      continue;
    }
    if (op == Opcode::kReducePrecision) {
      if (nd.dom == Domain::kF32) {
        float* r = static_cast<float*>(slot);
        const float* a = static_cast<const float*>(A);
        for (int64_t i = 0; i < n; ++i) r[i] = ReducePrecision(a[i], nd.exponent_bits, nd.mantissa_bits);
      } else {
        double* r = static_cast<double*>(slot);
        const double* a = static_cast<const double*>(A);
        for (int64_t i = 0; i < n; ++i) r[i] = ReducePrecision(a[i], nd.exponent_bits, nd.mantissa_bits);
      }
      if (IsNarrowFloat(nd.type)) QuantizeF32(nd.type, static_cast<float*>(slot), n);
      continue;
    }
    // Plain unary / binary arithmetic in the node's domain.
    if (nd.dom == Domain::kF32) {
      float* r = static_cast<float*>(slot);
      if (B) FloatBinary(op, static_cast<const float*>(A), static_cast<const float*>(B), r, n);
      else FloatUnary(op, static_cast<const float*>(A), r, n);
      if (IsNarrowFloat(nd.type)) QuantizeF32(nd.type, r, n);
    } else if (nd.dom == Domain::kF64) {
      double* r = static_cast<double*>(slot);
      if (B) FloatBinary(op, static_cast<const double*>(A), static_cast<const double*>(B), r, n);
      else FloatUnary(op, static_cast<const double*>(A), r, n);
    } else {
      int64_t* r = static_cast<int64_t*>(slot);
      if (B) IntBinary(op, nd.type, static_cast<const int64_t*>(A), static_cast<const int64_t*>(B), r, n);
      else IntUnary(op, nd.type, static_cast<const int64_t*>(A), r, n);
      WrapAll(nd.type, r, n);
    }
  }
  for (size_t j = 0; j < outputs_.size(); ++j) out_regs[j] = reg[outputs_[j]];
}

}  // namespace neuron::kernels
