#include "lib/program/proto_writer.h"

#include <unordered_map>

#include "absl/strings/str_format.h"
#include "google/protobuf/arena.h"
#include "lib/hlo/proto/hlo.pb.h"

namespace neuron::program {
namespace {

using hlo::ElementType;

void ShapeToProto(const hlo::Shape& shape, xla::ShapeProto* p) {
  p->set_element_type(static_cast<int32_t>(shape.type));
  if (shape.IsTuple()) {
    for (const hlo::Shape& e : shape.tuple) ShapeToProto(e, p->add_tuple_shapes());
    return;
  }
  for (int64_t d : shape.dims) p->add_dimensions(d);
  if (!shape.dynamic.empty()) {
    for (size_t i = 0; i < shape.dims.size(); ++i) p->add_is_dynamic_dimension(shape.IsDynamicDim(i));
  }
  if (shape.layout && shape.IsArray()) {
    for (int64_t d : shape.layout->minor_to_major) p->mutable_layout()->add_minor_to_major(d);
  }
}

// Values in logical (row-major) order; the literal shape has no layout,
// which readers take as row-major.
absl::Status LiteralToProto(const hlo::Literal& lit, xla::LiteralProto* p) {
  const hlo::Shape& shape = lit.shape();
  if (shape.IsTuple()) {
    ShapeToProto(shape, p->mutable_shape());
    for (const hlo::Literal& e : lit.elements()) {
      if (absl::Status s = LiteralToProto(e, p->add_tuple_literals()); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  ShapeToProto(hlo::Shape::Array(shape.type, shape.dims), p->mutable_shape());
  if (!shape.IsArray()) return absl::OkStatus();
  if (lit.elided()) {
    return absl::FailedPreconditionError("a constant's values were elided ({...}); they cannot be written");
  }
  const int64_t n = lit.element_count();
  const std::string raw(reinterpret_cast<const char*>(lit.data().data()), lit.data().size());
  switch (shape.type) {
    case ElementType::kU8: *p->mutable_u8s() = raw; break;
    case ElementType::kS8: *p->mutable_s8s() = raw; break;
    case ElementType::kF16: *p->mutable_f16s() = raw; break;
    case ElementType::kBF16: *p->mutable_bf16s() = raw; break;
    case ElementType::kU16: *p->mutable_u16s() = raw; break;
    case ElementType::kS16: *p->mutable_s16s() = raw; break;
    case ElementType::kF8E5M2: *p->mutable_f8e5m2s() = raw; break;
    case ElementType::kF8E4M3FN: *p->mutable_f8e4m3fns() = raw; break;
    case ElementType::kS4: *p->mutable_s4s() = raw; break;
    case ElementType::kU4: *p->mutable_u4s() = raw; break;
    case ElementType::kF8E4M3B11FNUZ: *p->mutable_f8e4m3b11fnuzs() = raw; break;
    case ElementType::kF8E5M2FNUZ: *p->mutable_f8e5m2fnuzs() = raw; break;
    case ElementType::kF8E4M3FNUZ: *p->mutable_f8e4m3fnuzs() = raw; break;
    case ElementType::kS2: *p->mutable_s2s() = raw; break;
    case ElementType::kU2: *p->mutable_u2s() = raw; break;
    case ElementType::kF8E4M3: *p->mutable_f8e4m3s() = raw; break;
    case ElementType::kF8E3M4: *p->mutable_f8e3m4s() = raw; break;
    case ElementType::kS1: *p->mutable_s1s() = raw; break;
    case ElementType::kU1: *p->mutable_u1s() = raw; break;
    case ElementType::kF4E2M1FN: *p->mutable_f4e2m1fns() = raw; break;
    case ElementType::kF8E8M0FNU: *p->mutable_f8e8m0fnus() = raw; break;
    case ElementType::kF6E3M2FN: *p->mutable_f6e3m2fns() = raw; break;
    case ElementType::kF6E2M3FN: *p->mutable_f6e2m3fns() = raw; break;
    case ElementType::kPred:
      for (int64_t i = 0; i < n; ++i) p->add_preds(lit.GetInt(i) != 0);
      break;
    case ElementType::kS32:
      for (int64_t i = 0; i < n; ++i) p->add_s32s(static_cast<int32_t>(lit.GetInt(i)));
      break;
    case ElementType::kS64:
      for (int64_t i = 0; i < n; ++i) p->add_s64s(lit.GetInt(i));
      break;
    case ElementType::kU32:
      for (int64_t i = 0; i < n; ++i) p->add_u32s(static_cast<uint32_t>(lit.GetInt(i)));
      break;
    case ElementType::kU64:
      for (int64_t i = 0; i < n; ++i) p->add_u64s(static_cast<uint64_t>(lit.GetInt(i)));
      break;
    case ElementType::kF32:
      for (int64_t i = 0; i < n; ++i) p->add_f32s(static_cast<float>(lit.GetDouble(i)));
      break;
    case ElementType::kF64:
      for (int64_t i = 0; i < n; ++i) p->add_f64s(lit.GetDouble(i));
      break;
    case ElementType::kC64:
      for (int64_t i = 0; i < n; ++i) {
        p->add_c64s(static_cast<float>(lit.GetDouble(i)));
        p->add_c64s(static_cast<float>(lit.GetImag(i)));
      }
      break;
    case ElementType::kC128:
      for (int64_t i = 0; i < n; ++i) {
        p->add_c128s(lit.GetDouble(i));
        p->add_c128s(lit.GetImag(i));
      }
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrFormat("literals of type %s cannot be written", hlo::ElementTypeName(shape.type)));
  }
  return absl::OkStatus();
}

int IndexOf(std::string_view name, std::initializer_list<std::string_view> names) {
  int i = 0;
  for (std::string_view n : names) {
    if (n == name) return i;
    ++i;
  }
  return 0;
}

class Writer {
 public:
  explicit Writer(const ProtoWriteOptions& options) : options_(options) {}
  absl::Status Write(const hlo::Module& module, xla::HloModuleProtoWithConfig* out);

 private:
  absl::Status WriteInstruction(const hlo::Instruction& inst, xla::HloInstructionProto* p);

  const ProtoWriteOptions& options_;
  std::unordered_map<const hlo::Instruction*, int64_t> instruction_ids_;
  std::unordered_map<const hlo::Computation*, int64_t> computation_ids_;
};

absl::Status Writer::WriteInstruction(const hlo::Instruction& inst, xla::HloInstructionProto* p) {
  const hlo::Attributes& a = inst.attrs();
  p->set_name(inst.name());
  p->set_opcode(inst.opcode_text());
  ShapeToProto(inst.shape(), p->mutable_shape());
  p->set_id(instruction_ids_.at(&inst));
  for (const hlo::Instruction* op : inst.operands()) p->add_operand_ids(instruction_ids_.at(op));
  for (const hlo::Instruction* pred : inst.control_predecessors()) {
    p->add_control_predecessor_ids(instruction_ids_.at(pred));
  }
  for (const hlo::Computation* c : inst.called_computations()) {
    p->add_called_computation_ids(computation_ids_.at(c));
  }
  if (inst.opcode() == hlo::Opcode::kIota) {
    p->add_dimensions(a.iota_dimension);
  } else {
    for (int64_t d : a.dimensions) p->add_dimensions(d);
  }
  if (inst.opcode() == hlo::Opcode::kParameter) p->set_parameter_number(a.parameter_number);
  if (inst.opcode() == hlo::Opcode::kGetTupleElement) p->set_tuple_index(a.tuple_index);
  for (const hlo::SliceDim& s : a.slice) {
    auto* sd = p->add_slice_dimensions();
    sd->set_start(s.start);
    sd->set_limit(s.limit);
    sd->set_stride(s.stride);
  }
  for (int64_t d : a.dynamic_slice_sizes) p->add_dynamic_slice_sizes(d);
  if (a.has_padding) {
    auto* pc = p->mutable_padding_config();
    for (const hlo::PaddingDim& d : a.padding) {
      auto* pd = pc->add_dimensions();
      pd->set_edge_padding_low(d.low);
      pd->set_edge_padding_high(d.high);
      pd->set_interior_padding(d.interior);
    }
  }
  if (a.dot) {
    const bool ragged = inst.opcode() == hlo::Opcode::kRaggedDot;
    auto* d = ragged ? p->mutable_ragged_dot_dimension_numbers()->mutable_dot_dimension_numbers()
                     : p->mutable_dot_dimension_numbers();
    if (ragged) {
      auto* r = p->mutable_ragged_dot_dimension_numbers();
      for (int64_t v : a.dot->lhs_ragged) r->add_lhs_ragged_dimensions(v);
      for (int64_t v : a.dot->rhs_group) r->add_rhs_group_dimensions(v);
    }
    for (int64_t v : a.dot->lhs_batch) d->add_lhs_batch_dimensions(v);
    for (int64_t v : a.dot->rhs_batch) d->add_rhs_batch_dimensions(v);
    for (int64_t v : a.dot->lhs_contracting) d->add_lhs_contracting_dimensions(v);
    for (int64_t v : a.dot->rhs_contracting) d->add_rhs_contracting_dimensions(v);
  }
  for (const std::string& prec : a.operand_precision) {
    p->mutable_precision_config()->add_operand_precision(IndexOf(prec, {"DEFAULT", "HIGH", "HIGHEST"}));
  }
  if (a.has_window) {
    auto* w = p->mutable_window();
    for (const hlo::WindowDim& d : a.window) {
      auto* wd = w->add_dimensions();
      wd->set_size(d.size);
      wd->set_stride(d.stride);
      wd->set_padding_low(d.pad_low);
      wd->set_padding_high(d.pad_high);
      wd->set_window_dilation(d.window_dilation);
      wd->set_base_dilation(d.base_dilation);
      wd->set_window_reversal(d.reversal);
    }
  }
  if (a.conv) {
    auto* c = p->mutable_convolution_dimension_numbers();
    c->set_input_batch_dimension(a.conv->input_batch);
    c->set_input_feature_dimension(a.conv->input_feature);
    for (int64_t v : a.conv->input_spatial) c->add_input_spatial_dimensions(v);
    c->set_kernel_input_feature_dimension(a.conv->kernel_input_feature);
    c->set_kernel_output_feature_dimension(a.conv->kernel_output_feature);
    for (int64_t v : a.conv->kernel_spatial) c->add_kernel_spatial_dimensions(v);
    c->set_output_batch_dimension(a.conv->output_batch);
    c->set_output_feature_dimension(a.conv->output_feature);
    for (int64_t v : a.conv->output_spatial) c->add_output_spatial_dimensions(v);
  }
  if (a.feature_group_count != 1) p->set_feature_group_count(a.feature_group_count);
  if (a.batch_group_count != 1) p->set_batch_group_count(a.batch_group_count);
  if (a.gather) {
    auto* g = p->mutable_gather_dimension_numbers();
    for (int64_t v : a.gather->offset_dims) g->add_offset_dims(v);
    for (int64_t v : a.gather->collapsed_slice_dims) g->add_collapsed_slice_dims(v);
    for (int64_t v : a.gather->start_index_map) g->add_start_index_map(v);
    for (int64_t v : a.gather->operand_batching_dims) g->add_operand_batching_dims(v);
    for (int64_t v : a.gather->start_indices_batching_dims) g->add_start_indices_batching_dims(v);
    g->set_index_vector_dim(a.gather->index_vector_dim);
  }
  for (int64_t v : a.gather_slice_sizes) p->add_gather_slice_sizes(v);
  if (a.scatter) {
    auto* s = p->mutable_scatter_dimension_numbers();
    for (int64_t v : a.scatter->update_window_dims) s->add_update_window_dims(v);
    for (int64_t v : a.scatter->inserted_window_dims) s->add_inserted_window_dims(v);
    for (int64_t v : a.scatter->scatter_dims_to_operand_dims) s->add_scatter_dims_to_operand_dims(v);
    for (int64_t v : a.scatter->input_batching_dims) s->add_input_batching_dims(v);
    for (int64_t v : a.scatter->scatter_indices_batching_dims) s->add_scatter_indices_batching_dims(v);
    s->set_index_vector_dim(a.scatter->index_vector_dim);
  }
  p->set_indices_are_sorted(a.indices_are_sorted);
  p->set_unique_indices(a.unique_indices);
  if (a.comparison_direction) {
    p->set_comparison_direction(std::string(hlo::ComparisonDirectionName(*a.comparison_direction)));
  }
  p->set_comparison_type(a.comparison_type);
  for (const auto& group : a.replica_groups) {
    auto* g = p->add_replica_groups();
    for (int64_t id : group) g->add_replica_ids(id);
  }
  if (a.channel_id) p->set_channel_id(*a.channel_id);
  p->set_use_global_device_ids(a.use_global_device_ids);
  p->set_constrain_layout(a.constrain_layout);
  for (const auto& [source, target] : a.source_target_pairs) {
    auto* st = p->add_source_target_pairs();
    st->set_source(source);
    st->set_target(target);
  }
  p->set_custom_call_target(a.custom_call_target);
  p->set_backend_config(a.backend_config);
  if (!a.api_version.empty()) {
    p->set_custom_call_api_version(IndexOf(a.api_version,
                                           {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                                            "API_VERSION_STATUS_RETURNING",
                                            "API_VERSION_STATUS_RETURNING_UNIFIED",
                                            "API_VERSION_TYPED_FFI"}));
  }
  p->set_custom_call_has_side_effect(a.custom_call_has_side_effect);
  p->set_fusion_kind(a.fusion_kind);
  std::vector<std::pair<std::string, std::string>> attributes = a.frontend_attributes;
  if (inst.opcode() == hlo::Opcode::kConstant && a.literal) {
    std::string member = options_.external_member ? options_.external_member(inst) : "";
    if (member.empty()) {
      if (absl::Status s = LiteralToProto(*a.literal, p->mutable_literal()); !s.ok()) {
        return absl::Status(s.code(), absl::StrFormat("constant '%%%s': %s", inst.name(), s.message()));
      }
    } else {
      ShapeToProto(hlo::Shape::Array(inst.shape().type, inst.shape().dims),
                   p->mutable_literal()->mutable_shape());
      attributes.emplace_back(kExternalConstantAttribute, member);
    }
  }
  for (const auto& [k, v] : attributes) {
    auto* e = p->mutable_frontend_attributes()->add_map();
    e->set_key(k);
    e->set_value(v);
  }
  p->set_exponent_bits(static_cast<int32_t>(a.exponent_bits));
  p->set_mantissa_bits(static_cast<int32_t>(a.mantissa_bits));
  p->set_is_stable(a.is_stable);
  p->set_epsilon(a.epsilon);
  p->set_feature_index(a.feature_index);
  if (inst.opcode() == hlo::Opcode::kRng) {
    p->set_distribution(IndexOf(a.distribution, {"rng_invalid", "rng_uniform", "rng_normal"}));
  }
  if (inst.opcode() == hlo::Opcode::kRngBitGenerator) {
    p->set_rng_algorithm(IndexOf(a.rng_algorithm, {"rng_default", "rng_three_fry", "rng_philox"}));
  }
  if (inst.opcode() == hlo::Opcode::kFft) {
    p->set_fft_type(IndexOf(a.fft_type, {"FFT", "IFFT", "RFFT", "IRFFT"}));
  }
  for (int64_t v : a.fft_length) p->add_fft_length(v);
  p->set_k(a.k);
  p->set_largest(a.largest);
  p->set_is_host_transfer(a.is_host_transfer);
  if (inst.opcode() == hlo::Opcode::kCholesky) p->mutable_cholesky_options()->set_lower(a.lower);
  if (inst.opcode() == hlo::Opcode::kTriangularSolve) {
    auto* o = p->mutable_triangular_solve_options();
    o->set_left_side(a.left_side);
    o->set_lower(a.lower);
    o->set_unit_diagonal(a.unit_diagonal);
    if (!a.transpose_a.empty()) {
      o->set_transpose_a(IndexOf(a.transpose_a, {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}));
    }
  }
  if (!a.metadata.empty()) {
    auto* m = p->mutable_metadata();
    m->set_op_type(a.metadata.op_type);
    m->set_op_name(a.metadata.op_name);
    m->set_source_file(a.metadata.source_file);
    m->set_source_line(a.metadata.source_line);
  }
  return absl::OkStatus();
}

absl::Status Writer::Write(const hlo::Module& module, xla::HloModuleProtoWithConfig* out) {
  std::vector<hlo::Computation*> order = module.PostOrder();
  int64_t next_id = 1;
  for (const hlo::Computation* c : order) {
    computation_ids_[c] = next_id++;
    for (const hlo::Instruction* inst : c->instructions()) instruction_ids_[inst] = next_id++;
  }
  xla::HloModuleProto* m = out->mutable_hlo_module();
  m->set_name(module.name());
  for (const hlo::Computation* c : order) {
    if (!c->root()) {
      return absl::FailedPreconditionError(absl::StrFormat("computation '%s' has no root", c->name()));
    }
    xla::HloComputationProto* cp = m->add_computations();
    cp->set_name(c->name());
    cp->set_id(computation_ids_[c]);
    cp->set_root_id(instruction_ids_[c->root()]);
    cp->set_is_fusion_computation(c->is_fusion_computation());
    cp->set_execution_thread(c->execution_thread());
    // Operands first, so readers that build in one pass can.
    for (const hlo::Instruction* inst : c->PostOrder()) {
      if (absl::Status s = WriteInstruction(*inst, cp->add_instructions()); !s.ok()) return s;
    }
  }
  if (module.entry()) {
    m->set_entry_computation_name(module.entry()->name());
    m->set_entry_computation_id(computation_ids_[module.entry()]);
  }
  // Only what the source said, so a round trip prints the same header.
  const hlo::ModuleConfig& config = module.config();
  for (const hlo::InputOutputAlias& a : config.input_output_alias) {
    auto* e = m->mutable_input_output_alias()->add_entries();
    for (int64_t i : a.output_index) e->add_output_shape_index(i);
    e->set_parameter_number(a.parameter);
    for (int64_t i : a.parameter_index) e->add_parameter_shape_index(i);
    e->set_kind(a.must_alias ? xla::HloInputOutputAliasProto::MUST_ALIAS
                             : xla::HloInputOutputAliasProto::MAY_ALIAS);
  }
  if (config.replica_count_given || config.replica_count != 1) {
    out->mutable_config()->set_replica_count(config.replica_count);
  }
  if (config.num_partitions_given || config.num_partitions != 1) {
    out->mutable_config()->set_num_partitions(config.num_partitions);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ModuleToProto(const hlo::Module& module, const ProtoWriteOptions& options,
                           xla::HloModuleProtoWithConfig* proto) {
  Writer writer(options);
  return writer.Write(module, proto);
}

absl::StatusOr<std::string> WriteModuleProto(const hlo::Module& module,
                                             const ProtoWriteOptions& options) {
  // On an arena: freeing tens of thousands of instruction messages one by
  // one took about a third of writing the NEFF; the arena drops them at once.
  google::protobuf::Arena arena;
  auto* proto = google::protobuf::Arena::CreateMessage<xla::HloModuleProtoWithConfig>(&arena);
  if (absl::Status s = ModuleToProto(module, options, proto); !s.ok()) return s;
  std::string bytes;
  if (!proto->SerializeToString(&bytes)) {
    return absl::InternalError("the program is too large to serialize (over 2 GiB)");
  }
  return bytes;
}

}  // namespace neuron::program
