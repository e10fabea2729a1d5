// Numerical-error checks of an execution's results (NaN/Inf), reported per
// NEURON_RT_NUMERICAL_ERRORS_VERBOSITY: none checks nothing (the scan costs
// a pass over the outputs), critical names the outputs, debug also the
// first HLO instruction that produced a non-finite value (beyond the real
// runtime, which only gives the status), verbose also counts NaN and Inf.
#ifndef NEURON_LIB_RUNTIME_NUMERICS_H_
#define NEURON_LIB_RUNTIME_NUMERICS_H_

#include <cstdint>

#include "lib/hlo/shape.h"

namespace neuron::runtime {

struct NonFiniteCount {
  int64_t nan = 0;
  int64_t inf = 0;
  int64_t first_index = -1;  // flat index of the first non-finite element
  bool any() const { return nan + inf > 0; }
};

// Counts NaN and Inf among `count` elements of `type` at `data` (integer
// types have none).
NonFiniteCount CountNonFinite(hlo::ElementType type, const void* data, int64_t count);

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_NUMERICS_H_
