#include "lib/compiler/compiler.h"

#include <chrono>
#include <deque>
#include <optional>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "neuron/version.h"
#include "lib/compiler/diagnostics.h"
#include "lib/compiler/error_codes.h"
#include "lib/compiler/passes/passes.h"
#include "lib/compiler/sharding_plan.h"
#include "lib/compiler/supported_ops.h"
#include "lib/hlo/load.h"
#include "lib/hlo/printer.h"
#include "lib/hlo/verifier.h"
#include "lib/neff/neff.h"
#include "lib/program/dtype.h"
#include "lib/program/package.h"
#include "lib/support/checked_size.h"
#include "lib/support/host_memory.h"
#include "lib/support/parse.h"
#include "lib/tensorfile/key_path.h"

namespace neuron::compiler {
namespace {

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

void AddLeaves(const hlo::Shape& shape, std::vector<int64_t>& path,
               std::vector<std::pair<std::vector<int64_t>, const hlo::Shape*>>* leaves) {
  if (shape.IsTuple()) {
    for (size_t i = 0; i < shape.tuple.size(); ++i) {
      path.push_back(static_cast<int64_t>(i));
      AddLeaves(shape.tuple[i], path, leaves);
      path.pop_back();
    }
  } else if (shape.IsArray()) {
    leaves->push_back({path, &shape});
  }
}

}  // namespace

void DescribeTensors(const hlo::Module& module, std::string_view root_name, program::Manifest* m) {
  m->inputs.clear();
  m->outputs.clear();
  const hlo::Computation* entry = module.entry();
  if (!entry) return;
  for (const hlo::Instruction* p : entry->parameters()) {
    if (!p) continue;
    std::vector<std::pair<std::vector<int64_t>, const hlo::Shape*>> leaves;
    std::vector<int64_t> path;
    AddLeaves(p->shape(), path, &leaves);
    for (const auto& [where, shape] : leaves) {
      program::TensorInfo t;
      t.name = p->name();
      for (int64_t i : where) t.name += "." + std::to_string(i);
      t.index = static_cast<int64_t>(m->inputs.size());
      t.parameter = p->attrs().parameter_number;
      t.tuple_index = where;
      if (std::optional<tensorfile::KeyPath> keys = tensorfile::ParseKeyPath(p->attrs().metadata.op_name)) {
        t.path = std::move(*keys);
        for (int64_t i : where) t.path.push_back(std::to_string(i));
      }
      t.type = shape->type;
      t.dims = shape->dims;
      t.size = ShapeBytes(*shape);
      m->inputs.push_back(std::move(t));
    }
  }
  std::vector<std::pair<std::vector<int64_t>, const hlo::Shape*>> leaves;
  std::vector<int64_t> path;
  if (entry->root()) AddLeaves(entry->root()->shape(), path, &leaves);
  // Users know the names of the HLO they wrote, not those the passes gave
  // (a fusion's): a single result is named after the root instruction, the
  // leaves of a tuple "output<i>" as the Neuron SDK names them.
  const bool single = leaves.size() == 1 && leaves.front().first.empty() && !root_name.empty();
  for (const auto& [where, shape] : leaves) {
    program::TensorInfo t;
    t.index = static_cast<int64_t>(m->outputs.size());
    t.name = single ? std::string(root_name) : "output" + std::to_string(t.index);
    t.tuple_index = where;
    t.type = shape->type;
    t.dims = shape->dims;
    t.size = ShapeBytes(*shape);
    for (const hlo::InputOutputAlias& a : module.config().input_output_alias) {
      if (a.output_index != where) continue;
      for (const program::TensorInfo& in : m->inputs) {
        if (in.parameter == a.parameter && in.tuple_index == a.parameter_index) {
          t.aliased_input = in.index;
          t.must_alias = a.must_alias;
        }
      }
    }
    m->outputs.push_back(std::move(t));
  }
}

absl::StatusOr<CompileResult> CompileBytes(std::string_view bytes, std::string_view display_name,
                                           const CompileOptions& options, CompileLog& log, bool emit_neff) {
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::LoadModule(bytes, display_name);
  if (!module.ok()) return CompileError(kErrInputInvalid, std::string(module.status().message()));
  log.Info(absl::StrFormat("loaded %s: module '%s', %zu instructions in %zu computations (%.2f ms)", display_name,
                           (*module)->name(), (*module)->instruction_count(), (*module)->computation_count(),
                           MsSince(start)));
  std::string text = hlo::LooksLikeText(bytes) ? std::string(bytes) : std::string();
  return CompileLoadedModule(std::move(*module), std::move(text), options, log, emit_neff);
}

absl::StatusOr<CompileResult> CompileLoadedModule(std::unique_ptr<hlo::Module> module, std::string input_text,
                                                  const CompileOptions& options, CompileLog& log, bool emit_neff) {
  CompileResult result;
  // The root as written: the passes may replace it (by a fusion, say).
  const std::string root_name =
      module->entry() != nullptr && module->entry()->root() != nullptr ? module->entry()->root()->name() : "";
  for (const std::string& ignored : options.ignored) log.Info("ignoring " + ignored);
  std::vector<hlo::Instruction*> elided = hlo::ElidedConstants(*module);
  if (!elided.empty()) {
    if (options.fill_elided == ElidedFillMode::kRefuse) {
      return CompileError(kErrElidedConstant,
                          absl::StrFormat("the values of %zu constant(s) were elided as {...}", elided.size()),
                          elided.front());
    }
    // The fill materializes every elided array here: one that no address
    // space holds, or that this host cannot back, is refused before any
    // byte is committed.
    uint64_t fill_bytes = 0;
    for (const hlo::Instruction* c : elided) {
      const std::optional<int64_t> count = c->shape().ElementCount();
      const std::optional<uint64_t> bytes =
          count ? CheckedMul(static_cast<uint64_t>(*count), hlo::StorageBytes(c->shape().type)) : std::nullopt;
      const std::optional<uint64_t> total = bytes ? CheckedAdd(fill_bytes, *bytes) : std::nullopt;
      if (!total || *total > static_cast<uint64_t>(INT64_MAX)) {
        return CompileError(kErrFillTooLarge,
                            absl::StrFormat("the elided constant's values (%s) would be larger than any "
                                            "address space",
                                            c->shape().ToString()),
                            c);
      }
      fill_bytes = *total;
    }
    if (const HostMemoryReport host = ReadHostMemory(); fill_bytes > host.Available()) {
      return CompileError(kErrFillTooLarge,
                          absl::StrFormat("filling the %zu elided constant(s) %s", elided.size(),
                                          DescribeShortfall(fill_bytes, host)),
                          elided.front());
    }
    hlo::FillElidedConstants(*module, options.fill_elided == ElidedFillMode::kZeros ? hlo::ElidedFill::kZeros
                                                                                     : hlo::ElidedFill::kRandom);
    log.Warning(absl::StrFormat("filled %zu elided constant(s) with %s values", elided.size(),
                                options.fill_elided == ElidedFillMode::kZeros ? "zero" : "random"));
  }
  if (absl::Status s = hlo::Verify(*module); !s.ok()) {
    return CompileError(kErrVerifyFailed, std::string(s.message()));
  }
  if (input_text.empty() && emit_neff) input_text = hlo::PrintModule(*module);

  // Lower what we know, then refuse what is left, before optimizing.
  PassPipeline front;
  front.Add(MakeCustomCallLoweringPass());
  front.Add(MakeSendRecvLoweringPass());
  // Bounded dynamic dimensions become static arrays plus s32 sizes.
  front.Add(MakeDynamicPadderPass());
  front.Add(MakeScaledDotLoweringPass());
  if (absl::Status s = front.Run(module, options.verify_each_pass, log, &result.pass_stats); !s.ok()) return s;
  if (absl::Status s = CheckSupported(*module); !s.ok()) return s;

  PassPipeline pipeline = BuildPipeline(options);
  result.pass_names = front.PassNames();
  for (const std::string& n : pipeline.PassNames()) result.pass_names.push_back(n);
  log.Info(absl::StrFormat("optlevel %d pipeline: %s", options.optlevel, absl::StrJoin(result.pass_names, ", ")));
  if (absl::Status s = pipeline.Run(module, options.verify_each_pass, log, &result.pass_stats); !s.ok()) return s;
  if (absl::Status s = hlo::Verify(*module); !s.ok()) {
    return CompileError(kErrInternal,
                        absl::StrFormat("internal error: the optimized module is invalid: %s", std::string(s.message())));
  }

  auto start = std::chrono::steady_clock::now();
  result.buffers = AssignBuffers(*module);
  const program::MemoryPlan& mem = result.buffers.memory;
  log.Info(absl::StrFormat("buffer assignment: %zu scratch buffers, peak %s; constants %s, inputs %s, outputs %s, "
                           "total %s (%.2f ms)",
                           result.buffers.slots.size(), FormatBytes(mem.scratch_peak), FormatBytes(mem.constants),
                           FormatBytes(mem.inputs), FormatBytes(mem.outputs), FormatBytes(mem.total), MsSince(start)));

  program::Manifest& m = result.manifest;
  m.compiler_version = NEURON_TOOLS_VERSION;
  m.name = options.name.empty() ? module->name() : options.name;
  m.target = options.target;
  m.lnc = options.lnc;
  m.optlevel = options.optlevel;
  m.model_type = std::string(ModelTypeName(options.model_type));
  m.auto_cast = std::string(AutoCastName(options.auto_cast));
  m.auto_cast_type = std::string(AutoCastTypeName(options.auto_cast_type));
  m.mixed_precision_accumulation = options.mixed_precision_accumulation;
  m.saturate_infinity = options.saturate_infinity;
  m.distribution_strategy = options.distribution_strategy;
  m.fast_context_switch = options.fast_context_switch;
  m.fast_loading = options.fast_loading;
  m.options = NormalizedOptions(options);
  m.replica_count = module->config().replica_count;
  m.num_partitions = module->config().num_partitions;
  m.collectives = module->NeedsMultipleDevices();
  m.memory = mem;
  m.sharding = PlanSharding(*module, options.lnc);
  if (options.lnc > 1) log.Info(absl::StrFormat("lnc %d: %zu operations split across physical cores", options.lnc, m.sharding.size()));
  DescribeTensors(*module, root_name, &m);

  if (emit_neff) {
    start = std::chrono::steady_clock::now();
    program::SerializeInput in;
    in.module = module.get();
    in.manifest = m;
    in.input_hlo_text = std::move(input_text);
    in.passes_json = PassStatsJson(result.pass_stats);
    in.page_align_constants = options.fast_loading;
    std::deque<std::string> storage;
    absl::StatusOr<std::vector<neff::Member>> members = program::Serialize(in, &storage);
    if (!members.ok()) return AsInternalError(members.status());
    neff::WriteOptions wo;
    wo.fast_loading = options.fast_loading;
    wo.name = m.name;
    wo.lnc_size = static_cast<uint32_t>(options.lnc);
    wo.num_tpb = static_cast<uint32_t>(options.lnc);
    if (m.collectives) wo.extra_feature_bits = neff::kFeatureCollectives;
    absl::StatusOr<std::string> neff_bytes = neff::Write(*members, wo);
    if (!neff_bytes.ok()) return AsInternalError(neff_bytes.status());
    result.neff = std::move(*neff_bytes);
    // Serialize filled the constants list; keep the caller's copy in step.
    for (const neff::Member& mem_entry : *members) {
      if (mem_entry.name == program::kManifestMember) {
        absl::StatusOr<program::Manifest> written = program::ManifestFromJson(mem_entry.data);
        if (written.ok()) m.constants = written->constants;
      }
    }
    log.Info(absl::StrFormat("wrote NEFF: %zu bytes, %zu members (%.2f ms)", result.neff.size(), members->size(),
                             MsSince(start)));
  }
  result.module = std::move(module);
  return result;
}

}  // namespace neuron::compiler
