// Prints a module as HLO text in the short form XLA uses (operands by name,
// shapes with layouts), which ParseText reads back.
#ifndef NEURON_LIB_HLO_PRINTER_H_
#define NEURON_LIB_HLO_PRINTER_H_

#include <string>

#include "lib/hlo/module.h"

namespace neuron::hlo {

struct PrintOptions {
  bool metadata = true;  // metadata={...}
};

std::string PrintModule(const Module& module, const PrintOptions& options = {});
std::string PrintComputation(const Computation& computation, bool is_entry,
                             const PrintOptions& options = {});
// One instruction line without indentation or "ROOT".
std::string PrintInstruction(const Instruction& instruction, const PrintOptions& options = {});

}  // namespace neuron::hlo

#endif  // NEURON_LIB_HLO_PRINTER_H_
