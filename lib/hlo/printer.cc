#include "lib/hlo/printer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace neuron::hlo {
namespace {

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

std::string Ints(const std::vector<int64_t>& v) { return "{" + absl::StrJoin(v, ",") + "}"; }

std::string CompName(const Computation* c) { return c ? "%" + c->name() : "%<null>"; }

std::string WindowText(const std::vector<WindowDim>& w) {
  std::vector<std::string> size, stride, pad, lhs, rhs, rev;
  bool any_stride = false, any_pad = false, any_lhs = false, any_rhs = false, any_rev = false;
  for (const WindowDim& d : w) {
    size.push_back(absl::StrCat(d.size));
    stride.push_back(absl::StrCat(d.stride));
    pad.push_back(absl::StrCat(d.pad_low, "_", d.pad_high));
    lhs.push_back(absl::StrCat(d.base_dilation));
    rhs.push_back(absl::StrCat(d.window_dilation));
    rev.push_back(d.reversal ? "1" : "0");
    any_stride |= d.stride != 1;
    any_pad |= d.pad_low != 0 || d.pad_high != 0;
    any_lhs |= d.base_dilation != 1;
    any_rhs |= d.window_dilation != 1;
    any_rev |= d.reversal;
  }
  if (w.empty()) return "{}";
  std::string out = "{size=" + absl::StrJoin(size, "x");
  if (any_stride) out += " stride=" + absl::StrJoin(stride, "x");
  if (any_pad) out += " pad=" + absl::StrJoin(pad, "x");
  if (any_lhs) out += " lhs_dilate=" + absl::StrJoin(lhs, "x");
  if (any_rhs) out += " rhs_dilate=" + absl::StrJoin(rhs, "x");
  if (any_rev) out += " rhs_reversal=" + absl::StrJoin(rev, "x");
  return out + "}";
}

std::string DimLabelsText(const ConvDims& d) {
  auto part = [](size_t rank, int64_t a_dim, char a, int64_t b_dim, char b,
                 const std::vector<int64_t>& spatial) {
    std::string s(rank, '?');
    if (a_dim >= 0 && static_cast<size_t>(a_dim) < rank) s[a_dim] = a;
    if (b_dim >= 0 && static_cast<size_t>(b_dim) < rank) s[b_dim] = b;
    for (size_t i = 0; i < spatial.size(); ++i) {
      if (spatial[i] >= 0 && static_cast<size_t>(spatial[i]) < rank) s[spatial[i]] = static_cast<char>('0' + i);
    }
    return s;
  };
  size_t rank = d.input_spatial.size() + 2;
  return part(rank, d.input_batch, 'b', d.input_feature, 'f', d.input_spatial) + "_" +
         part(rank, d.kernel_input_feature, 'i', d.kernel_output_feature, 'o', d.kernel_spatial) +
         "->" + part(rank, d.output_batch, 'b', d.output_feature, 'f', d.output_spatial);
}

void AppendCalls(const Instruction& inst, std::vector<std::string>* attrs) {
  const auto& called = inst.called_computations();
  if (called.empty()) return;
  std::vector<std::string> names;
  for (const Computation* c : called) names.push_back(CompName(c));
  switch (inst.opcode()) {
    case Opcode::kWhile:
      if (called.size() == 2) {
        attrs->push_back("condition=" + CompName(called[1]));
        attrs->push_back("body=" + CompName(called[0]));
        return;
      }
      break;
    case Opcode::kConditional:
      // A pred-selected conditional uses XLA's true/false spelling.
      if (called.size() == 2 && inst.operand_count() > 0 &&
          inst.operand(0)->shape().type == ElementType::kPred) {
        attrs->push_back("true_computation=" + CompName(called[0]));
        attrs->push_back("false_computation=" + CompName(called[1]));
        return;
      }
      attrs->push_back("branch_computations={" + absl::StrJoin(names, ", ") + "}");
      return;
    case Opcode::kSelectAndScatter:
      if (called.size() == 2) {
        attrs->push_back("select=" + CompName(called[0]));
        attrs->push_back("scatter=" + CompName(called[1]));
        return;
      }
      break;
    case Opcode::kFusion:
    case Opcode::kCall:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      if (called.size() == 1) {
        attrs->push_back("calls=" + names[0]);
        return;
      }
      attrs->push_back("calls={" + absl::StrJoin(names, ", ") + "}");
      return;
    default:
      if (called.size() == 1) {
        attrs->push_back("to_apply=" + names[0]);
        return;
      }
      break;
  }
  attrs->push_back("called_computations={" + absl::StrJoin(names, ", ") + "}");
}

}  // namespace

