// TransformerEngine's fused attention custom-calls (te_fused_attn_forward_ffi
// and te_fused_attn_backward_ffi, as TE's JAX extension emits them) lowered
// to plain HLO. Registered from custom_call_lowering.cc.
#ifndef NEURON_LIB_COMPILER_PASSES_TE_FUSED_ATTENTION_H_
#define NEURON_LIB_COMPILER_PASSES_TE_FUSED_ATTENTION_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "lib/compiler/passes/neuron_custom_calls.h"

namespace neuron::compiler {

// Whether `target` is one of TE's fused attention targets.
bool IsTransformerEngineAttentionTarget(std::string_view target);

// The tuple that replaces `cc`, an NCC-E0205 error when its operands, results
// or backend_config do not fit, or an NCC-E0202 error naming a configuration
// that is not modelled (dropout in training, ALiBi, ragged, mixed or paged
// layouts, FP8). nullptr for other targets.
absl::StatusOr<hlo::Instruction*> LowerTransformerEngineAttention(NeuronLoweringContext& ctx, hlo::Computation* c,
                                                                  hlo::Instruction* cc);

}  // namespace neuron::compiler

#endif  // NEURON_LIB_COMPILER_PASSES_TE_FUSED_ATTENTION_H_
