// sort (stable, several operands permuted together, any comparator) and
// topk. A comparator that is a plain LT/GT compare of the first operand
// takes a typed fast path; other comparators are evaluated per comparison.
#ifndef NEURON_LIB_KERNELS_SORT_OPS_H_
#define NEURON_LIB_KERNELS_SORT_OPS_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/hlo/instruction.h"
#include "lib/kernels/buffer.h"
#include "lib/kernels/scalar_fn.h"

namespace neuron::kernels {

class SortKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SortKernel>> Plan(const hlo::Instruction& instr);
  void Run(const std::vector<const Buf*>& ins, const std::vector<Buf*>& outs);

 private:
  int64_t dim_ = 0;
  std::unique_ptr<ScalarFn> cmp_;
  int fast_ = 0;  // 0 general, 1 ascending on operand 0, -1 descending
  bool total_order_ = false;
};

// topk(operand, k, largest): values and s32 indices along the last dim;
// ties keep the lower index first.
void TopK(const Buf& in, int64_t k, bool largest, Buf& values, Buf& indices);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_SORT_OPS_H_
