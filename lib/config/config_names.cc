// Names of the small config enums, and the process-environment lookup.
#include <cstdlib>
#include <string>

#include "lib/config/config.h"

namespace neuron::config {

const char* SourceName(Source source) {
  switch (source) {
    case Source::kDefault: return "default";
    case Source::kEnv: return "env";
    case Source::kDerived: return "derived";
  }
  return "default";
}

const char* SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "error";
}

const char* ValueTypeName(ValueType type) {
  switch (type) {
    case ValueType::kBool: return "boolean";
    case ValueType::kUnsigned: return "unsigned integer";
    case ValueType::kSigned: return "signed integer";
    case ValueType::kByteCount: return "byte count";
    case ValueType::kRangeList: return "range list";
    case ValueType::kEnum: return "enum";
    case ValueType::kString: return "string";
  }
  return "string";
}

EnvLookup ProcessEnv() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

}  // namespace neuron::config
