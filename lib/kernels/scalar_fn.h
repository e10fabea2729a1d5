// A small computation (reducer, comparator, scatter combiner, select) run
// on lanes of values in their compute domains, with a scalar convenience
// form. Values travel in 8-byte slots: float, double or int64 per domain.
#ifndef NEURON_LIB_KERNELS_SCALAR_FN_H_
#define NEURON_LIB_KERNELS_SCALAR_FN_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/kernels/expr_program.h"

namespace neuron::kernels {

class ScalarFn {
 public:
  static absl::StatusOr<ScalarFn> Compile(const hlo::Computation& comp);
  // A reducer, its bf16/f16/f8 arithmetic done in f32 (like the typed
  // reductions, which accumulate in double): the caller holds accumulators
  // in f32 lanes and rounds them to their type once, when it stores them.
  static absl::StatusOr<ScalarFn> CompileReducer(const hlo::Computation& comp);

  int parameter_count() const { return param_count_; }
  const std::vector<ElementType>& output_types() const { return program_->output_types(); }
  hlo::Opcode simple_binary_op() const { return program_->simple_binary_op(); }
  std::optional<hlo::ComparisonDirection> simple_compare() const { return program_->simple_compare(); }
  const ExprProgram& program() const { return *program_; }

  // params[p] points at n lanes of parameter p (in its domain); out[j]
  // receives pointers to output j's lanes.
  void EvalLanes(const void* const* params, int64_t n, const void** out);
  // One call: params[p] is one 8-byte slot; returns output j's slot bits.
  void EvalScalar(const uint64_t* params, uint64_t* out);

 private:
  static absl::StatusOr<ScalarFn> Build(const hlo::Computation& comp, bool widen_narrow_floats);
  std::unique_ptr<ExprProgram> program_;
  int param_count_ = 0;
  std::vector<const void*> in_tiles_;
  ExprScratch scratch_;
};

// Reads element i of a storage buffer into a domain slot, and back.
uint64_t LoadSlot(ElementType type, const uint8_t* base, int64_t i);
void StoreSlot(ElementType type, uint8_t* base, int64_t i, uint64_t slot);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_SCALAR_FN_H_
