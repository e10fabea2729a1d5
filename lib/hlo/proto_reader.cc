#include "lib/hlo/proto_reader.h"

#include <cstring>
#include <unordered_map>

#include "absl/strings/str_format.h"
#include "lib/hlo/float_types.h"
#include "lib/hlo/proto/hlo.pb.h"

namespace neuron::hlo {
namespace {

#define HLO_RETURN_IF_ERROR(expr)        \
  do {                                   \
    absl::Status _status = (expr);       \
    if (!_status.ok()) return _status;   \
  } while (0)

constexpr int kMaxNesting = 64;
constexpr int kMaxRank = 1024;

class Converter {
 public:
  explicit Converter(std::string_view display_name) : display_name_(display_name) {}

  absl::StatusOr<std::unique_ptr<Module>> Convert(const xla::HloModuleProto& proto);

 private:
  template <typename... Args>
  absl::Status Error(const absl::FormatSpec<Args...>& format, const Args&... args) {
    return absl::InvalidArgumentError(
        absl::StrCat(display_name_, ": ", absl::StrFormat(format, args...)));
  }
  absl::Status ConvertShape(const xla::ShapeProto& proto, Shape* shape, int depth);
  absl::Status ConvertLiteral(const xla::LiteralProto& proto, const Shape& shape,
                              Literal* literal, int depth, const std::string& where);
  absl::Status ConvertInstruction(const xla::HloInstructionProto& proto, Computation* comp);

