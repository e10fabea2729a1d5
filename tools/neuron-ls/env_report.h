// Renders a configuration Resolution for people (a table) and for scripts
// (JSON): `neuron-ls --env`.
#ifndef NEURON_TOOLS_NEURON_LS_ENV_REPORT_H_
#define NEURON_TOOLS_NEURON_LS_ENV_REPORT_H_

#include <string>

#include "lib/config/config.h"

namespace neuron::ls {

// A table: NAME  VALUE  SOURCE  EFFECT (simulated / hardware-only, see
// variable_effects.h), one variable a line, followed by the
// diagnostics (one line each) and, when init would fail, the error line.
std::string FormatEnvTable(const config::Resolution& resolution);

// {"variables":[{"name":..,"value":..,"source":"default|env|derived",
//                "effect":"simulated|hardware-only","effect_here":..,"see":..},..],
//  "diagnostics":[{"severity":"warning|error|info","variable":..,"message":..},..],
//  "init_status":"NRT_SUCCESS"|..., "init_error":"..."}  (values as strings)
std::string FormatEnvJson(const config::Resolution& resolution);

}  // namespace neuron::ls

#endif  // NEURON_TOOLS_NEURON_LS_ENV_REPORT_H_
