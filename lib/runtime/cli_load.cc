#include "lib/runtime/cli_load.h"

#include <cstdio>
#include <iostream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/runtime/memory_check.h"
#include "lib/runtime/memory_metrics.h"
#include "lib/runtime/runtime.h"
#include "lib/runtime/status.h"
#include "lib/support/cli.h"
#include "lib/support/parse.h"
#include "lib/support/progress.h"
#include "nlohmann/json.hpp"

namespace neuron::runtime {
namespace {

constexpr const char* kTool = "neuron-load";
using nlohmann::json;

json TimingsJson(const LoadTimings& t) {
  return json{{"read", t.read_ms},         {"hash", t.hash_ms},   {"decompress", t.decompress_ms},
              {"deserialize", t.deserialize_ms}, {"build", t.build_ms}, {"place", t.place_ms}, {"debug_info", t.debug_info_ms},
              {"total", t.total_ms}};
}

json CostJson(const LoadCost& c) {
  return json{{"weights", c.weights},       {"model_code", c.model_code},
              {"scratchpad", c.scratchpad}, {"scratchpad_page", c.scratchpad_page},
              {"largest_variable", c.largest_variable},
              {"intermediates", c.intermediates},
              {"planned_intermediates", c.planned_intermediates},
              {"io_tensors", c.io_tensors}, {"peak", c.peak}};
}

// NEURON_RT_ENABLE_MEMORY_METRICS: the categories that saw an allocation.
json MetricsJson(const MemoryMetricsSnapshot& metrics) {
  json out = json::object();
  for (device::MemoryCategory category : device::AllMemoryCategories()) {
    const CategoryMetrics& m = metrics[static_cast<int>(category)];
    if (m.allocs == 0) continue;
    out[device::MemoryCategoryName(category)] =
        json{{"in_use", m.in_use}, {"peak", m.peak}, {"allocs", m.allocs}, {"frees", m.frees}};
  }
  return out;
}

}  // namespace

int RunLoad(const LoadRequest& request) {
  Progress::EnableForTool(kTool, request.quiet);
  InitOptions init;
  if (request.cores.has_value()) {
    init.cores = request.cores;
  } else {
    init.first_visible_core_only = true;
    // Without NEURON_RT_VISIBLE_CORES: the first core no one holds.
    init.first_free_core = !config::ProcessEnv()("NEURON_RT_VISIBLE_CORES");
  }
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Init(init);
  if (!rt.ok()) {
    PrintError(kTool, absl::StrCat("cannot initialize the runtime: ", DescribeForCli(rt.status())));
    return kExitFailure;
  }
  Runtime& runtime = **rt;
  absl::StatusOr<ModelInput> input = OpenModelInput(request.neff_path, request.compile, runtime);
  if (!input.ok()) {
    PrintError(kTool, std::string(input.status().message()));
    return kExitFailure;
  }

  json doc;
  doc["neff"] = request.neff_path;
  doc["input_kind"] = input->kind;
  doc["cores"] = json::array();
  std::string text;
  for (int core : runtime.cores()) {
    absl::StatusOr<std::unique_ptr<Model>> model = LoadModelInput(runtime, *input, core);
    if (!model.ok()) {
      PrintError(kTool, absl::StrCat("cannot load ", input->display, " on nc", core, ": ",
                                     DescribeForCli(model.status())));
      return kExitFailure;
    }
    const Model& m = **model;
    if (!doc.contains("model")) {
      doc["model"] = m.name();
      doc["target"] = m.target();
      doc["inputs"] = m.inputs().size();
      doc["outputs"] = m.outputs().size();
      absl::StrAppend(&text, absl::StrFormat("%s: model '%s' for %s%s, %d inputs, %d outputs\n",
                                             input->display, m.name(), m.target(),
                                             input->kind == "neff" ? "" : " (compiled from HLO)",
                                             m.inputs().size(), m.outputs().size()));
      const program::MemoryPlan& plan = m.cost().plan;
      doc["plan"] = json{{"inputs", plan.inputs},   {"outputs", plan.outputs},
                         {"aliased", plan.aliased}, {"scratch", plan.scratch_peak},
                         {"constants", plan.constants}, {"total", plan.total},
                         {"workspace", m.cost().workspace}};
      absl::StrAppend(&text, absl::StrFormat("plan: %s%s, kernel workspace %s\n",
                                             FormatBytes(static_cast<uint64_t>(plan.total)), DescribePlan(plan),
                                             FormatBytes(m.cost().workspace)));
    }
    const LoadCost& c = m.cost();
    const LoadTimings& t = m.timings();
    const uint64_t pages = c.scratchpad_page ? c.scratchpad / c.scratchpad_page : 0;
    absl::StrAppend(
        &text,
        absl::StrFormat("nc%d: weights %s, model code %s, scratchpad %s (%d page%s of %s), I/O "
                        "tensors %s, peak %s\n",
                        core, FormatBytes(c.weights), FormatBytes(c.model_code),
                        FormatBytes(c.scratchpad), pages, pages == 1 ? "" : "s",
                        FormatBytes(c.scratchpad_page), FormatBytes(c.io_tensors),
                        FormatBytes(c.peak)),
        absl::StrFormat("nc%d: intermediates %s (buffer assignment's peak %s)\n", core,
                        FormatBytes(c.intermediates), FormatBytes(c.planned_intermediates)),
        absl::StrFormat("nc%d: loaded in %.3f ms (read %.3f, hash %.3f, decompress %.3f, "
                        "deserialize %.3f, build %.3f, place %.3f)\n",
                        core, t.total_ms, t.read_ms, t.hash_ms, t.decompress_ms, t.deserialize_ms,
                        t.build_ms, t.place_ms));
    const std::optional<size_t> debug_entries = m.debug_info_entries();
    absl::StrAppend(&text,
                    debug_entries.has_value()
                        ? absl::StrFormat("nc%d: debug info: built %d entries in %.3f ms\n", core,
                                          *debug_entries, t.debug_info_ms)
                        : absl::StrFormat("nc%d: debug info: skipped "
                                          "(NEURON_RT_DISABLE_DEBUG_INFO=1)\n",
                                          core));
    json entry = CostJson(c);
    entry["core"] = core;
    entry["debug_info_entries"] =
        debug_entries.has_value() ? json(*debug_entries) : json(nullptr);
    entry["load_ms"] = TimingsJson(t);
    // Unloaded before the next core; first, so the metrics show the frees.
    model->reset();
    if (runtime.config().enable_memory_metrics) {
      const MemoryMetricsSnapshot metrics = (*runtime.GetCore(core))->memory_metrics();
      absl::StrAppend(&text, absl::StrFormat("nc%d: device memory metrics: %s\n", core,
                                             FormatMemoryMetrics(metrics)));
      entry["memory_metrics"] = MetricsJson(metrics);
    }
    doc["cores"].push_back(entry);
  }
  if (request.json) {
    std::printf("%s\n", doc.dump(2).c_str());
  } else {
    std::fputs(text.c_str(), stdout);
  }
  return kExitOk;
}

}  // namespace neuron::runtime
