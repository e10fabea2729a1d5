#include "lib/kernels/device_print.h"

#include <nlohmann/json.hpp>

namespace neuron::kernels {

std::string DevicePrintPrefix(const hlo::Instruction& instr) {
  const std::string& config = instr.attrs().backend_config;
  nlohmann::json j = nlohmann::json::parse(config, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("prefix") && j["prefix"].is_string()) {
    return j["prefix"].get<std::string>();
  }
  return config;
}

}  // namespace neuron::kernels
