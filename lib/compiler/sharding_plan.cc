#include "lib/compiler/sharding_plan.h"

namespace neuron::compiler {

std::vector<program::ShardSplit> PlanSharding(const hlo::Module& module, int lnc) {
  std::vector<program::ShardSplit> plan;
  if (lnc < 2 || !module.entry()) return plan;
  for (const hlo::Instruction* inst : module.entry()->PostOrder()) {
    hlo::Opcode op = inst->opcode();
    bool splittable = op == hlo::Opcode::kDot || op == hlo::Opcode::kConvolution ||
                      op == hlo::Opcode::kFusion || hlo::IsElementwise(op);
    if (!splittable || !inst->shape().IsArray()) continue;
    std::optional<int64_t> n = inst->shape().ElementCount();
    if (!n || *n < kMinShardElements) continue;
    for (int64_t d = 0; d < inst->shape().rank(); ++d) {
      if (inst->shape().dims[d] >= lnc) {
        plan.push_back({inst->name(), d, lnc});
        break;
      }
    }
  }
  return plan;
}

}  // namespace neuron::compiler
