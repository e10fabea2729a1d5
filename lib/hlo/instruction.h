// One HLO instruction: opcode, name, result shape, operands, called
// computations and the attributes of every kind of op in typed fields.
// Instructions are owned by their Computation; operands and users are plain
// pointers kept in step with each other, so rewrites (replace uses, add or
// remove instructions) stay consistent.
#ifndef NEURON_LIB_HLO_INSTRUCTION_H_
#define NEURON_LIB_HLO_INSTRUCTION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/hlo/literal.h"
#include "lib/hlo/opcode.h"
#include "lib/hlo/shape.h"

namespace neuron::hlo {

class Computation;

struct SliceDim {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  bool operator==(const SliceDim&) const = default;
};

struct PaddingDim {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
  bool operator==(const PaddingDim&) const = default;
};

struct WindowDim {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t pad_low = 0;
  int64_t pad_high = 0;
  int64_t window_dilation = 1;  // "rhs_dilate"
  int64_t base_dilation = 1;    // "lhs_dilate"
  bool reversal = false;
  bool operator==(const WindowDim&) const = default;
};

struct DotDims {
  std::vector<int64_t> lhs_batch, rhs_batch;
  std::vector<int64_t> lhs_contracting, rhs_contracting;
  // ragged-dot only (XLA's RaggedDotDimensionNumbers): the lhs dimension
  // split into groups, and rhs's group dimension (ragged non-contracting
  // mode only).
  std::vector<int64_t> lhs_ragged, rhs_group;
  bool operator==(const DotDims&) const = default;
};

// Convolution layout, from dim_labels such as "b01f_01io->b01f".
struct ConvDims {
  int64_t input_batch = 0, input_feature = 0;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 0, kernel_output_feature = 0;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0, output_feature = 0;
  std::vector<int64_t> output_spatial;
  bool operator==(const ConvDims&) const = default;
};

struct GatherDims {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, start_index_map;
  std::vector<int64_t> operand_batching_dims, start_indices_batching_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const GatherDims&) const = default;
};

struct ScatterDims {
  std::vector<int64_t> update_window_dims, inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  std::vector<int64_t> input_batching_dims, scatter_indices_batching_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const ScatterDims&) const = default;
};

enum class ComparisonDirection { kEq, kNe, kGe, kGt, kLe, kLt };
std::string_view ComparisonDirectionName(ComparisonDirection d);  // "EQ"...
std::optional<ComparisonDirection> ComparisonDirectionFromName(std::string_view name);

struct Metadata {
  std::string op_type, op_name, source_file;
  int64_t source_line = 0;
  bool empty() const {
    return op_type.empty() && op_name.empty() && source_file.empty() &&
           source_line == 0;
  }
};

// Attributes of every opcode. Only those the opcode uses are set; the
// verifier checks the ones each opcode needs.
struct Attributes {
  int64_t parameter_number = -1;
  int64_t tuple_index = -1;
  int64_t iota_dimension = -1;
  std::vector<int64_t> dimensions;  // broadcast/reduce/transpose/reverse/concat/sort...
  bool has_dimensions = false;      // whether dimensions= was given
  std::vector<SliceDim> slice;
  std::vector<int64_t> dynamic_slice_sizes;
  std::vector<PaddingDim> padding;
  bool has_padding = false;
  std::optional<DotDims> dot;
  std::vector<std::string> operand_precision;  // "DEFAULT", "HIGH"...
  std::vector<WindowDim> window;
  bool has_window = false;
  std::optional<ConvDims> conv;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  std::optional<GatherDims> gather;
  std::vector<int64_t> gather_slice_sizes;
  std::optional<ScatterDims> scatter;
  bool indices_are_sorted = false;
  bool unique_indices = false;
  std::optional<ComparisonDirection> comparison_direction;
  std::string comparison_type;  // "FLOAT", "TOTALORDER", ... or empty
  std::vector<std::vector<int64_t>> replica_groups;
  bool has_replica_groups = false;
  std::optional<int64_t> channel_id;
  bool use_global_device_ids = false;
  bool constrain_layout = false;
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;
  std::string custom_call_target;
  std::string backend_config;  // verbatim (JSON or proto text)
  std::string api_version;     // e.g. "API_VERSION_TYPED_FFI"
  bool custom_call_has_side_effect = false;
  std::string fusion_kind;     // "kLoop", "kInput", "kOutput", "kCustom"
  std::optional<Literal> literal;
  int64_t exponent_bits = 0, mantissa_bits = 0;
  bool is_stable = false;
  float epsilon = 0;
  int64_t feature_index = 0;
  std::string distribution;    // rng: "rng_uniform" / "rng_normal"
  std::string rng_algorithm;   // rng-bit-generator: "rng_default"...
  std::string fft_type;
  std::vector<int64_t> fft_length;
  int64_t k = 0;
  bool largest = true;
  bool is_host_transfer = false;
  // cholesky (lower) and triangular-solve (all four): XLA's CholeskyOptions
  // and TriangularSolveOptions. transpose_a: "NO_TRANSPOSE", "TRANSPOSE",
  // "ADJOINT", or empty when not given (NO_TRANSPOSE).
  bool lower = false;
  bool left_side = false;
  bool unit_diagonal = false;
  std::string transpose_a;
  Metadata metadata;
  std::string sharding;  // verbatim, without the braces
  std::vector<std::pair<std::string, std::string>> frontend_attributes;
  // Attributes we do not model, verbatim, in order: (key, value text).
  // The NEFF's program proto does not carry them, so no kernel may read them.
  std::vector<std::pair<std::string, std::string>> other;
};

