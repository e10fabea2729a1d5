// neuron-exec --expect: compares a result with an expected tensor
// elementwise, |got - expected| <= atol + rtol * |expected|, and names the
// worst element when they differ. NaN matches NaN; infinities match only
// the same infinity.
#ifndef NEURON_TOOLS_NEURON_EXEC_TENSOR_COMPARE_H_
#define NEURON_TOOLS_NEURON_EXEC_TENSOR_COMPARE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lib/hlo/literal.h"

namespace neuron::exec_tool {

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-5;
};

struct Comparison {
  bool ok = true;
  std::string error;          // shape/type mismatch, or the worst element
  int64_t mismatches = 0;
  int64_t worst_index = -1;   // flat index
  std::vector<int64_t> worst_coords;
  double got = 0, expected = 0;
};

// Shapes must have the same dimensions; element types may differ (an
// expected f32 file for a bf16 result is compared by value).
Comparison CompareTensors(const hlo::Literal& got, const hlo::Literal& expected,
                          const Tolerance& tolerance);

}  // namespace neuron::exec_tool

#endif  // NEURON_TOOLS_NEURON_EXEC_TENSOR_COMPARE_H_
