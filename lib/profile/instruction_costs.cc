#include "lib/profile/instruction_costs.h"

#include "lib/hlo/computation.h"
#include "lib/hlo/instruction.h"
#include "lib/hlo/opcode.h"
#include "lib/profile/dma.h"
#include "nlohmann/json.hpp"

namespace neuron::profile {
namespace {

using hlo::Opcode;

int64_t ShapeBytes(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const hlo::Shape& e : shape.tuple) total += ShapeBytes(e);
    return total;
  }
  if (!shape.IsArray()) return 0;
  return shape.ElementCount().value_or(0) * hlo::StorageBytes(shape.type);
}

int64_t Elements(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const hlo::Shape& e : shape.tuple) total += Elements(e);
    return total;
  }
  return shape.IsArray() ? shape.ElementCount().value_or(0) : 0;
}

bool IsDataMovement(Opcode op) {
  switch (op) {
    case Opcode::kCopy: case Opcode::kCopyStart: case Opcode::kCopyDone:
    case Opcode::kTranspose: case Opcode::kBroadcast: case Opcode::kSlice:
    case Opcode::kDynamicSlice: case Opcode::kDynamicUpdateSlice:
    case Opcode::kConcatenate: case Opcode::kPad: case Opcode::kReshape:
    case Opcode::kReverse: case Opcode::kGather: case Opcode::kScatter:
    case Opcode::kBitcast:
      return true;
    default:
      return false;
  }
}

// Data-dependent addressing: the descriptors are generated on the device.
bool IsDynamicDma(Opcode op) {
  return op == Opcode::kGather || op == Opcode::kScatter || op == Opcode::kDynamicSlice ||
         op == Opcode::kDynamicUpdateSlice;
}

// The bytes a DGE ring moves: the slice read, or the update written.
int64_t DgeBytes(const hlo::Instruction& instr) {
  const Opcode op = instr.opcode();
  if (op == Opcode::kScatter && instr.operand_count() >= 3)
    return ShapeBytes(instr.operand(2)->shape());
  if (op == Opcode::kDynamicUpdateSlice && instr.operand_count() >= 2)
    return ShapeBytes(instr.operand(1)->shape());
  return ShapeBytes(instr.shape());
}

int64_t Flops(const hlo::Instruction& instr);

int64_t ComputationFlops(const hlo::Computation& comp) {
  int64_t total = 0;
  for (const hlo::Instruction* i : comp.instructions()) total += Flops(*i);
  return total;
}

int64_t Flops(const hlo::Instruction& instr) {
  const int64_t out = Elements(instr.shape());
  switch (instr.opcode()) {
    case Opcode::kDot: {
      int64_t k = 1;
      if (instr.attrs().dot && instr.operand_count() > 0) {
        const hlo::Shape& lhs = instr.operand(0)->shape();
        for (int64_t d : instr.attrs().dot->lhs_contracting)
          if (d >= 0 && d < lhs.rank()) k *= lhs.dims[d];
      }
      return 2 * out * k;
    }
    case Opcode::kConvolution: {
      if (!instr.attrs().conv || instr.operand_count() < 2) return 2 * out;
      const hlo::Shape& kernel = instr.operand(1)->shape();
      const int64_t of = instr.attrs().conv->kernel_output_feature;
      const int64_t per_output =
          (of >= 0 && of < kernel.rank() && kernel.dims[of] > 0)
              ? Elements(kernel) / kernel.dims[of] : 1;
      return 2 * out * per_output;
    }
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
      return instr.operand_count() > 0 ? Elements(instr.operand(0)->shape()) : 0;
    case Opcode::kFusion:
      return instr.to_apply() ? ComputationFlops(*instr.to_apply()) : 0;
    default:
      return hlo::IsElementwise(instr.opcode()) ? out : 0;
  }
}

}  // namespace

CostTable BuildCostTable(const hlo::Module& module) {
  CostTable table;
  int dge_instructions = 0;
  for (const hlo::Computation* comp : module.computations()) {
    for (const hlo::Instruction* instr : comp->instructions()) {
      InstructionCost c;
      if (hlo::IsCollective(instr->opcode())) {
        c.event = "cc_running";
      } else if (IsDataMovement(instr->opcode())) {
        c.event = "dma";
      }
      c.opcode = instr->opcode_text().empty() ? std::string(hlo::OpcodeName(instr->opcode()))
                                              : instr->opcode_text();
      c.computation = comp->name();
      c.bytes = ShapeBytes(instr->shape());
      for (const hlo::Instruction* op : instr->operands()) c.bytes += ShapeBytes(op->shape());
      c.flops = Flops(*instr);
      if (IsDynamicDma(instr->opcode())) {
        c.dge_ring = dge_instructions++ % kDgeRings;
        c.dge_bytes = DgeBytes(*instr);
      }
      nlohmann::json args = {{"hlo", instr->name()}, {"opcode", c.opcode},
                             {"computation", c.computation}, {"bytes", c.bytes},
                             {"flops", c.flops}};
      c.args_json = args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      table.emplace(instr->name(), std::move(c));
    }
  }
  return table;
}

}  // namespace neuron::profile
