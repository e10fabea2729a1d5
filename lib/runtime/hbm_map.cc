#include "lib/runtime/hbm_map.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_format.h"
#include "lib/runtime/status.h"

namespace neuron::runtime {
namespace {

HbmRegion RegionOf(Core& core) {
  device::HbmArena& arena = core.arena();
  return {arena.HostAddress(0), arena.capacity(), core.id()};
}

}  // namespace

absl::Status HbmMapped(const Runtime& rt) {
  if (!device::PlatformFactsFor(rt.instance()).IsTrn2Family()) {
    return RtError(NRT_INVALID,
                   absl::StrFormat("HBM is mapped into the process (NEURON_RT_MAP_HBM) on "
                                   "trn2-family instances only, not on %s "
                                   "(NEURON_SIM_INSTANCE_TYPE)",
                                   rt.instance().name));
  }
  if (!rt.config().map_hbm) {
    return RtError(NRT_INVALID,
                   "HBM is not mapped into the process: NEURON_RT_MAP_HBM is off");
  }
  return absl::OkStatus();
}

absl::StatusOr<HbmRegion> MappedHbmRegion(Runtime& rt, int device, int index) {
  if (absl::Status mapped = HbmMapped(rt); !mapped.ok()) return mapped;
  const device::LogicalCoreMap& map = rt.core_map();
  if (device < 0 || device >= map.devices()) {
    return RtError(NRT_INVALID, absl::StrFormat("device %d does not exist (%s has %d)", device,
                                                rt.instance().name, map.devices()));
  }
  if (index < 0) return RtError(NRT_INVALID, absl::StrFormat("HBM index %d is negative", index));
  const std::vector<int> cores = map.CoresOfDevice(device);
  if (static_cast<size_t>(index) >= cores.size()) {
    return RtError(NRT_INVALID_HANDLE,
                   absl::StrFormat("device %d has %d HBM regions (one per NeuronCore at LNC %d), "
                                   "no index %d",
                                   device, cores.size(), map.lnc(), index));
  }
  const int id = cores[index];
  if (!std::binary_search(rt.cores().begin(), rt.cores().end(), id)) {
    return RtError(NRT_INVALID,
                   absl::StrFormat("HBM region %d of device %d belongs to NeuronCore %d, which "
                                   "this process does not hold (NEURON_RT_VISIBLE_CORES)",
                                   index, device, id));
  }
  return RegionOf(**rt.GetCore(id));
}

absl::StatusOr<HbmRegion> MappedHbmRange(Runtime& rt, const void* addr, uint64_t size) {
  if (absl::Status mapped = HbmMapped(rt); !mapped.ok()) return mapped;
  const auto at = reinterpret_cast<uintptr_t>(addr);
  for (int id : rt.cores()) {
    const HbmRegion r = RegionOf(**rt.GetCore(id));
    const auto base = reinterpret_cast<uintptr_t>(r.base);
    if (r.base != nullptr && at >= base && at - base <= r.size && size <= r.size - (at - base)) {
      return r;
    }
  }
  return RtError(NRT_INVALID, absl::StrFormat("%d bytes at %p are not inside a mapped HBM "
                                              "region (nrt_get_hbm_mmap_va)",
                                              size, addr));
}

}  // namespace neuron::runtime
