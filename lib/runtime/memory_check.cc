#include "lib/runtime/memory_check.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/runtime/core.h"
#include "lib/runtime/status.h"
#include "lib/support/host_memory.h"
#include "lib/support/parse.h"

namespace neuron::runtime {

std::string DescribePlan(const program::MemoryPlan& plan) {
  auto bytes = [](int64_t n) { return FormatBytes(static_cast<uint64_t>(std::max<int64_t>(n, 0))); };
  std::string out = absl::StrCat(" (inputs ", bytes(plan.inputs), ", outputs ", bytes(plan.outputs));
  if (plan.aliased > 0) absl::StrAppend(&out, ", ", bytes(plan.aliased), " of them in their inputs");
  absl::StrAppend(&out, ", scratch ", bytes(plan.scratch_peak), ", constants ", bytes(plan.constants),
                  ")");
  return out;
}

absl::Status CheckDeviceMemory(const Core& core, uint64_t need, std::string_view what,
                               std::string_view parts) {
  const uint64_t capacity = core.arena().capacity();
  const uint64_t used = core.arena().used();
  const uint64_t free = capacity > used ? capacity - used : 0;
  if (need <= free) return absl::OkStatus();
  return RtError(NRT_RESOURCE,
                 absl::StrFormat("%s needs %s%s of device memory, and nc%d has %s free of %s",
                                 std::string(what), FormatBytes(need), std::string(parts), core.id(),
                                 FormatBytes(free), FormatBytes(capacity)));
}

absl::Status CheckHostMemory(uint64_t need, std::string_view what, std::string_view parts) {
  const HostMemoryReport report = ReadHostMemory();
  const HostMemoryLimit* binding = report.Binding();
  if (binding == nullptr || need <= binding->bytes) return absl::OkStatus();
  return RtError(NRT_RESOURCE, absl::StrFormat("%s needs %s%s of host memory, and %s", std::string(what),
                                               FormatBytes(need), std::string(parts), DescribeLimit(*binding)));
}

}  // namespace neuron::runtime
