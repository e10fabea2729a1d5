// The tiled vector interpreter for elementwise work: a computation made of
// elementwise ops (a kLoop fusion body, a standalone elementwise op, or a
// reducer/comparator such as `add(p0, p1)`) is compiled once into a flat
// list of nodes; Eval runs the list over a tile of up to kTile lanes, each
// node writing a register of kTile values in its domain (f32/f64/int64), so
// a whole chain stays in L1/L2 instead of streaming through memory per op.
#ifndef NEURON_LIB_KERNELS_EXPR_PROGRAM_H_
#define NEURON_LIB_KERNELS_EXPR_PROGRAM_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/hlo/computation.h"
#include "lib/hlo/instruction.h"
#include "lib/kernels/element_convert.h"
#include "lib/kernels/f32_tiles.h"

namespace neuron::kernels {

struct ExprNode;

// How a program input's lanes map to its source buffer.
enum class InputMode : uint8_t {
  kFull,    // lane i reads element first_index + i
  kSplat,   // a single element for every lane
  kMapped,  // a broadcast: element index from the output multi-index
};

struct ExprInput {
  int parameter = -1;  // parameter number, or -1 for a constant array
  InputMode mode = InputMode::kFull;
  ElementType type = ElementType::kInvalid;
  // kMapped: output dims and, per output dim, the source stride (0 where
  // the dim is broadcast).
  std::vector<int64_t> out_dims, src_strides;
  // Constant arrays (parameter == -1): storage bytes.
  std::vector<uint8_t> constant;
};

// Per-thread registers for Eval; size them with ExprProgram::MakeScratch.
struct ExprScratch {
  std::vector<uint64_t> regs;  // node_count * kTile slots of 8 bytes
  std::vector<uint8_t> bytes;  // kTile * 8 for bit reinterpretation
};

// A program on f32, bf16 and f16 values flattened for the f32 tile runner
// (f32_tiles.h).
struct F32Plan {
  std::vector<F32Step> steps;
  std::vector<F32Operand> outputs;
  std::vector<TileStorage> output_storage;
  int32_t slot_count = 0;
  std::vector<int> stream_inputs;  // per stream: the program input it reads
  std::vector<TileStorage> stream_storage;
  // Per stream: how lanes map onto its source (a whole array, or a
  // broadcast read periodically).
  std::vector<StreamMap> stream_maps;
  // Scalar operands: constants' values, and the splat inputs they stand
  // for (the value is read from that input when a run starts), else -1.
  std::vector<float> scalars;
  std::vector<int> scalar_inputs;
  // Some step is a narrowing convert, which stochastic rounding changes.
  bool rounds_converts = false;
};

struct ExprRunContext {
  bool stochastic_rounding = false;
  uint64_t seed = 0;
};

class ExprProgram {
 public:
  static constexpr int64_t kTile = 256;

  ~ExprProgram();
  ExprProgram(ExprProgram&&) noexcept;
  ExprProgram& operator=(ExprProgram&&) noexcept;

  // A computation whose instructions are all elementwise (or parameters,
  // constants, iota, reshape/bitcast/copy and broadcasts of parameters or
  // scalars). With lanes_mode every parameter is a per-lane input (used for
  // reducers and comparators whose parameters are scalars); otherwise each
  // use of a parameter is classified as full, splat or mapped against the
  // root's shape. Fails (with a reason) when something is not elementwise.
  static absl::StatusOr<ExprProgram> Compile(const hlo::Computation& comp,
                                             bool lanes_mode);
  // The same for one value of a computation (a fused reduction's operand):
  // the program computes `value` from its computation's parameters.
  static absl::StatusOr<ExprProgram> CompileValue(const hlo::Instruction& value, bool lanes_mode);
  // One elementwise instruction, its operands as parameters 0..n-1.
  // Operands flagged in `splat` are fed as a single element (the scalar
  // under a broadcast) instead of a full array.
  static absl::StatusOr<ExprProgram> CompileInstruction(const hlo::Instruction& instr,
                                                        const std::vector<bool>& splat = {});

  const std::vector<ExprInput>& inputs() const { return inputs_; }
  const std::vector<ElementType>& output_types() const { return output_types_; }
  // The shape all lanes index (the root's dims, first leaf for tuples).
  const std::vector<int64_t>& lane_dims() const { return lane_dims_; }
  // The single op when the program is `op(p0, p1)` on lanes (reducers):
  // lets callers use a fast path. kUnknown otherwise.
  hlo::Opcode simple_binary_op() const { return simple_binary_; }
  // The direction when the program is `compare(p0, p1)` on lanes (a
  // select-and-scatter's select), read as p0 against p1 whichever order
  // the operands are written in; none for a total-order compare.
  std::optional<hlo::ComparisonDirection> simple_compare() const { return simple_compare_; }
  // Makes the program's bf16/f16/f8 arithmetic f32: no value is rounded to
  // its narrow type inside, so a reducer's accumulators keep f32 precision
  // and are rounded once, when the caller stores them. False (nothing
  // changed) when a bitcast-convert reads or writes a narrow float's bits.
  // Call before MakeScratch.
  bool WidenNarrowFloats();
  // True when the program is one convert of its single, whole-array input
  // (through reshapes): callers may convert storage to storage directly.
  bool IsPlainConvert() const;

  ExprScratch MakeScratch() const;

  // The program as f32 tile steps, when every value in it is f32, bf16 or
  // f16, its inputs are whole arrays, splats or periodic broadcasts, and
  // every op is one the runner has.
  std::optional<F32Plan> LowerToF32() const;

  // Evaluates n <= kTile lanes. in_tiles[i] holds input i's n lanes in its
  // domain; out_regs receives, per output, a pointer to its n lanes (valid
  // until the next Eval on the same scratch). first_index is the linear
  // index of lane 0 (for iota and stochastic rounding).
  void Eval(const void* const* in_tiles, int64_t n, int64_t first_index,
            ExprScratch& scratch, const ExprRunContext& ctx,
            const void** out_regs) const;

 private:
  ExprProgram();
  class Builder;
  std::vector<ExprNode> nodes_;
  std::vector<ExprInput> inputs_;
  std::vector<int> outputs_;
  std::vector<ElementType> output_types_;
  std::vector<int64_t> lane_dims_;
  hlo::Opcode simple_binary_ = hlo::Opcode::kUnknown;
  std::optional<hlo::ComparisonDirection> simple_compare_;
};

// True for opcodes ExprProgram can evaluate lane by lane.
bool IsExprOpcode(hlo::Opcode op);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_EXPR_PROGRAM_H_
