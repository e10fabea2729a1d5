// Helpers for the config tests: a fake environment, the platforms the
// reference distinguishes, and lookups into a Resolution.
#ifndef NEURON_TESTS_CONFIG_CONFIG_TEST_UTIL_H_
#define NEURON_TESTS_CONFIG_CONFIG_TEST_UTIL_H_

#include <map>
#include <string>
#include <vector>

#include "lib/config/config.h"
#include "tests/support/runtime_env.h"

namespace neuron::config::testing {

// An environment holding exactly these variables.
using ::neuron::testing::MapEnv;

// trn1.2xlarge: 1 device of 2 NeuronCore-v2, 8 vCPUs.
inline PlatformFacts Trn1Small() {
  PlatformFacts p;
  p.arch = "trn1";
  p.instance_type = "trn1.2xlarge";
  p.devices = 1;
  p.physical_cores_per_device = 2;
  p.host_cpus = 8;
  return p;
}

// trn2.48xlarge: 16 devices of 8 NeuronCore-v3, 192 vCPUs.
inline PlatformFacts Trn2Large() {
  PlatformFacts p;
  p.arch = "trn2";
  p.instance_type = "trn2.48xlarge";
  p.devices = 16;
  p.physical_cores_per_device = 8;
  p.host_cpus = 192;
  return p;
}

// inf2.xlarge: 1 device of 2 NeuronCore-v2, 4 vCPUs.
inline PlatformFacts Inf2Small() {
  PlatformFacts p;
  p.arch = "inf2";
  p.instance_type = "inf2.xlarge";
  p.devices = 1;
  p.physical_cores_per_device = 2;
  p.host_cpus = 4;
  return p;
}

inline Resolution ResolveWith(std::map<std::string, std::string> vars,
                              const PlatformFacts& platform) {
  return Resolve(MapEnv(std::move(vars)), platform);
}

inline const Resolution::Value* FindValue(const Resolution& r, const std::string& name) {
  for (const Resolution::Value& v : r.values) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

inline std::string ValueOf(const Resolution& r, const std::string& name) {
  const Resolution::Value* v = FindValue(r, name);
  return v ? v->value : "<no such variable>";
}

inline std::string SourceOf(const Resolution& r, const std::string& name) {
  const Resolution::Value* v = FindValue(r, name);
  return v ? SourceName(v->source) : "<no such variable>";
}

// The diagnostics about one variable with this severity.
inline std::vector<std::string> Messages(const Resolution& r, const std::string& name,
                                         Severity severity) {
  std::vector<std::string> out;
  for (const Diagnostic& d : r.diagnostics) {
    if (d.variable == name && d.severity == severity) out.push_back(d.message);
  }
  return out;
}

inline std::string AllDiagnostics(const Resolution& r) {
  std::string out;
  for (const Diagnostic& d : r.diagnostics) {
    out += std::string(SeverityName(d.severity)) + ": " + d.message + "\n";
  }
  if (!r.ok()) out += "init error: " + r.init_error + "\n";
  return out;
}

}  // namespace neuron::config::testing

#endif  // NEURON_TESTS_CONFIG_CONFIG_TEST_UTIL_H_
