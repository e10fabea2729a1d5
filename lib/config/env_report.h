// Renders a configuration Resolution for people (a table) and for scripts
// (JSON). Used by `neuron-ls --env`.
//
// CONTRACT: tools/neuron-ls calls these two functions.
#ifndef NEURON_LIB_CONFIG_ENV_REPORT_H_
#define NEURON_LIB_CONFIG_ENV_REPORT_H_

#include <string>

#include "lib/config/config.h"

namespace neuron::config {

// A table: NAME  VALUE  SOURCE  EFFECT (simulated / hardware-only, see
// variable_effects.h), one variable a line, followed by the
// diagnostics (one line each) and, when init would fail, the error line.
std::string FormatEnvTable(const Resolution& resolution);

// {"variables":[{"name":..,"value":..,"source":"default|env|derived",
//                "effect":"simulated|hardware-only","effect_here":..,"see":..},..],
//  "diagnostics":[{"severity":"warning|error|info","variable":..,"message":..},..],
//  "init_status":"NRT_SUCCESS"|..., "init_error":"..."}  (values as strings)
std::string FormatEnvJson(const Resolution& resolution);

}  // namespace neuron::config

#endif  // NEURON_LIB_CONFIG_ENV_REPORT_H_
