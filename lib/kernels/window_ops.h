// The windowed reductions: reduce-window and select-and-scatter (a
// max-pool's gradient). Simple reducers, and a select that compares the
// two values with a scatter that adds, run type-specialised: whole rows of
// the trailing dims the window leaves alone are combined per window tap,
// or, when the innermost dim is windowed, runs of its output positions.
// Other computations (and variadic reduce-window) run them per element.
#ifndef NEURON_LIB_KERNELS_WINDOW_OPS_H_
#define NEURON_LIB_KERNELS_WINDOW_OPS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "lib/hlo/instruction.h"
#include "lib/kernels/reduce_ops.h"

namespace neuron::kernels {

absl::StatusOr<std::unique_ptr<ReduceLikeKernel>> PlanReduceWindow(const hlo::Instruction& instr);
absl::StatusOr<std::unique_ptr<ReduceLikeKernel>> PlanSelectAndScatter(const hlo::Instruction& instr);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_WINDOW_OPS_H_
