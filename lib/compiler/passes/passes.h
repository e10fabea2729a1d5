// Factories for the compiler's passes; each pass lives in its own file
// (passes/<name>.cc) and is documented there.
#ifndef NEURON_LIB_COMPILER_PASSES_PASSES_H_
#define NEURON_LIB_COMPILER_PASSES_PASSES_H_

#include <memory>

#include "lib/compiler/options.h"
#include "lib/compiler/pass.h"

namespace neuron::compiler {

std::unique_ptr<Pass> MakeCustomCallLoweringPass();        // "custom-call-lowering"
std::unique_ptr<Pass> MakeSendRecvLoweringPass();          // "send-recv-lowering"
std::unique_ptr<Pass> MakeDynamicPadderPass();             // "dynamic-padder"
std::unique_ptr<Pass> MakeScaledDotLoweringPass();         // "scaled-dot-lowering"
std::unique_ptr<Pass> MakeDeadCodeEliminationPass();       // "dce"
std::unique_ptr<Pass> MakeCallInlinerPass();               // "call-inliner"
std::unique_ptr<Pass> MakeConstantFoldingPass();           // "constant-folding"
std::unique_ptr<Pass> MakeAlgebraicSimplifierPass();       // "algebraic-simplifier"
std::unique_ptr<Pass> MakeCsePass();                       // "cse"
std::unique_ptr<Pass> MakeTransposeFoldingPass(bool convolutions);  // "transpose-folding[-conv]"
std::unique_ptr<Pass> MakeDotConvertFoldingPass();         // "dot-convert-folding"

struct FusionConfig {
  bool fuse_reduce_producers = false;  // O3 / transformer: reduce into its elementwise consumer
  const char* name = "elementwise-fusion";
};
std::unique_ptr<Pass> MakeElementwiseFusionPass(FusionConfig config);
std::unique_ptr<Pass> MakeFusedF32IntermediatesPass();     // "fused-f32-intermediates"

std::unique_ptr<Pass> MakeAutocastPass(AutoCast mode, AutoCastType type, bool mixed_accumulation);  // "autocast"
std::unique_ptr<Pass> MakeSaturateConvertsPass();          // "saturate-converts"

}  // namespace neuron::compiler

#endif  // NEURON_LIB_COMPILER_PASSES_PASSES_H_
