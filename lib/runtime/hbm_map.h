// NEURON_RT_MAP_HBM: on trn2-family instances the HBM of every held core is
// mapped into the process for direct host access (nrt_get_hbm_mmap_va,
// nrt_memcpy_to_device). The simulated HBM is the core's arena, already host
// memory: mapping it means handing out its address range. Each logical
// core's arena is one HBM region of its device, numbered by the core's index
// in the device (the hbm_index of nrt_tensor_get_device_allocation_info), so
// a tensor's bytes lie at its region's base + its physical_address.
#ifndef NEURON_LIB_RUNTIME_HBM_MAP_H_
#define NEURON_LIB_RUNTIME_HBM_MAP_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/runtime/runtime.h"

namespace neuron::runtime {

struct HbmRegion {
  void* base = nullptr;
  uint64_t size = 0;
  int core = 0;  // the logical core whose arena it is
};

// OK when HBM is mapped under this runtime; otherwise NRT_INVALID saying
// why (the instance family, or NEURON_RT_MAP_HBM=0).
absl::Status HbmMapped(const Runtime& rt);

// Region `index` of `device`: NRT_INVALID for HBM not mapped, a device the
// instance lacks, or the region of a core this process does not hold;
// NRT_INVALID_HANDLE past the device's last region.
absl::StatusOr<HbmRegion> MappedHbmRegion(Runtime& rt, int device, int index);

// The region that holds [addr, addr + size) whole; NRT_INVALID otherwise.
absl::StatusOr<HbmRegion> MappedHbmRange(Runtime& rt, const void* addr, uint64_t size);

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_HBM_MAP_H_
