// The compiler proper, in process: HLO bytes (or a module) and options in,
// NEFF bytes out. load -> elided-constant check/fill -> verify ->
// custom-call lowering -> support check -> pass pipeline (by -O) ->
// verify -> buffer assignment -> LNC sharding plan -> program package ->
// NEFF. Errors carry NCC codes (diagnostics.h).
#ifndef NEURON_LIB_COMPILER_COMPILER_H_
#define NEURON_LIB_COMPILER_COMPILER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/compiler/buffer_assignment.h"
#include "lib/compiler/compile_log.h"
#include "lib/compiler/options.h"
#include "lib/compiler/pipeline.h"
#include "lib/hlo/module.h"
#include "lib/program/manifest.h"

namespace neuron::compiler {

struct CompileResult {
  std::string neff;                      // empty when emit_neff is false
  program::Manifest manifest;
  std::unique_ptr<hlo::Module> module;   // the optimized program
  std::vector<std::string> pass_names;   // the pipeline that ran
  std::vector<PassStats> pass_stats;
  BufferAssignment buffers;
};

// `display_name` names the input in messages (the file path).
absl::StatusOr<CompileResult> CompileBytes(std::string_view bytes, std::string_view display_name,
                                           const CompileOptions& options, CompileLog& log,
                                           bool emit_neff = true);

// Same, from a module already loaded; `input_text` is kept as debug/hlo.txt
// ("" = print the module).
absl::StatusOr<CompileResult> CompileLoadedModule(std::unique_ptr<hlo::Module> module, std::string input_text,
                                                  const CompileOptions& options, CompileLog& log,
                                                  bool emit_neff = true);

// The manifest's inputs and outputs for a module's entry computation.
// Inputs are named after their parameters; a single (non-tuple) output
// after `root_name`, the root instruction of the module as written (""
// = "output0"), and the leaves of a tuple result "output0", "output1", ...
void DescribeTensors(const hlo::Module& module, std::string_view root_name, program::Manifest* manifest);

}  // namespace neuron::compiler

#endif  // NEURON_LIB_COMPILER_COMPILER_H_