std::string PrintInstruction(const Instruction& inst, const PrintOptions& options) {
  const Attributes& a = inst.attrs();
  Opcode op = inst.opcode();
  std::string out = absl::StrCat("%", inst.name(), " = ", inst.shape().ToString(), " ",
                                 inst.opcode_text(), "(");
  if (op == Opcode::kConstant) {
    if (a.literal) out += a.literal->ToString();
  } else if (op == Opcode::kParameter) {
    out += absl::StrCat(a.parameter_number);
  } else {
    std::vector<std::string> ops;
    for (const Instruction* o : inst.operands()) ops.push_back("%" + o->name());
    out += absl::StrJoin(ops, ", ");
  }
  out += ")";

  std::vector<std::string> attrs;
  if (a.has_dimensions) attrs.push_back("dimensions=" + Ints(a.dimensions));
  if (op == Opcode::kGetTupleElement) attrs.push_back(absl::StrCat("index=", a.tuple_index));
  if (op == Opcode::kIota) attrs.push_back(absl::StrCat("iota_dimension=", a.iota_dimension));
  if (!a.slice.empty() || op == Opcode::kSlice) {
    std::vector<std::string> parts;
    for (const SliceDim& s : a.slice) parts.push_back(absl::StrCat("[", s.start, ":", s.limit, ":", s.stride, "]"));
    attrs.push_back("slice={" + absl::StrJoin(parts, ", ") + "}");
  }
  if (!a.dynamic_slice_sizes.empty() || op == Opcode::kDynamicSlice) {
    attrs.push_back("dynamic_slice_sizes=" + Ints(a.dynamic_slice_sizes));
  }
  if (op == Opcode::kPad && a.has_padding) {
    std::vector<std::string> parts;
    for (const PaddingDim& p : a.padding) {
      parts.push_back(p.interior ? absl::StrCat(p.low, "_", p.high, "_", p.interior)
                                 : absl::StrCat(p.low, "_", p.high));
    }
    // A scalar pad has no dimensions; XLA prints an empty padding that way.
    if (!parts.empty()) attrs.push_back("padding=" + absl::StrJoin(parts, "x"));
  }
  if (a.has_window && !a.window.empty()) attrs.push_back("window=" + WindowText(a.window));
  if (a.conv) attrs.push_back("dim_labels=" + DimLabelsText(*a.conv));
  if (a.feature_group_count != 1) attrs.push_back(absl::StrCat("feature_group_count=", a.feature_group_count));
  if (a.batch_group_count != 1) attrs.push_back(absl::StrCat("batch_group_count=", a.batch_group_count));
  if (a.dot) {
    if (!a.dot->lhs_batch.empty()) attrs.push_back("lhs_batch_dims=" + Ints(a.dot->lhs_batch));
    if (!a.dot->lhs_contracting.empty()) attrs.push_back("lhs_contracting_dims=" + Ints(a.dot->lhs_contracting));
    if (!a.dot->rhs_batch.empty()) attrs.push_back("rhs_batch_dims=" + Ints(a.dot->rhs_batch));
    if (!a.dot->rhs_contracting.empty()) attrs.push_back("rhs_contracting_dims=" + Ints(a.dot->rhs_contracting));
    if (!a.dot->lhs_ragged.empty()) attrs.push_back("lhs_ragged_dims=" + Ints(a.dot->lhs_ragged));
    if (!a.dot->rhs_group.empty()) attrs.push_back("rhs_group_dims=" + Ints(a.dot->rhs_group));
  }
  if (!a.operand_precision.empty()) {
    attrs.push_back("operand_precision={" + absl::StrJoin(a.operand_precision, ",") + "}");
  }
  if (a.gather) {
    const GatherDims& g = *a.gather;
    attrs.push_back("offset_dims=" + Ints(g.offset_dims));
    attrs.push_back("collapsed_slice_dims=" + Ints(g.collapsed_slice_dims));
    attrs.push_back("start_index_map=" + Ints(g.start_index_map));
    if (!g.operand_batching_dims.empty()) attrs.push_back("operand_batching_dims=" + Ints(g.operand_batching_dims));
    if (!g.start_indices_batching_dims.empty()) {
      attrs.push_back("start_indices_batching_dims=" + Ints(g.start_indices_batching_dims));
    }
    attrs.push_back(absl::StrCat("index_vector_dim=", g.index_vector_dim));
  }
  if (!a.gather_slice_sizes.empty()) attrs.push_back("slice_sizes=" + Ints(a.gather_slice_sizes));
  if (a.scatter) {
    const ScatterDims& s = *a.scatter;
    attrs.push_back("update_window_dims=" + Ints(s.update_window_dims));
    attrs.push_back("inserted_window_dims=" + Ints(s.inserted_window_dims));
    attrs.push_back("scatter_dims_to_operand_dims=" + Ints(s.scatter_dims_to_operand_dims));
    if (!s.input_batching_dims.empty()) attrs.push_back("input_batching_dims=" + Ints(s.input_batching_dims));
    if (!s.scatter_indices_batching_dims.empty()) {
      attrs.push_back("scatter_indices_batching_dims=" + Ints(s.scatter_indices_batching_dims));
    }
    attrs.push_back(absl::StrCat("index_vector_dim=", s.index_vector_dim));
  }
  if (a.indices_are_sorted) attrs.push_back("indices_are_sorted=true");
  if (a.unique_indices) attrs.push_back("unique_indices=true");
  if (a.comparison_direction) {
    attrs.push_back("direction=" + std::string(ComparisonDirectionName(*a.comparison_direction)));
  }
  if (!a.comparison_type.empty()) attrs.push_back("type=" + a.comparison_type);
  if (a.channel_id) attrs.push_back(absl::StrCat("channel_id=", *a.channel_id));
  if (a.has_replica_groups) {
    std::vector<std::string> groups;
    for (const auto& g : a.replica_groups) groups.push_back(Ints(g));
    attrs.push_back("replica_groups={" + absl::StrJoin(groups, ",") + "}");
  }
  if (a.use_global_device_ids) attrs.push_back("use_global_device_ids=true");
  if (a.constrain_layout) attrs.push_back("constrain_layout=true");
  if (!a.source_target_pairs.empty()) {
    std::vector<std::string> pairs;
    for (const auto& [s, t] : a.source_target_pairs) pairs.push_back(absl::StrCat("{", s, ",", t, "}"));
    attrs.push_back("source_target_pairs={" + absl::StrJoin(pairs, ",") + "}");
  }
  if (op == Opcode::kFusion && !a.fusion_kind.empty()) attrs.push_back("kind=" + a.fusion_kind);
  AppendCalls(inst, &attrs);
  if (op == Opcode::kReducePrecision) {
    attrs.push_back(absl::StrCat("exponent_bits=", a.exponent_bits));
    attrs.push_back(absl::StrCat("mantissa_bits=", a.mantissa_bits));
  }
  if (a.is_stable) attrs.push_back("is_stable=true");
  if (op == Opcode::kBatchNormGrad || op == Opcode::kBatchNormInference ||
      op == Opcode::kBatchNormTraining) {
    attrs.push_back("epsilon=" + FormatHloDouble(a.epsilon));
    attrs.push_back(absl::StrCat("feature_index=", a.feature_index));
  }
  if (!a.distribution.empty()) attrs.push_back("distribution=" + a.distribution);
  if (!a.rng_algorithm.empty()) attrs.push_back("algorithm=" + a.rng_algorithm);
  if (!a.fft_type.empty()) attrs.push_back("fft_type=" + a.fft_type);
  if (!a.fft_length.empty()) attrs.push_back("fft_length=" + Ints(a.fft_length));
  if (op == Opcode::kTopK) {
    attrs.push_back(absl::StrCat("k=", a.k));
    attrs.push_back(a.largest ? "largest=true" : "largest=false");
  }
  if (a.is_host_transfer) attrs.push_back("is_host_transfer=true");
  if (op == Opcode::kTriangularSolve) {
    attrs.push_back(a.left_side ? "left_side=true" : "left_side=false");
  }
  if (op == Opcode::kCholesky || op == Opcode::kTriangularSolve) {
    attrs.push_back(a.lower ? "lower=true" : "lower=false");
  }
  if (op == Opcode::kTriangularSolve) {
    attrs.push_back(a.unit_diagonal ? "unit_diagonal=true" : "unit_diagonal=false");
    if (!a.transpose_a.empty()) attrs.push_back("transpose_a=" + a.transpose_a);
  }
  if (!a.custom_call_target.empty()) attrs.push_back("custom_call_target=" + Quote(a.custom_call_target));
  if (a.custom_call_has_side_effect) attrs.push_back("custom_call_has_side_effect=true");
  if (!a.api_version.empty()) attrs.push_back("api_version=" + a.api_version);
  for (const auto& [key, value] : a.other) attrs.push_back(key + "=" + value);
  if (!inst.control_predecessors().empty()) {
    std::vector<std::string> preds;
    for (const Instruction* p : inst.control_predecessors()) preds.push_back("%" + p->name());
    attrs.push_back("control-predecessors={" + absl::StrJoin(preds, ", ") + "}");
  }
  if (!a.sharding.empty()) attrs.push_back("sharding={" + a.sharding + "}");
  if (!a.frontend_attributes.empty()) {
    std::vector<std::string> kv;
    for (const auto& [k, v] : a.frontend_attributes) kv.push_back(k + "=" + Quote(v));
    attrs.push_back("frontend_attributes={" + absl::StrJoin(kv, ",") + "}");
  }
  if (options.metadata && !a.metadata.empty()) {
    std::vector<std::string> fields;
    if (!a.metadata.op_type.empty()) fields.push_back("op_type=" + Quote(a.metadata.op_type));
    if (!a.metadata.op_name.empty()) fields.push_back("op_name=" + Quote(a.metadata.op_name));
    if (!a.metadata.source_file.empty()) fields.push_back("source_file=" + Quote(a.metadata.source_file));
    if (a.metadata.source_line) fields.push_back(absl::StrCat("source_line=", a.metadata.source_line));
    attrs.push_back("metadata={" + absl::StrJoin(fields, " ") + "}");
  }
  if (!a.backend_config.empty()) {
    // JSON-looking configs print bare, as XLA does; anything else quoted.
    bool bare = a.backend_config.front() == '{' && a.backend_config.back() == '}' &&
                a.backend_config.find('\n') == std::string::npos;
    attrs.push_back("backend_config=" + (bare ? a.backend_config : Quote(a.backend_config)));
  }
  for (const std::string& attr : attrs) out += ", " + attr;
  return out;
}

