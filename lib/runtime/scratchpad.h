// Scratchpad sizing: a model's intermediates live in scratchpad pages of
// NEURON_SCRATCHPAD_PAGE_SIZE MiB (64 MiB when NEURON_RT_CONTIGUOUS_SCRATCHPAD
// is on, which forces that size). A variable larger than one page still
// loads (it takes a run of adjacent pages) but the runtime warns with the
// page size that would fit it, as the real runtime does.
#ifndef NEURON_LIB_RUNTIME_SCRATCHPAD_H_
#define NEURON_LIB_RUNTIME_SCRATCHPAD_H_

#include <cstdint>
#include <optional>
#include <string>

#include "lib/config/config.h"

namespace neuron::runtime {

struct ScratchpadPlan {
  uint64_t page_bytes = 0;
  uint64_t pages = 0;
  uint64_t bytes = 0;                 // pages * page_bytes
  // Set when the largest variable does not fit one page: the smallest
  // power-of-two MiB page that holds it.
  std::optional<uint64_t> recommended_page_mib;
};

// `scratch_bytes`: the most intermediate bytes live at once;
// `largest_variable`: the biggest single intermediate.
ScratchpadPlan PlanScratchpad(const config::RuntimeConfig& config, uint64_t scratch_bytes,
                              uint64_t largest_variable);

// The WARN line for a plan with a recommendation ("" otherwise).
std::string ScratchpadWarning(const config::RuntimeConfig& config, const ScratchpadPlan& plan,
                              uint64_t largest_variable);

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_SCRATCHPAD_H_
