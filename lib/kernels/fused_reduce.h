// A reduction fused with the elementwise work that makes its operand (what
// XLA calls an input fusion): `reduce(E(params...), init)` where E is
// converts, broadcasts, iotas and arithmetic on the fusion's parameters.
// E is evaluated slice by slice into a buffer that stays in cache, and each
// slice is reduced there, so E never exists whole: a train step's softmax
// and cross-entropy over the vocabulary, a norm's sums of squares or a
// bias gradient's sum of products no longer take a full-size buffer each.
//
// The slices are contiguous runs of E in row-major order. Where a slice
// covers only part of what an output element reduces (the reduced dims
// lead), slices' results are combined in double (int64 for integers), so
// the result is as exact as the plain reduction's.
#ifndef NEURON_LIB_KERNELS_FUSED_REDUCE_H_
#define NEURON_LIB_KERNELS_FUSED_REDUCE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/hlo/instruction.h"
#include "lib/kernels/buffer.h"
#include "lib/kernels/elementwise_kernel.h"
#include "lib/kernels/lazy_scratch.h"
#include "lib/kernels/reduce_ops.h"

namespace neuron::kernels {

class FusedReduceKernel {
 public:
  // `fusion`'s computation must be a one-operand reduce by a simple reducer
  // (add, multiply, maximum, minimum, and, or) of elementwise work on its
  // parameters, with an init value that is a parameter or a constant.
  // Fails with the reason otherwise (the caller then runs the computation
  // as a call). `slice_bytes` bounds each slice of E (tests use small ones).
  static absl::StatusOr<std::unique_ptr<FusedReduceKernel>> Plan(const hlo::Instruction& fusion,
                                                                 int64_t slice_bytes = 256 << 10);

  // operands: the fusion's operands' buffers, by parameter number.
  void Run(const std::vector<const Buf*>& operands, Buf& out, const ExprRunContext& ctx,
           int threads);

 private:
  FusedReduceKernel() = default;
  struct Acc;  // one worker's buffers for a run
  // Where output block `block` lies: its chunk of dim split_ (0 when that
  // dim is reduced), its first element of E at the kept lead dims' index,
  // and its outputs.
  struct Block {
    int64_t chunk = 0, value_start = 0, first_output = 0, outputs = 0;
  };
  Block BlockAt(int64_t block) const;
  // Reduces the slices `first`..`last` (exclusive) of output block `block`
  // on worker `slot`, into `acc` (combine) or straight into `out`.
  void ReduceSlices(int slot, int64_t block, int64_t first, int64_t last,
                    const std::vector<const Buf*>& operands, Buf& out, const Acc& acc,
                    const ExprRunContext& ctx, bool combine);
  void Store(const Acc& acc, int64_t block, Buf& out) const;

  std::unique_ptr<ElementwiseKernel> values_;  // E
  hlo::ElementType value_type_ = hlo::ElementType::kInvalid;
  int value_size_ = 0;
  hlo::Opcode op_ = hlo::Opcode::kUnknown;
  bool integral_ = false;  // accumulate in int64
  // Where the init value is: a parameter, or this constant's bytes.
  int init_parameter_ = -1;
  std::vector<uint8_t> init_constant_;
  hlo::ElementType init_type_ = hlo::ElementType::kInvalid;

  // E's dims split at `split_`: dims before it index whole slices, dim
  // `split_` is taken `chunk_` at a time, the dims after it lie whole in
  // every slice (inner_ elements).
  std::vector<int64_t> dims_, strides_;
  int64_t split_ = 0, chunk_ = 1, chunks_ = 1, inner_ = 1;
  bool split_kept_ = false;
  std::vector<int64_t> kept_lead_, reduced_lead_;  // dims before split_
  int64_t kept_inner_ = 1;       // output elements per index of split_ (kept dims after it)
  int64_t blocks_ = 1;           // output blocks: kept lead combinations x (chunks if split_ is kept)
  int64_t slices_per_block_ = 1; // reduced lead combinations x (chunks if split_ is reduced)
  int64_t block_outputs_ = 1;    // the most outputs one block holds

  // Per worker: E's slice and the slice's results, and reductions of a
  // full chunk and of the last, shorter one.
  std::array<LazyScratch, 2> slice_, partial_, acc_;
  std::array<std::unique_ptr<ReduceLikeKernel>, 2> full_, last_;
};

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_FUSED_REDUCE_H_