  std::string display_name_;
  std::unordered_map<int64_t, Computation*> computations_by_id_;
  // Device ids all iota replica group lists of the module may expand to: a
  // dozen bytes can name 2^20 ids, so without a module-wide budget a few
  // kilobytes of instructions expand to gigabytes.
  int64_t iota_ids_left_ = kMaxIotaDeviceIds;
  static constexpr int64_t kMaxIotaDeviceIds = int64_t{1} << 20;
};

absl::Status Converter::ConvertShape(const xla::ShapeProto& proto, Shape* shape, int depth) {
  if (depth > kMaxNesting) return Error("shape is nested too deeply");
  if (!IsKnownElementType(proto.element_type())) {
    return Error("unknown element type number %d", proto.element_type());
  }
  shape->type = static_cast<ElementType>(proto.element_type());
  if (shape->IsTuple()) {
    for (const auto& element : proto.tuple_shapes()) {
      Shape s;
      HLO_RETURN_IF_ERROR(ConvertShape(element, &s, depth + 1));
      shape->tuple.push_back(std::move(s));
    }
    return absl::OkStatus();
  }
  if (proto.dimensions_size() > kMaxRank) return Error("shape has too many dimensions");
  for (int64_t d : proto.dimensions()) {
    if (d < 0 && d != std::numeric_limits<int64_t>::min()) {
      return Error("shape has a negative dimension %d", d);
    }
    shape->dims.push_back(d);
  }
  bool any_dynamic = false;
  for (bool b : proto.is_dynamic_dimension()) any_dynamic |= b;
  if (any_dynamic) {
    shape->dynamic.assign(proto.is_dynamic_dimension().begin(), proto.is_dynamic_dimension().end());
    shape->dynamic.resize(shape->dims.size(), false);
  }
  if (proto.has_layout() && shape->IsArray()) {
    Layout layout;
    layout.minor_to_major.assign(proto.layout().minor_to_major().begin(),
                                 proto.layout().minor_to_major().end());
    std::string details;
    for (const auto& tile : proto.layout().tiles()) {
      details += "T(";
      for (int i = 0; i < tile.dimensions_size(); ++i) {
        if (i) details += ",";
        details += absl::StrCat(tile.dimensions(i));
      }
      details += ")";
    }
    if (proto.layout().memory_space() != 0) {
      details += absl::StrCat("S(", proto.layout().memory_space(), ")");
    }
    layout.details = details;
    shape->layout = std::move(layout);
  }
  return absl::OkStatus();
}

// Index in storage order of logical (row-major) element `logical`, for an
// array stored in the order of `minor_to_major`.
int64_t PhysicalIndex(const std::vector<int64_t>& dims, const std::vector<int64_t>& m2m,
                      int64_t logical) {
  std::vector<int64_t> index(dims.size());
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    index[d] = dims[d] ? logical % dims[d] : 0;
    logical = dims[d] ? logical / dims[d] : 0;
  }
  int64_t physical = 0, stride = 1;
  for (int64_t d : m2m) {
    physical += index[d] * stride;
    stride *= dims[d];
  }
  return physical;
}

absl::Status Converter::ConvertLiteral(const xla::LiteralProto& proto, const Shape& shape,
                                       Literal* literal, int depth, const std::string& where) {
  if (depth > kMaxNesting) return Error("%s: literal is nested too deeply", where);
  if (shape.IsTuple()) {
    if (proto.tuple_literals_size() != static_cast<int>(shape.tuple.size())) {
      return Error("%s: tuple literal has %d elements, its shape %s has %d", where,
                   proto.tuple_literals_size(), shape.ToString(), shape.tuple.size());
    }
    std::vector<Literal> elements;
    for (size_t i = 0; i < shape.tuple.size(); ++i) {
      Literal e;
      HLO_RETURN_IF_ERROR(ConvertLiteral(proto.tuple_literals(i), shape.tuple[i], &e, depth + 1, where));
      elements.push_back(std::move(e));
    }
    *literal = Literal::MakeTuple(std::move(elements));
    return absl::OkStatus();
  }
  if (!shape.IsArray()) {
    *literal = Literal::Zeros(shape);
    return absl::OkStatus();
  }
  std::optional<int64_t> count = shape.ElementCount();
  // Every element takes at least one byte of the message; larger claims
  // come from damaged input.
  if (!count || *count > static_cast<int64_t>(proto.ByteSizeLong()) + 1) {
    return Error("%s: literal data does not match its shape %s", where, shape.ToString());
  }
  int64_t n = *count;
  Literal lit = Literal::Zeros(Shape::Array(shape.type, shape.dims));
  std::vector<int64_t> m2m;
  if (proto.shape().has_layout() &&
      proto.shape().layout().minor_to_major_size() == static_cast<int>(shape.dims.size())) {
    m2m.assign(proto.shape().layout().minor_to_major().begin(),
               proto.shape().layout().minor_to_major().end());
    std::vector<bool> seen(shape.dims.size(), false);
    for (int64_t d : m2m) {
      if (d < 0 || d >= static_cast<int64_t>(shape.dims.size()) || seen[d]) {
        return Error("%s: literal layout is not a permutation of its dimensions", where);
      }
      seen[d] = true;
    }
  } else {
    for (int64_t d = static_cast<int64_t>(shape.dims.size()) - 1; d >= 0; --d) m2m.push_back(d);
  }
  auto physical = [&](int64_t i) { return PhysicalIndex(shape.dims, m2m, i); };
  auto size_error = [&](int64_t have) {
    return Error("%s: literal has %d values, its shape %s needs %d", where, have,
                 shape.ToString(), n);
  };
  ElementType t = shape.type;
  // Byte-string fields: StorageBytes per element, little-endian.
  const std::string* bytes = nullptr;
  switch (t) {
    case ElementType::kU8: bytes = &proto.u8s(); break;
    case ElementType::kS8: bytes = &proto.s8s(); break;
    case ElementType::kF16: bytes = &proto.f16s(); break;
    case ElementType::kBF16: bytes = &proto.bf16s(); break;
    case ElementType::kU16: bytes = &proto.u16s(); break;
    case ElementType::kS16: bytes = &proto.s16s(); break;
    case ElementType::kF8E5M2: bytes = &proto.f8e5m2s(); break;
    case ElementType::kF8E4M3FN: bytes = &proto.f8e4m3fns(); break;
    case ElementType::kS4: bytes = &proto.s4s(); break;
    case ElementType::kU4: bytes = &proto.u4s(); break;
    case ElementType::kF8E4M3B11FNUZ: bytes = &proto.f8e4m3b11fnuzs(); break;
    case ElementType::kF8E5M2FNUZ: bytes = &proto.f8e5m2fnuzs(); break;
    case ElementType::kF8E4M3FNUZ: bytes = &proto.f8e4m3fnuzs(); break;
    case ElementType::kS2: bytes = &proto.s2s(); break;
    case ElementType::kU2: bytes = &proto.u2s(); break;
    case ElementType::kF8E4M3: bytes = &proto.f8e4m3s(); break;
    case ElementType::kF8E3M4: bytes = &proto.f8e3m4s(); break;
    case ElementType::kS1: bytes = &proto.s1s(); break;
    case ElementType::kU1: bytes = &proto.u1s(); break;
    case ElementType::kF4E2M1FN: bytes = &proto.f4e2m1fns(); break;
    case ElementType::kF8E8M0FNU: bytes = &proto.f8e8m0fnus(); break;
    case ElementType::kF6E3M2FN: bytes = &proto.f6e3m2fns(); break;
    case ElementType::kF6E2M3FN: bytes = &proto.f6e2m3fns(); break;
    default: break;
  }
  if (bytes) {
    int width = StorageBytes(t);
    if (static_cast<int64_t>(bytes->size()) != n * width) {
      return size_error(static_cast<int64_t>(bytes->size()) / width);
    }
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(lit.mutable_data().data() + i * width, bytes->data() + physical(i) * width, width);
      if (BitWidth(t) < 8) lit.SetInt(i, lit.GetInt(i));  // mask to the type's width
    }
    *literal = std::move(lit);
    return absl::OkStatus();
  }
  auto copy = [&](const auto& field, auto set) -> absl::Status {
    if (field.size() != n) return size_error(field.size());
    for (int64_t i = 0; i < n; ++i) set(i, field.Get(static_cast<int>(physical(i))));
    return absl::OkStatus();
  };
  auto copy_complex = [&](const auto& field) -> absl::Status {
    if (field.size() != 2 * n) return size_error(field.size() / 2);
    for (int64_t i = 0; i < n; ++i) {
      int64_t p = physical(i);
      lit.SetComplex(i, field.Get(static_cast<int>(2 * p)), field.Get(static_cast<int>(2 * p + 1)));
    }
    return absl::OkStatus();
  };
  auto set_int = [&](int64_t i, auto v) { lit.SetInt(i, static_cast<int64_t>(v)); };
  auto set_double = [&](int64_t i, auto v) { lit.SetDouble(i, static_cast<double>(v)); };
  absl::Status s;
  switch (t) {
    case ElementType::kPred: s = copy(proto.preds(), set_int); break;
    case ElementType::kS32: s = copy(proto.s32s(), set_int); break;
    case ElementType::kS64: s = copy(proto.s64s(), set_int); break;
    case ElementType::kU32: s = copy(proto.u32s(), set_int); break;
    case ElementType::kU64: s = copy(proto.u64s(), set_int); break;
    case ElementType::kF32: s = copy(proto.f32s(), set_double); break;
    case ElementType::kF64: s = copy(proto.f64s(), set_double); break;
    case ElementType::kC64: s = copy_complex(proto.c64s()); break;
    case ElementType::kC128: s = copy_complex(proto.c128s()); break;
    default:
      return Error("%s: literals of type %s are not supported", where, ElementTypeName(t));
  }
  HLO_RETURN_IF_ERROR(s);
  *literal = std::move(lit);
  return absl::OkStatus();
}

