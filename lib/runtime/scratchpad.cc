#include "lib/runtime/scratchpad.h"

#include "absl/strings/str_format.h"
#include "lib/support/parse.h"

namespace neuron::runtime {

ScratchpadPlan PlanScratchpad(const config::RuntimeConfig& config, uint64_t scratch_bytes,
                              uint64_t largest_variable) {
  ScratchpadPlan plan;
  const uint64_t page_mib = std::max<uint64_t>(1, config.ScratchpadPageMibInEffect());
  plan.page_bytes = page_mib << 20;
  plan.pages = (scratch_bytes + plan.page_bytes - 1) / plan.page_bytes;
  plan.bytes = plan.pages * plan.page_bytes;
  if (largest_variable > plan.page_bytes) {
    uint64_t mib = 1;
    while ((mib << 20) < largest_variable) mib <<= 1;
    plan.recommended_page_mib = mib;
  }
  return plan;
}

std::string ScratchpadWarning(const config::RuntimeConfig& config, const ScratchpadPlan& plan,
                              uint64_t largest_variable) {
  if (!plan.recommended_page_mib.has_value()) return "";
  const uint64_t mib = *plan.recommended_page_mib;
  std::string contiguous =
      config.contiguous_scratchpad
          ? " (contiguous scratchpad forces 64 MiB pages: also set NEURON_RT_CONTIGUOUS_SCRATCHPAD=0)"
          : "";
  return absl::StrFormat(
      "The largest variable of the model (%s) does not fit a %d MiB scratchpad page; recommended: "
      "NEURON_SCRATCHPAD_PAGE_SIZE=%d%s with the compiler flag --hbm-scratchpad-page-size=%d",
      FormatBytes(largest_variable), plan.page_bytes >> 20, mib, contiguous, mib);
}

}  // namespace neuron::runtime