class Instruction {
 public:
  Instruction(Opcode opcode, std::string name, Shape shape);
  Instruction(const Instruction&) = delete;
  Instruction& operator=(const Instruction&) = delete;
  ~Instruction();

  Opcode opcode() const { return opcode_; }
  // The opcode as written (differs from OpcodeName only for kUnknown).
  const std::string& opcode_text() const { return opcode_text_; }
  void set_opcode_text(std::string text) { opcode_text_ = std::move(text); }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  const Shape& shape() const { return shape_; }
  Shape& mutable_shape() { return shape_; }
  int64_t id() const { return id_; }
  void set_id(int64_t id) { id_ = id; }
  // 1-based line in the text it came from; 0 when unknown (proto input).
  int line() const { return line_; }
  void set_line(int line) { line_ = line; }
  Computation* parent() const { return parent_; }

  const std::vector<Instruction*>& operands() const { return operands_; }
  Instruction* operand(size_t i) const { return operands_[i]; }
  size_t operand_count() const { return operands_.size(); }
  const std::vector<Instruction*>& users() const { return users_; }
  void AddOperand(Instruction* operand);
  void ReplaceOperand(size_t i, Instruction* operand);
  // Points every user of this instruction (and the root of the parent, if
  // this is it) at `other` instead.
  void ReplaceAllUsesWith(Instruction* other);
  void ClearOperands();

  const std::vector<Instruction*>& control_predecessors() const {
    return control_predecessors_;
  }
  void AddControlPredecessor(Instruction* pred);

  // Called computations in XLA's order: while = [body, condition];
  // conditional = branches; reduce/map/sort/scatter/all-reduce... =
  // [to_apply]; fusion/call/async-start = [callee]; select-and-scatter =
  // [select, scatter].
  const std::vector<Computation*>& called_computations() const { return called_; }
  void AddCalledComputation(Computation* c) { called_.push_back(c); }
  void set_called_computations(std::vector<Computation*> c) { called_ = std::move(c); }
  Computation* to_apply() const { return called_.empty() ? nullptr : called_[0]; }
  Computation* while_body() const { return called_.size() > 0 ? called_[0] : nullptr; }
  Computation* while_condition() const { return called_.size() > 1 ? called_[1] : nullptr; }

  Attributes& attrs() { return attrs_; }
  const Attributes& attrs() const { return attrs_; }

  // "line N" where known, for messages: "%name (line 12)".
  std::string Describe() const;

 private:
  friend class Computation;
  void RemoveUser(Instruction* user);

  Opcode opcode_;
  std::string opcode_text_;
  std::string name_;
  Shape shape_;
  int64_t id_ = -1;
  int line_ = 0;
  Computation* parent_ = nullptr;
  std::vector<Instruction*> operands_;
  std::vector<Instruction*> users_;
  std::vector<Instruction*> control_predecessors_;
  std::vector<Computation*> called_;
  Attributes attrs_;
};

}  // namespace neuron::hlo

#endif  // NEURON_LIB_HLO_INSTRUCTION_H_