std::string_view EnumName(int value, std::initializer_list<std::string_view> names) {
  if (value < 0 || value >= static_cast<int>(names.size())) return "";
  return *(names.begin() + value);
}

absl::Status Converter::ConvertInstruction(const xla::HloInstructionProto& p, Computation* comp) {
  Shape shape;
  HLO_RETURN_IF_ERROR(ConvertShape(p.shape(), &shape, 0));
  Opcode op = OpcodeFromName(p.opcode());
  auto inst = std::make_unique<Instruction>(op, p.name(), std::move(shape));
  inst->set_opcode_text(p.opcode());
  inst->set_id(p.id());
  Attributes& a = inst->attrs();
  std::string where = absl::StrFormat("computation '%s', instruction '%%%s'", comp->name(), p.name());
  // A byte size that wraps would plan a buffer smaller than what is
  // written into it (a damaged or hostile program.pb).
  if (!inst->shape().HasUnknownDimension() && !inst->shape().ArrayBytes()) {
    return Error("%s: shape %s has too many elements (its bytes do not fit in 63 bits)", where,
                 inst->shape().ToString());
  }

  a.dimensions.assign(p.dimensions().begin(), p.dimensions().end());
  a.has_dimensions = p.dimensions_size() > 0;
  if (op == Opcode::kIota) {
    // The proto keeps the iota dimension in `dimensions`.
    a.iota_dimension = p.dimensions_size() ? p.dimensions(0) : 0;
    a.dimensions.clear();
    a.has_dimensions = false;
  }
  if (op == Opcode::kParameter) a.parameter_number = p.parameter_number();
  if (op == Opcode::kGetTupleElement) a.tuple_index = p.tuple_index();
  for (const auto& s : p.slice_dimensions()) a.slice.push_back({s.start(), s.limit(), s.stride()});
  a.dynamic_slice_sizes.assign(p.dynamic_slice_sizes().begin(), p.dynamic_slice_sizes().end());
  if (p.has_padding_config()) {
    a.has_padding = true;
    for (const auto& d : p.padding_config().dimensions()) {
      a.padding.push_back({d.edge_padding_low(), d.edge_padding_high(), d.interior_padding()});
    }
  }
  // ragged-dot keeps its dot dimensions inside ragged_dot_dimension_numbers.
  const bool ragged = op == Opcode::kRaggedDot;
  if (p.has_dot_dimension_numbers() || op == Opcode::kDot || op == Opcode::kScaledDot || ragged) {
    const auto& d = ragged ? p.ragged_dot_dimension_numbers().dot_dimension_numbers() : p.dot_dimension_numbers();
    DotDims dd;
    dd.lhs_batch.assign(d.lhs_batch_dimensions().begin(), d.lhs_batch_dimensions().end());
    dd.rhs_batch.assign(d.rhs_batch_dimensions().begin(), d.rhs_batch_dimensions().end());
    dd.lhs_contracting.assign(d.lhs_contracting_dimensions().begin(), d.lhs_contracting_dimensions().end());
    dd.rhs_contracting.assign(d.rhs_contracting_dimensions().begin(), d.rhs_contracting_dimensions().end());
    if (ragged) {
      const auto& r = p.ragged_dot_dimension_numbers();
      dd.lhs_ragged.assign(r.lhs_ragged_dimensions().begin(), r.lhs_ragged_dimensions().end());
      dd.rhs_group.assign(r.rhs_group_dimensions().begin(), r.rhs_group_dimensions().end());
    }
    a.dot = std::move(dd);
  }
  for (int prec : p.precision_config().operand_precision()) {
    std::string_view name = EnumName(prec, {"DEFAULT", "HIGH", "HIGHEST"});
    a.operand_precision.emplace_back(name.empty() ? absl::StrCat(prec) : std::string(name));
  }
  if (p.has_window()) {
    a.has_window = true;
    for (const auto& w : p.window().dimensions()) {
      WindowDim d;
      d.size = w.size();
      d.stride = w.stride() ? w.stride() : 1;
      d.pad_low = w.padding_low();
      d.pad_high = w.padding_high();
      d.window_dilation = w.window_dilation() ? w.window_dilation() : 1;
      d.base_dilation = w.base_dilation() ? w.base_dilation() : 1;
      d.reversal = w.window_reversal();
      a.window.push_back(d);
    }
  }
  if (p.has_convolution_dimension_numbers()) {
    const auto& c = p.convolution_dimension_numbers();
    ConvDims d;
    d.input_batch = c.input_batch_dimension();
    d.input_feature = c.input_feature_dimension();
    d.input_spatial.assign(c.input_spatial_dimensions().begin(), c.input_spatial_dimensions().end());
    d.kernel_input_feature = c.kernel_input_feature_dimension();
    d.kernel_output_feature = c.kernel_output_feature_dimension();
    d.kernel_spatial.assign(c.kernel_spatial_dimensions().begin(), c.kernel_spatial_dimensions().end());
    d.output_batch = c.output_batch_dimension();
    d.output_feature = c.output_feature_dimension();
    d.output_spatial.assign(c.output_spatial_dimensions().begin(), c.output_spatial_dimensions().end());
    a.conv = std::move(d);
  }
  a.feature_group_count = p.feature_group_count() ? p.feature_group_count() : 1;
  a.batch_group_count = p.batch_group_count() ? p.batch_group_count() : 1;
  if (p.has_gather_dimension_numbers()) {
    const auto& g = p.gather_dimension_numbers();
    GatherDims d;
    d.offset_dims.assign(g.offset_dims().begin(), g.offset_dims().end());
    d.collapsed_slice_dims.assign(g.collapsed_slice_dims().begin(), g.collapsed_slice_dims().end());
    d.start_index_map.assign(g.start_index_map().begin(), g.start_index_map().end());
    d.operand_batching_dims.assign(g.operand_batching_dims().begin(), g.operand_batching_dims().end());
    d.start_indices_batching_dims.assign(g.start_indices_batching_dims().begin(),
                                         g.start_indices_batching_dims().end());
    d.index_vector_dim = g.index_vector_dim();
    a.gather = std::move(d);
  }
  a.gather_slice_sizes.assign(p.gather_slice_sizes().begin(), p.gather_slice_sizes().end());
  if (p.has_scatter_dimension_numbers()) {
    const auto& s = p.scatter_dimension_numbers();
    ScatterDims d;
    d.update_window_dims.assign(s.update_window_dims().begin(), s.update_window_dims().end());
    d.inserted_window_dims.assign(s.inserted_window_dims().begin(), s.inserted_window_dims().end());
    d.scatter_dims_to_operand_dims.assign(s.scatter_dims_to_operand_dims().begin(),
                                          s.scatter_dims_to_operand_dims().end());
    d.input_batching_dims.assign(s.input_batching_dims().begin(), s.input_batching_dims().end());
    d.scatter_indices_batching_dims.assign(s.scatter_indices_batching_dims().begin(),
                                           s.scatter_indices_batching_dims().end());
    d.index_vector_dim = s.index_vector_dim();
    a.scatter = std::move(d);
  }
  a.indices_are_sorted = p.indices_are_sorted();
  a.unique_indices = p.unique_indices();
  if (!p.comparison_direction().empty()) {
    a.comparison_direction = ComparisonDirectionFromName(p.comparison_direction());
    if (!a.comparison_direction) {
      return Error("%s: unknown comparison direction '%s'", where, p.comparison_direction());
    }
  }
  a.comparison_type = p.comparison_type();
  auto add_groups = [&](const auto& groups) {
    a.has_replica_groups = true;
    for (const auto& g : groups) a.replica_groups.emplace_back(g.replica_ids().begin(), g.replica_ids().end());
  };
  if (p.replica_groups_size()) add_groups(p.replica_groups());
  if (p.has_collective_device_list()) add_groups(p.collective_device_list().replica_groups());
  if (p.has_iota_collective_device_list()) {
    const auto& iota = p.iota_collective_device_list();
    int64_t groups = iota.num_replica_groups(), size = iota.num_devices_per_group();
    int64_t total = 1;
    for (int64_t d : iota.iota_reshape_dims()) {
      if (d <= 0 || total > (int64_t{1} << 20) / d) return Error("%s: bad iota replica groups", where);
      total *= d;
    }
    if (groups <= 0 || size <= 0 || groups > total || groups * size != total ||
        iota.iota_transpose_perm_size() != iota.iota_reshape_dims_size()) {
      return Error("%s: bad iota replica groups", where);
    }
    if (total > iota_ids_left_) {
      return Error("%s: iota replica groups expand to %d device ids, more than the %d left of the "
                   "module's budget of %d",
                   where, total, iota_ids_left_, kMaxIotaDeviceIds);
    }
    iota_ids_left_ -= total;
    std::vector<int64_t> dims(iota.iota_reshape_dims().begin(), iota.iota_reshape_dims().end());
    std::vector<int64_t> perm(iota.iota_transpose_perm().begin(), iota.iota_transpose_perm().end());
    std::vector<bool> seen(dims.size(), false);
    for (int64_t q : perm) {
      if (q < 0 || q >= static_cast<int64_t>(dims.size()) || seen[q]) {
        return Error("%s: bad iota replica groups permutation", where);
      }
      seen[q] = true;
    }
    std::vector<int64_t> strides(dims.size(), 1);
    for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
    std::vector<int64_t> index(dims.size(), 0), flat;
    for (int64_t n = 0; n < total; ++n) {
      int64_t v = 0;
      for (size_t k = 0; k < perm.size(); ++k) v += index[k] * strides[perm[k]];
      flat.push_back(v);
      for (int k = static_cast<int>(perm.size()) - 1; k >= 0; --k) {
        if (++index[k] < dims[perm[k]]) break;
        index[k] = 0;
      }
    }
    a.has_replica_groups = true;
    for (int64_t g = 0; g < groups; ++g) {
      a.replica_groups.emplace_back(flat.begin() + g * size, flat.begin() + (g + 1) * size);
    }
  }
  if (p.channel_id() != 0) a.channel_id = p.channel_id();
  a.use_global_device_ids = p.use_global_device_ids();
  a.constrain_layout = p.constrain_layout();
  for (const auto& st : p.source_target_pairs()) a.source_target_pairs.emplace_back(st.source(), st.target());
  a.custom_call_target = p.custom_call_target();
  a.backend_config = p.backend_config();
  if (p.custom_call_api_version() != 0) {
    std::string_view name = EnumName(p.custom_call_api_version(),
                                     {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                                      "API_VERSION_STATUS_RETURNING",
                                      "API_VERSION_STATUS_RETURNING_UNIFIED",
                                      "API_VERSION_TYPED_FFI"});
    a.api_version = name.empty() ? absl::StrCat(p.custom_call_api_version()) : std::string(name);
  }
  a.custom_call_has_side_effect = p.custom_call_has_side_effect();
  a.fusion_kind = p.fusion_kind();
  if (op == Opcode::kConstant) {
    if (!p.has_literal()) return Error("%s: constant has no literal", where);
    Literal lit;
    HLO_RETURN_IF_ERROR(ConvertLiteral(p.literal(), inst->shape(), &lit, 0, where));
    a.literal = std::move(lit);
  }
  a.exponent_bits = p.exponent_bits();
  a.mantissa_bits = p.mantissa_bits();
  a.is_stable = p.is_stable();
  a.epsilon = p.epsilon();
  a.feature_index = p.feature_index();
  if (op == Opcode::kRng) {
    a.distribution = std::string(EnumName(p.distribution(), {"rng_invalid", "rng_uniform", "rng_normal"}));
  }
  if (op == Opcode::kRngBitGenerator) {
    a.rng_algorithm = std::string(EnumName(p.rng_algorithm(), {"rng_default", "rng_three_fry", "rng_philox"}));
  }
  if (op == Opcode::kFft) {
    a.fft_type = std::string(EnumName(p.fft_type(), {"FFT", "IFFT", "RFFT", "IRFFT"}));
  }
  a.fft_length.assign(p.fft_length().begin(), p.fft_length().end());
  a.k = p.k();
  a.largest = p.largest();
  a.is_host_transfer = p.is_host_transfer();
  if (op == Opcode::kCholesky) a.lower = p.cholesky_options().lower();
  if (op == Opcode::kTriangularSolve) {
    const auto& o = p.triangular_solve_options();
    a.left_side = o.left_side();
    a.lower = o.lower();
    a.unit_diagonal = o.unit_diagonal();
    if (o.transpose_a() != 0) {
      a.transpose_a = std::string(EnumName(o.transpose_a(), {"", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}));
      if (a.transpose_a.empty()) return Error("%s: unknown transpose_a %d", where, o.transpose_a());
    }
  }
  a.metadata.op_type = p.metadata().op_type();
  a.metadata.op_name = p.metadata().op_name();
  a.metadata.source_file = p.metadata().source_file();
  a.metadata.source_line = p.metadata().source_line();
  for (const auto& entry : p.frontend_attributes().map()) {
    a.frontend_attributes.emplace_back(entry.key(), entry.value());
  }
  std::sort(a.frontend_attributes.begin(), a.frontend_attributes.end());

  for (int64_t cid : p.called_computation_ids()) {
    auto it = computations_by_id_.find(cid);
    if (it == computations_by_id_.end()) {
      return Error("%s: calls computation id %d, which the module does not define", where, cid);
    }
    inst->AddCalledComputation(it->second);
    if (op == Opcode::kFusion) it->second->set_is_fusion_computation(true);
  }
  comp->AddInstruction(std::move(inst));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Module>> Converter::Convert(const xla::HloModuleProto& proto) {
  if (proto.computations_size() == 0) return Error("module '%s' has no computations", proto.name());
  auto module = std::make_unique<Module>(proto.name());
  std::vector<Computation*> comps;
  for (const auto& cp : proto.computations()) {
    if (module->Find(cp.name())) return Error("computation '%s' is defined twice", cp.name());
    auto c = std::make_unique<Computation>(cp.name());
    c->set_id(cp.id());
    c->set_execution_thread(cp.execution_thread());
    c->set_is_fusion_computation(cp.is_fusion_computation());
    if (!computations_by_id_.emplace(cp.id(), c.get()).second) {
      return Error("two computations have id %d", cp.id());
    }
    comps.push_back(module->AddComputation(std::move(c)));
  }
  for (int ci = 0; ci < proto.computations_size(); ++ci) {
    const auto& cp = proto.computations(ci);
    Computation* comp = comps[ci];
    if (cp.instructions_size() == 0) return Error("computation '%s' has no instructions", cp.name());
    for (const auto& ip : cp.instructions()) HLO_RETURN_IF_ERROR(ConvertInstruction(ip, comp));
    std::unordered_map<int64_t, Instruction*> by_id;
    std::vector<Instruction*> insts = comp->instructions();
    for (Instruction* inst : insts) {
      if (!by_id.emplace(inst->id(), inst).second) {
        return Error("computation '%s': two instructions have id %d", cp.name(), inst->id());
      }
    }
    auto find = [&](int64_t id, const xla::HloInstructionProto& ip, const char* what,
                    Instruction** out) -> absl::Status {
      auto it = by_id.find(id);
      if (it == by_id.end()) {
        return Error("computation '%s', instruction '%%%s': %s id %d is not in the computation",
                     cp.name(), ip.name(), what, id);
      }
      *out = it->second;
      return absl::OkStatus();
    };
    for (int ii = 0; ii < cp.instructions_size(); ++ii) {
      const auto& ip = cp.instructions(ii);
      for (int64_t id : ip.operand_ids()) {
        Instruction* operand = nullptr;
        HLO_RETURN_IF_ERROR(find(id, ip, "operand", &operand));
        insts[ii]->AddOperand(operand);
      }
      for (int64_t id : ip.control_predecessor_ids()) {
        Instruction* pred = nullptr;
        HLO_RETURN_IF_ERROR(find(id, ip, "control predecessor", &pred));
        insts[ii]->AddControlPredecessor(pred);
      }
    }
    auto root = by_id.find(cp.root_id());
    comp->set_root(root != by_id.end() ? root->second : insts.back());
  }
  Computation* entry = nullptr;
  if (proto.entry_computation_id() != 0 || !proto.entry_computation_name().empty()) {
    auto it = computations_by_id_.find(proto.entry_computation_id());
    if (it != computations_by_id_.end() &&
        (proto.entry_computation_name().empty() || it->second->name() == proto.entry_computation_name())) {
      entry = it->second;
    } else {
      entry = module->Find(proto.entry_computation_name());
    }
    if (!entry && !proto.entry_computation_name().empty()) {
      return Error("entry computation '%s' is not in the module", proto.entry_computation_name());
    }
  }
  module->set_entry(entry ? entry : comps.back());
  if (proto.has_input_output_alias()) {
    std::vector<InputOutputAlias>& aliases = module->config().input_output_alias;
    for (const xla::HloInputOutputAliasProto::AliasEntryProto& e : proto.input_output_alias().entries()) {
      InputOutputAlias a;
      a.output_index.assign(e.output_shape_index().begin(), e.output_shape_index().end());
      a.parameter = e.parameter_number();
      a.parameter_index.assign(e.parameter_shape_index().begin(), e.parameter_shape_index().end());
      a.must_alias = e.kind() == xla::HloInputOutputAliasProto::MUST_ALIAS;
      aliases.push_back(std::move(a));
    }
    // Printed in the header as the text form writes it.
    module->config().header_attributes.emplace_back("input_output_alias", FormatInputOutputAlias(aliases));
  }
  return module;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> ConvertProto(const xla::HloModuleProto& proto,
                                                     std::string_view display_name) {
  Converter converter(display_name);
  return converter.Convert(proto);
}

bool LooksLikeProto(std::string_view bytes) {
  if (bytes.empty() || bytes.size() > static_cast<size_t>(INT32_MAX)) return false;
  xla::HloModuleProtoWithConfig wrapper;
  if (wrapper.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) &&
      wrapper.hlo_module().computations_size() > 0) {
    return true;
  }
  xla::HloModuleProto bare;
  return bare.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) &&
         bare.computations_size() > 0;
}

