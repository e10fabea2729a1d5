#include "lib/compiler/supported_ops.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/compiler/diagnostics.h"
#include "lib/compiler/error_codes.h"
#include "lib/kernels/support.h"

namespace neuron::compiler {

using hlo::Opcode;

bool IsSupportedOpcode(Opcode op) {
  switch (op) {
    // Operators the executor lacks (bounded dynamic shapes are made static
    // by the dynamic-padder pass before this check). Device-to-device
    // send/recv pairs become collective-permutes, host transfers outfeed
    // and infeed, and transfers of no data nothing, before this check;
    // what is left of them (a half with no peer) is refused here.
    case Opcode::kUnknown:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kScan:
      return false;
    default:
      return true;
  }
}

std::vector<std::string> SupportedOperators() {
  std::vector<std::string> out;
  for (int i = 0; i < static_cast<int>(Opcode::kUnknown); ++i) {
    Opcode op = static_cast<Opcode>(i);
    // custom-call is listed through its lowered targets, not as an operator.
    if (IsSupportedOpcode(op) && op != Opcode::kCustomCall) out.emplace_back(hlo::OpcodeName(op));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> LoweredCustomCallTargets() {
  std::vector<std::string> out = {"GetRngSeed", "xla_builder.math.Acos", "AwsNeuronSoftmax", "AwsNeuronSoftmaxBackward", "AwsNeuronTransferWithStaticRing",
                                  "AwsNeuronGelu", "AwsNeuronGeluApprxTanh", "AwsNeuronGeluBackward", "AwsNeuronSilu",
                                  "AwsNeuronSiluBackward", "AwsNeuronErf", "AwsNeuronRmsNorm", "AwsNeuronArgMax",
                                  "AwsNeuronArgMin", "AwsNeuronTopK", "TopK", "xla_builder.math.NextAfter", "ResizeNearest", "ResizeNearestGrad",
                                  "AwsNeuronModuleMarkerStart-Forward", "AwsNeuronModuleMarkerStart-Backward",
                                  "AwsNeuronModuleMarkerEnd-Forward", "AwsNeuronModuleMarkerEnd-Backward",
                                  "NeuronBoundaryMarker-Start", "NeuronBoundaryMarker-End", "AwsNeuronLNCShardingConstraint",
                                  "MoveToDevice", "MoveToHost", "SPMDFullToShardShape", "SPMDShardToFullShape",
                                  "Sharding", "__cublas$gemm", "__cublas$lt$matmul", "__cudnn$convBiasActivationForward",
                                  "__cudnn$convForward", "__onednn$matmul", "annotate_device_placement",
                                  "xla.sdy.FuncResultSharding", "te_fused_attn_forward_ffi", "te_fused_attn_backward_ffi",
                                  std::string(kernels::kDevicePrintTarget)};
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
// Why a Neuron custom-call target the compiler knows of is still refused.
std::string_view NeuronRefusalReason(std::string_view t) {
  if (t == "AwsNeuronCustomNativeKernel" || t == "AwsNeuronCustomOp" || t == "AwsNeuronMLPNKI") {
    return " (a compiled native/NKI kernel: its binary payload cannot run on the simulated core)";
  }
  if (t == "AwsNeuronDropout" || t == "AwsNeuronDropoutMaskV1") {
    return " (the device's dropout random stream is not modelled)";
  }
  if (t == "AwsNeuronRmsNormBackward") {
    return " (torch-neuronx passes the forward output, not its input; the gradient is not determined by it)";
  }
  if (t == "AwsNeuronCollectiveMatmul" || t == "AwsNeuronIntMatmult") {
    return " (its operand and scale conventions are not documented)";
  }
  return "";
}

bool HasComplex(const hlo::Shape& s) {
  if (s.IsTuple()) return std::any_of(s.tuple.begin(), s.tuple.end(), HasComplex);
  return hlo::IsComplex(s.type);
}
bool HasDynamic(const hlo::Shape& s) {
  if (s.IsTuple()) return std::any_of(s.tuple.begin(), s.tuple.end(), HasDynamic);
  return std::any_of(s.dynamic.begin(), s.dynamic.end(), [](bool b) { return b; });
}
}  // namespace

absl::Status CheckSupported(const hlo::Module& module) {
  for (const hlo::Computation* c : module.PostOrder()) {
    for (const hlo::Instruction* inst : c->instructions()) {
      if (inst->opcode() == Opcode::kCustomCall && !kernels::RunsCustomCall(inst->attrs().custom_call_target)) {
        return CompileError(kErrUnsupportedCustomCall,
                            absl::StrFormat("unsupported custom-call target '%s'%s", inst->attrs().custom_call_target,
                                            NeuronRefusalReason(inst->attrs().custom_call_target)),
                            inst);
      }
      if (!IsSupportedOpcode(inst->opcode())) {
        return CompileError(kErrUnsupportedOperator,
                            absl::StrFormat("unsupported operator '%s'", inst->opcode_text()), inst);
      }
      if (HasDynamic(inst->shape())) {
        return CompileError(kErrDynamicShape,
                            absl::StrFormat("dynamic shape %s", inst->shape().ToString(false)), inst);
      }
      bool complex = HasComplex(inst->shape());
      for (const hlo::Instruction* operand : inst->operands()) complex = complex || HasComplex(operand->shape());
      if (complex && !kernels::RunsWithComplexTypes(inst->opcode())) {
        return CompileError(kErrComplexType,
                            absl::StrFormat("complex type in %s for '%s'", inst->shape().ToString(false), inst->opcode_text()), inst);
      }
      // The executor's own planning rule, so that what compiles loads.
      if (absl::Status s = kernels::KernelRefusal(*inst); !s.ok()) {
        return CompileError(kErrUnsupportedKernel, absl::StrCat("unsupported ", s.message()), inst);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace neuron::compiler
