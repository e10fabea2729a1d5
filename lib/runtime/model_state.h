// Internal: what a loaded Model holds. Shared by the loader
// (model_loader.cc) and execution (model.cc); not part of the API.
#ifndef NEURON_LIB_RUNTIME_MODEL_STATE_H_
#define NEURON_LIB_RUNTIME_MODEL_STATE_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lib/config/config.h"
#include "lib/device/hbm_arena.h"
#include "lib/kernels/executable.h"
#include "lib/neff/neff.h"
#include "lib/runtime/debug_info.h"
#include "lib/program/package.h"
#include "lib/runtime/model.h"

namespace neuron::runtime {

struct ModelState {
  Core* core = nullptr;
  const config::RuntimeConfig* config = nullptr;
  neff::Package neff;                // keeps the mapped or inflated bytes
  program::Package program;          // constants view neff's bytes
  std::unique_ptr<kernels::Executable> executable;
  std::vector<TensorInfo> inputs, outputs;
  std::string name, target;
  std::string path;                  // the NEFF file ("" when loaded from bytes)
  LoadTimings timings;
  LoadCost cost;
  std::vector<device::HbmBlock> blocks;  // constants, model code, scratchpad
  std::optional<DebugInfo> debug_info;   // unset: NEURON_RT_DISABLE_DEBUG_INFO
  int threads = 1;
  uint64_t executions = 0;           // salt for stochastic rounding
  // Executions started, for their rng seeds: the model's own count, not a
  // process-wide one that every core's executions would write.
  std::atomic<uint64_t> rng_draws{0};
};

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_MODEL_STATE_H_
