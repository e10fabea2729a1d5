// The neuron.device_print custom call, the counterpart of NKI's
// device_print(prefix, tensor): its one operand passes through as the
// result (so it can sit anywhere in a graph) and, each time the step
// runs, the value is handed to the execution's DevicePrinter with the
// prefix. The runtime decides where it goes (the core's stdout queue, the
// ndebug stream); with no printer the step only passes the value on.
//
//   p = f32[4] custom-call(x), custom_call_target="neuron.device_print",
//       backend_config="x is "
// The prefix is backend_config's text, or its "prefix" member when it is
// a JSON object.
#ifndef NEURON_LIB_KERNELS_DEVICE_PRINT_H_
#define NEURON_LIB_KERNELS_DEVICE_PRINT_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "lib/hlo/instruction.h"
#include "lib/hlo/shape.h"

namespace neuron::kernels {

// One printed value: row-major bytes valid during the call only.
struct PrintedTensor {
  std::string_view prefix;
  hlo::ElementType type = hlo::ElementType::kInvalid;
  std::span<const int64_t> dims;
  const uint8_t* data = nullptr;
  int64_t bytes = 0;
};

class DevicePrinter {
 public:
  virtual ~DevicePrinter() = default;
  // Called from the executing thread, once per device_print step run.
  virtual void Print(const PrintedTensor& value) = 0;
};

std::string DevicePrintPrefix(const hlo::Instruction& instr);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_DEVICE_PRINT_H_
