// A compiler pass: rewrites a module in place and says whether it changed
// anything. Passes keep the module valid for hlo::Verify.
#ifndef NEURON_LIB_COMPILER_PASS_H_
#define NEURON_LIB_COMPILER_PASS_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "lib/hlo/module.h"

namespace neuron::compiler {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view Name() const = 0;
  virtual absl::StatusOr<bool> Run(hlo::Module& module) = 0;
};

}  // namespace neuron::compiler

#endif  // NEURON_LIB_COMPILER_PASS_H_
