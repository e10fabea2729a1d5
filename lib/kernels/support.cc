#include "lib/kernels/support.h"

namespace neuron::kernels {

bool RunsWithComplexTypes(hlo::Opcode op) {
  using hlo::Opcode;
  switch (op) {
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
    case Opcode::kCholesky:
    case Opcode::kTriangularSolve:
    case Opcode::kTopK:
    case Opcode::kRng:
    case Opcode::kReduceWindow:
    case Opcode::kCustomCall:
      return false;
    default:
      return true;
  }
}

bool RunsCustomCall(std::string_view target) {
  return target == "GetRngSeed" || target == kDevicePrintTarget;
}

}  // namespace neuron::kernels
