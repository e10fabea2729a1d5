#include "tools/neuron-load/load_command.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/nrt_client/loaded_model.h"
#include "lib/nrt_client/runtime_session.h"
#include "lib/support/cli.h"
#include "lib/support/parse.h"
#include "nlohmann/json.hpp"

namespace neuron::load_tool {
namespace {

constexpr const char* kTool = "neuron-load";
using nlohmann::json;

uint64_t U64(const json& j, const char* key) { return j.value(key, uint64_t{0}); }
double Ms(const json& j, const char* key) { return j.value(key, 0.0); }

// " (inputs 14.5 GiB, outputs 550 B, 1 GiB of them in their inputs,
// scratch 124 MiB, constants 8.7 KiB)": the plan's parts.
std::string DescribePlan(const json& plan) {
  std::string out = absl::StrCat(" (inputs ", FormatBytes(U64(plan, "inputs")), ", outputs ",
                                 FormatBytes(U64(plan, "outputs")));
  if (U64(plan, "aliased") > 0) {
    absl::StrAppend(&out, ", ", FormatBytes(U64(plan, "aliased")), " of them in their inputs");
  }
  absl::StrAppend(&out, ", scratch ", FormatBytes(U64(plan, "scratch")), ", constants ",
                  FormatBytes(U64(plan, "constants")), ")");
  return out;
}

// The lines and JSON of one core's load, from the extras' description.
void ReportCore(const json& d, int core, std::string* text, json* entry) {
  const json& c = d["cost"];
  const json& t = d["load_ms"];
  const uint64_t page = U64(c, "scratchpad_page");
  const uint64_t pages = page ? U64(c, "scratchpad") / page : 0;
  absl::StrAppend(
      text,
      absl::StrFormat("nc%d: weights %s, model code %s, scratchpad %s (%d page%s of %s), I/O "
                      "tensors %s, peak %s\n",
                      core, FormatBytes(U64(c, "weights")), FormatBytes(U64(c, "model_code")),
                      FormatBytes(U64(c, "scratchpad")), pages, pages == 1 ? "" : "s",
                      FormatBytes(page), FormatBytes(U64(c, "io_tensors")),
                      FormatBytes(U64(c, "peak"))),
      absl::StrFormat("nc%d: intermediates %s (buffer assignment's peak %s)\n", core,
                      FormatBytes(U64(c, "intermediates")),
                      FormatBytes(U64(c, "planned_intermediates"))),
      absl::StrFormat("nc%d: loaded in %.3f ms (read %.3f, hash %.3f, decompress %.3f, "
                      "deserialize %.3f, build %.3f, place %.3f)\n",
                      core, Ms(t, "total"), Ms(t, "read"), Ms(t, "hash"), Ms(t, "decompress"),
                      Ms(t, "deserialize"), Ms(t, "build"), Ms(t, "place")));
  const json& entries = d["debug_info_entries"];
  absl::StrAppend(text, entries.is_number()
                            ? absl::StrFormat("nc%d: debug info: built %d entries in %.3f ms\n",
                                              core, entries.get<uint64_t>(), Ms(t, "debug_info"))
                            : absl::StrFormat("nc%d: debug info: skipped "
                                              "(NEURON_RT_DISABLE_DEBUG_INFO=1)\n",
                                              core));
  *entry = c;
  (*entry)["debug_info_entries"] = entries;
  (*entry)["load_ms"] = t;
}

}  // namespace

int RunLoad(const LoadRequest& request) {
  nrt_client::CoreChoice choice;
  choice.cores = request.cores;
  choice.first_free = true;
  absl::StatusOr<std::unique_ptr<nrt_client::RuntimeSession>> session =
      nrt_client::RuntimeSession::Open(kTool, request.quiet, choice);
  if (!session.ok()) {
    PrintError(kTool, std::string(session.status().message()));
    return kExitFailure;
  }
  const nrt_client::RuntimeSession& rt = **session;
  absl::StatusOr<nrt_client::ModelInput> input =
      nrt_client::OpenModelInput(request.neff_path, request.compile, rt);
  if (!input.ok()) {
    PrintError(kTool, std::string(input.status().message()));
    return kExitFailure;
  }

  json doc;
  doc["neff"] = request.neff_path;
  doc["input_kind"] = input->kind;
  doc["runtime"] = json::parse(rt.library().VersionJson());
  doc["cores"] = json::array();
  std::string text;
  bool missing_extras = false;
  for (size_t vnc = 0; vnc < rt.cores().size(); ++vnc) {
    const int core = rt.cores()[vnc];
    absl::StatusOr<std::unique_ptr<nrt_client::LoadedModel>> model =
        nrt_client::LoadedModel::Load(rt, *input, static_cast<int>(vnc));
    if (!model.ok()) {
      PrintError(kTool, absl::StrCat("cannot load ", input->display, " on nc", core, ": ",
                                     model.status().message()));
      return kExitFailure;
    }
    const nrt_client::LoadedModel& m = **model;
    const std::optional<json>& d = m.description();
    const char* compiled = input->kind == "neff" ? "" : " (compiled from HLO)";
    if (!doc.contains("inputs")) {
      doc["inputs"] = m.inputs().size();
      doc["outputs"] = m.outputs().size();
      if (d.has_value()) {
        doc["model"] = m.name();
        doc["target"] = d->value("target", std::string());
        doc["plan"] = (*d)["plan"];
        absl::StrAppend(&text, absl::StrFormat("%s: model '%s' for %s%s, %d inputs, %d outputs\n",
                                               input->display, m.name(), doc["target"].get<std::string>(),
                                               compiled, m.inputs().size(), m.outputs().size()));
        absl::StrAppend(&text, absl::StrFormat("plan: %s%s, kernel workspace %s\n",
                                               FormatBytes(U64((*d)["plan"], "total")),
                                               DescribePlan((*d)["plan"]),
                                               FormatBytes(U64((*d)["plan"], "workspace"))));
      } else {
        absl::StrAppend(&text, absl::StrFormat("%s: model%s, %d inputs, %d outputs\n", input->display,
                                               compiled, m.inputs().size(), m.outputs().size()));
      }
    }
    json entry;
    if (d.has_value()) {
      ReportCore(*d, core, &text, &entry);
    } else {
      // The SDK's functions alone: the load's wall time and the core's memory.
      missing_extras = true;
      nrt_vnc_memory_stats_t stats{};
      size_t got = 0;
      if (rt.sdk().get_vnc_memory_stats(static_cast<uint32_t>(vnc), &stats, sizeof stats, &got) ==
          NRT_SUCCESS) {
        absl::StrAppend(&text, absl::StrFormat("nc%d: device memory in use %s\n", core,
                                               FormatBytes(stats.bytes_used)));
        entry["device_memory_in_use"] = stats.bytes_used;
      }
      absl::StrAppend(&text, absl::StrFormat("nc%d: loaded in %.3f ms\n", core, m.load_wall_ms()));
      entry["load_ms"] = json{{"total", m.load_wall_ms()}};
    }
    entry["core"] = core;
    // Unloaded before the next core; first, so the metrics show the frees.
    model->reset();
    if (rt.ext().describe_core_memory != nullptr) {
      char* metrics_text = nullptr;
      if (rt.ext().describe_core_memory(static_cast<uint32_t>(vnc), &metrics_text) == NRT_SUCCESS &&
          metrics_text != nullptr) {
        json metrics = json::parse(metrics_text, nullptr, /*allow_exceptions=*/false);
        rt.ext().free(metrics_text);
        if (!metrics.is_discarded() && metrics.value("enabled", false)) {
          absl::StrAppend(&text, absl::StrFormat("nc%d: device memory metrics: %s\n", core,
                                                 metrics.value("summary", std::string())));
          entry["memory_metrics"] = metrics["categories"];
        }
      }
    }
    doc["cores"].push_back(entry);
  }
  if (missing_extras) {
    // One line, on stderr: stdout keeps the report's shape.
    std::fprintf(stderr, "%s: %s\n", kTool,
                 rt.library().Unavailable("model name, memory plan, load stage timings and debug info").c_str());
  }
  if (request.json) {
    std::printf("%s\n", doc.dump(2).c_str());
  } else {
    std::fputs(text.c_str(), stdout);
  }
  return kExitOk;
}

}  // namespace neuron::load_tool
