// The MLIR attribute dictionary that typed-FFI custom-calls carry as their
// backend_config, e.g. `{heads = 32 : i64, scale = 1.0e+00 : f64, training
// = true}`: names to values, with typed look-ups that say what was wrong.
#ifndef NEURON_LIB_COMPILER_PASSES_MLIR_ATTRIBUTE_DICT_H_
#define NEURON_LIB_COMPILER_PASSES_MLIR_ATTRIBUTE_DICT_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace neuron::compiler {

class MlirAttributeDict {
 public:
  // Parses `{name = value [: type], ...}`; an error names what did not parse.
  static absl::StatusOr<MlirAttributeDict> Parse(std::string_view text);

  bool Has(std::string_view name) const { return values_.count(std::string(name)) != 0; }
  // The value of `name` as an integer, float or boolean; an error when it
  // is absent or of another kind.
  absl::StatusOr<int64_t> Int(std::string_view name) const;
  absl::StatusOr<double> Float(std::string_view name) const;
  absl::StatusOr<bool> Bool(std::string_view name) const;
  // Like the above, `fallback` when absent (still an error when malformed).
  absl::StatusOr<int64_t> IntOr(std::string_view name, int64_t fallback) const;
  absl::StatusOr<double> FloatOr(std::string_view name, double fallback) const;
  absl::StatusOr<bool> BoolOr(std::string_view name, bool fallback) const;

 private:
  absl::StatusOr<std::string_view> Value(std::string_view name) const;
  std::map<std::string, std::string> values_;  // the value text, without its type
};

}  // namespace neuron::compiler

#endif  // NEURON_LIB_COMPILER_PASSES_MLIR_ATTRIBUTE_DICT_H_