absl::StatusOr<std::unique_ptr<Module>> ParseProto(std::string_view bytes,
                                                   std::string_view display_name) {
  if (bytes.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: empty input", display_name));
  }
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: file too large for a protobuf", display_name));
  }
  // A wrapper (HloProto / HloModuleProtoWithConfig) holds the module in
  // field 1; in a bare module field 1 is the name. Accept the wrapper only
  // when its payload really is a module with computations.
  xla::HloModuleProtoWithConfig wrapper;
  if (wrapper.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) &&
      wrapper.hlo_module().computations_size() > 0) {
    auto module = ConvertProto(wrapper.hlo_module(), display_name);
    if (module.ok() && wrapper.has_config()) {
      ModuleConfig& config = (*module)->config();
      if (wrapper.config().replica_count() > 0) {
        config.replica_count = wrapper.config().replica_count();
        config.replica_count_given = true;
      }
      if (wrapper.config().num_partitions() > 0) {
        config.num_partitions = wrapper.config().num_partitions();
        config.num_partitions_given = true;
      }
    }
    return module;
  }
  xla::HloModuleProto bare;
  if (!bare.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: not HLO text (no 'HloModule' header) and not a valid HloModuleProto/HloProto "
        "binary (truncated or corrupt protobuf)",
        display_name));
  }
  if (bare.computations_size() == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: not HLO text (no 'HloModule' header) and the protobuf holds no HLO computations",
        display_name));
  }
  return ConvertProto(bare, display_name);
}

}  // namespace neuron::hlo