std::string PrintComputation(const Computation& comp, bool is_entry, const PrintOptions& options) {
  std::string out = is_entry ? "ENTRY %" : "%";
  out += comp.name();
  if (!comp.execution_thread().empty() && comp.execution_thread() != "main") {
    out += ", execution_thread=" + Quote(comp.execution_thread());
  }
  out += " {\n";
  for (const Instruction* inst : comp.instructions()) {
    out += inst == comp.root() ? "  ROOT " : "  ";
    out += PrintInstruction(*inst, options);
    out += "\n";
  }
  return out + "}\n";
}

std::string PrintModule(const Module& module, const PrintOptions& options) {
  std::string out = "HloModule " + module.name();
  const ModuleConfig& config = module.config();
  bool printed_replicas = false, printed_partitions = false;
  for (const auto& [key, value] : config.header_attributes) {
    out += ", " + key + "=" + value;
    printed_replicas |= key == "replica_count";
    printed_partitions |= key == "num_partitions";
  }
  if (config.replica_count_given && !printed_replicas) {
    out += absl::StrCat(", replica_count=", config.replica_count);
  }
  if (config.num_partitions_given && !printed_partitions) {
    out += absl::StrCat(", num_partitions=", config.num_partitions);
  }
  out += "\n";
  for (const Computation* comp : module.PostOrder()) {
    out += "\n" + PrintComputation(*comp, comp == module.entry(), options);
  }
  return out;
}

}  // namespace neuron::hlo
