#include "lib/compiler/pipeline.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/compiler/diagnostics.h"
#include "lib/compiler/error_codes.h"
#include "lib/compiler/ir_util.h"
#include "lib/compiler/passes/passes.h"
#include "lib/hlo/verifier.h"
#include "lib/support/progress.h"

namespace neuron::compiler {

std::vector<std::string> PassPipeline::PassNames() const {
  std::vector<std::string> out;
  for (const auto& p : passes_) out.emplace_back(p->Name());
  return out;
}

absl::Status PassPipeline::Run(std::unique_ptr<hlo::Module>& module, bool verify_each, CompileLog& log,
                               std::vector<PassStats>* stats) {
  Progress progress(absl::StrCat("compiling ", module->name()), passes_.size());
  size_t done = 0;
  for (const auto& pass : passes_) {
    progress.Update(done++, pass->Name());
    PassStats s;
    s.name = std::string(pass->Name());
    s.instructions_before = module->instruction_count();
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<bool> changed = pass->Run(*module);
    if (changed.ok() && *changed) CompactModule(*module);
    s.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!changed.ok()) {
      if (!ErrorCodeOf(changed.status()).empty()) return changed.status();
      return CompileError(kErrInternal, absl::StrFormat("internal error in pass '%s': %s", s.name,
                                                        std::string(changed.status().message())));
    }
    s.changed = *changed;
    s.instructions_after = module->instruction_count();
    log.Info(absl::StrFormat("pass %-24s %8.2f ms  instructions %zu -> %zu%s", s.name, s.milliseconds,
                             s.instructions_before, s.instructions_after, s.changed ? "" : " (no change)"));
    if (stats) stats->push_back(s);
    if (verify_each) {
      if (absl::Status v = hlo::Verify(*module); !v.ok()) {
        return CompileError(kErrInternal, absl::StrFormat("internal error: pass '%s' left the module invalid: %s",
                                                          s.name, std::string(v.message())));
      }
    }
  }
  progress.Update(done);
  return absl::OkStatus();
}

PassPipeline BuildPipeline(const CompileOptions& o) {
  PassPipeline p;
  // Custom-call lowering happens before the support check (in the
  // compiler), so it is not part of this list.
  if (o.auto_cast != AutoCast::kNone) p.Add(MakeAutocastPass(o.auto_cast, o.auto_cast_type, o.mixed_precision_accumulation));
  if (o.saturate_infinity) p.Add(MakeSaturateConvertsPass());
  p.Add(MakeDeadCodeEliminationPass());
  // Calls are walls for fusion and buffer reuse (JAX wraps each relu and
  // pad in one).
  if (o.optlevel >= 2) p.Add(MakeCallInlinerPass());
  p.Add(MakeConstantFoldingPass());
  if (o.optlevel >= 2) {
    p.Add(MakeAlgebraicSimplifierPass());
    p.Add(MakeCsePass());
    p.Add(MakeTransposeFoldingPass(false));
    if (o.model_type == ModelType::kUnetInference) p.Add(MakeTransposeFoldingPass(true));
    p.Add(MakeDotConvertFoldingPass());
  }
  if (o.optlevel >= 3) {
    // A second round catches what folding and CSE exposed.
    p.Add(MakeConstantFoldingPass());
    p.Add(MakeAlgebraicSimplifierPass());
    p.Add(MakeCsePass());
  }
  if (o.optlevel >= 2) {
    FusionConfig fusion;
    if (o.optlevel >= 3) {
      fusion = {true, "aggressive-fusion"};
    } else if (o.model_type == ModelType::kTransformer) {
      fusion = {true, "attention-fusion"};  // softmax/layernorm reduces fuse into their consumers
    }
    p.Add(MakeElementwiseFusionPass(fusion));
    if (o.mixed_precision_accumulation) p.Add(MakeFusedF32IntermediatesPass());
  }
  p.Add(MakeDeadCodeEliminationPass());
  return p;
}

std::string PassStatsJson(const std::vector<PassStats>& stats) {
  nlohmann::json j = nlohmann::json::array();
  for (const PassStats& s : stats) {
    j.push_back({{"pass", s.name},
                 {"ms", s.milliseconds},
                 {"before", s.instructions_before},
                 {"after", s.instructions_after},
                 {"changed", s.changed}});
  }
  return j.dump(1) + "\n";
}

}  // namespace neuron::compiler
