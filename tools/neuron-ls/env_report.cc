#include "tools/neuron-ls/env_report.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "lib/config/variable_effects.h"
#include <nlohmann/json.hpp>

namespace neuron::ls {

using config::Diagnostic;
using config::EffectKindName;
using config::EffectOf;
using config::Resolution;
using config::SeverityName;
using config::SourceName;
using config::VariableEffect;

namespace {

// Values longer than this overflow their column instead of widening it for
// every row (the resolved event-type list is long).
constexpr size_t kMaxValueColumn = 40;

// "simulated" / "hardware-only", or "-" for a row that is not a variable of
// the reference (a derived line such as FI_PROVIDER).
const char* EffectColumn(const std::string& name) {
  const VariableEffect* e = EffectOf(name);
  return e != nullptr ? EffectKindName(e->kind) : "-";
}

}  // namespace

std::string FormatEnvTable(const Resolution& resolution) {
  size_t name_width = 4;   // "NAME"
  size_t value_width = 5;  // "VALUE"
  for (const Resolution::Value& v : resolution.values) {
    name_width = std::max(name_width, v.name.size());
    size_t shown = v.value.empty() ? 7 : v.value.size();  // "(unset)"
    if (shown <= kMaxValueColumn) value_width = std::max(value_width, shown);
  }
  std::string out = absl::StrFormat("%-*s  %-*s  %-7s  %s\n", name_width, "NAME",
                                    value_width, "VALUE", "SOURCE", "EFFECT");
  for (const Resolution::Value& v : resolution.values) {
    out += absl::StrFormat("%-*s  %-*s  %-7s  %s\n", name_width, v.name, value_width,
                           v.value.empty() ? "(unset)" : v.value,
                           SourceName(v.source), EffectColumn(v.name));
  }
  if (!resolution.diagnostics.empty()) {
    out += "\n";
    for (const Diagnostic& d : resolution.diagnostics) {
      out += absl::StrFormat("%s: %s\n", SeverityName(d.severity), d.message);
    }
  }
  if (!resolution.ok()) {
    out += absl::StrFormat("\nnrt_init would fail with %s: %s\n",
                           nrt_get_status_name(resolution.init_status),
                           resolution.init_error);
  }
  return out;
}

std::string FormatEnvJson(const Resolution& resolution) {
  // ordered_json keeps the documented key order.
  nlohmann::ordered_json root;
  nlohmann::ordered_json variables = nlohmann::ordered_json::array();
  for (const Resolution::Value& v : resolution.values) {
    nlohmann::ordered_json row = {
        {"name", v.name}, {"value", v.value}, {"source", SourceName(v.source)}};
    if (const VariableEffect* e = EffectOf(v.name)) {
      row["effect"] = EffectKindName(e->kind);
      row["effect_here"] = std::string(e->here);
      row["see"] = std::string(e->see);
    }
    variables.push_back(std::move(row));
  }
  nlohmann::ordered_json diagnostics = nlohmann::ordered_json::array();
  for (const Diagnostic& d : resolution.diagnostics) {
    diagnostics.push_back({{"severity", SeverityName(d.severity)},
                           {"variable", d.variable},
                           {"message", d.message}});
  }
  root["variables"] = std::move(variables);
  root["diagnostics"] = std::move(diagnostics);
  root["init_status"] = nrt_get_status_name(resolution.init_status);
  root["init_error"] = resolution.init_error;
  // Environment values may hold any bytes: replace invalid UTF-8 instead of
  // throwing.
  return root.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

}  // namespace neuron::ls
