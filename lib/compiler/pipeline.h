// Runs passes in order, timing each and counting instructions before and
// after; optionally verifies the module after every pass. BuildPipeline
// picks the passes for the options (--optlevel, --model-type, autocast...).
#ifndef NEURON_LIB_COMPILER_PIPELINE_H_
#define NEURON_LIB_COMPILER_PIPELINE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/compiler/compile_log.h"
#include "lib/compiler/options.h"
#include "lib/compiler/pass.h"

namespace neuron::compiler {

struct PassStats {
  std::string name;
  double milliseconds = 0;
  size_t instructions_before = 0;
  size_t instructions_after = 0;
  bool changed = false;
};

class PassPipeline {
 public:
  void Add(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
  std::vector<std::string> PassNames() const;

  // Stops at the first failing pass. A pass error without an NCC code
  // becomes NCC-E9000 naming the pass; with verify_each, a module the pass
  // left invalid is an internal error too. After each pass that changed
  // the module, dead code is dropped in place (CompactModule): pointers to
  // dropped instructions and computations become invalid.
  absl::Status Run(std::unique_ptr<hlo::Module>& module, bool verify_each, CompileLog& log,
                   std::vector<PassStats>* stats);

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
};

PassPipeline BuildPipeline(const CompileOptions& options);

// compile/passes.json: [{"pass", "ms", "before", "after", "changed"}...].
std::string PassStatsJson(const std::vector<PassStats>& stats);

}  // namespace neuron::compiler

#endif  // NEURON_LIB_COMPILER_PIPELINE_H_
