// Random number operators: rng-bit-generator (Philox-4x32-10 counter mode
// keyed by the state; the bit stream is NOT bit-identical to XLA's, which
// no test here can check, but it is deterministic in the state and the
// new state advances the counter), rng (uniform / normal from a per-kernel
// stream that advances every execution) and rng-get-and-update-state.
#ifndef NEURON_LIB_KERNELS_RNG_H_
#define NEURON_LIB_KERNELS_RNG_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/hlo/instruction.h"
#include "lib/kernels/buffer.h"

namespace neuron::kernels {

class RngKernel {
 public:
  virtual ~RngKernel() = default;
  virtual void Run(const std::vector<const Buf*>& ins, const std::vector<Buf*>& outs) = 0;
};

absl::StatusOr<std::unique_ptr<RngKernel>> PlanRng(const hlo::Instruction& instr);

// Philox-4x32-10 block for (counter, key): exposed for tests.
void Philox4x32(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_RNG_H_
