// Calls that exist for hardware the simulated device has no counterpart
// of: they fail with the status the SDK documents for "not supported here"
// and say why in nrt_get_last_error(), never pretending to succeed. Device
// ids, which do have a simulated meaning, are answered, and so is mapped
// HBM (NEURON_RT_MAP_HBM on trn2-family instances, lib/runtime/hbm_map.h).
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/nrt/api_state.h"
#include "lib/runtime/hbm_map.h"
#include "lib/runtime/status.h"

using namespace neuron::nrt_api;  // NOLINT: the C API is this file's whole job

namespace {

constexpr const char* kSimulated = "the simulated NeuronCore has no";

// Simulated devices of the instance (NEURON_SIM_INSTANCE_TYPE).
NRT_STATUS DeviceCount(const char* function, int* devices) {
  absl::StatusOr<neuron::runtime::PlatformView> view =
      neuron::runtime::ProbePlatform(neuron::config::ProcessEnv());
  if (!view.ok()) return Fail(function, view.status());
  *devices = view->instance->devices;
  return NRT_SUCCESS;
}

}  // namespace

extern "C" {

NRT_STATUS nrt_get_dmabuf_fd(uint64_t va, uint64_t size, int* fd) {
  return Fail(NRT_INVALID, absl::StrFormat("nrt_get_dmabuf_fd: %s dma-buf export: device memory "
                                           "is host memory here (use nrt_tensor_get_va)",
                                           kSimulated));
}

NRT_STATUS nrt_get_hbm_mmap_va(int device_id, int hbm_idx, void** addr, size_t* size) {
  constexpr const char* kFunction = "nrt_get_hbm_mmap_va";
  if (addr == nullptr || size == nullptr) {
    return Fail(NRT_INVALID, absl::StrFormat("%s: null addr or size", kFunction));
  }
  RuntimeRef rt(kFunction);
  if (!rt.ok()) return rt.status();
  absl::StatusOr<neuron::runtime::HbmRegion> region =
      neuron::runtime::MappedHbmRegion(*rt, device_id, hbm_idx);
  if (!region.ok()) {
    const NRT_STATUS code = neuron::runtime::NrtStatusOf(region.status());
    // Past the last region is how callers learn the count: not worth an
    // error line, only the last error.
    if (code == NRT_INVALID_HANDLE) {
      SetLastError(absl::StrCat(kFunction, ": ", region.status().message()));
      return code;
    }
    return Fail(kFunction, region.status());
  }
  *addr = region->base;
  *size = region->size;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_get_attached_efa_bdf(const void* va, char* efa_bdf, size_t* len) {
  return Fail(NRT_FAILURE,
              absl::StrFormat("nrt_get_attached_efa_bdf: %s EFA device attached", kSimulated));
}

void* nrt_get_libnccl_net(int* err, char* err_msg, size_t err_msg_size) {
  const std::string why = absl::StrFormat(
      "nrt_get_libnccl_net: %s NCCL network plugin; collectives run in lib/collectives", kSimulated);
  if (err != nullptr) *err = NRT_FAILURE;
  if (err_msg != nullptr && err_msg_size > 0) std::snprintf(err_msg, err_msg_size, "%s", why.c_str());
  Fail(NRT_FAILURE, why);
  return nullptr;
}

NRT_STATUS nrt_set_pool_eng_ucode(const nrt_ucode_info* ucode_info) {
  return Fail(NRT_INVALID,
              absl::StrFormat("nrt_set_pool_eng_ucode: %s pooling engine to load microcode into",
                              kSimulated));
}

NRT_STATUS nrt_memcpy_to_device(void* dest, const void* src, size_t size) {
  constexpr const char* kFunction = "nrt_memcpy_to_device";
  if (dest == nullptr || (src == nullptr && size > 0)) {
    return Fail(NRT_INVALID, absl::StrFormat("%s: null dest or src", kFunction));
  }
  RuntimeRef rt(kFunction);
  if (!rt.ok()) return rt.status();
  // Only into HBM mapped by nrt_get_hbm_mmap_va, as on the device.
  absl::StatusOr<neuron::runtime::HbmRegion> region =
      neuron::runtime::MappedHbmRange(*rt, dest, size);
  if (!region.ok()) return Fail(kFunction, region.status());
  if (size > 0) std::memcpy(dest, src, size);
  return NRT_SUCCESS;
}

NRT_STATUS nrt_host_device_id_get(int neuron_dev, uint32_t* host_device_id) {
  if (host_device_id == nullptr) {
    return Fail(NRT_INVALID, "nrt_host_device_id_get: null result pointer");
  }
  int devices = 0;
  if (NRT_STATUS s = DeviceCount("nrt_host_device_id_get", &devices); s != NRT_SUCCESS) return s;
  if (neuron_dev < 0 || neuron_dev >= devices) {
    return Fail(NRT_INVALID, absl::StrFormat("nrt_host_device_id_get: device %d does not exist "
                                             "(the instance has %d)",
                                             neuron_dev, devices));
  }
  *host_device_id = static_cast<uint32_t>(neuron_dev);  // no container remapping here
  return NRT_SUCCESS;
}

NRT_STATUS nrt_host_device_id_rid_map_get(uint32_t* count, uint32_t* host_did_to_rid_map) {
  if (count == nullptr || host_did_to_rid_map == nullptr) {
    return Fail(NRT_INVALID, "nrt_host_device_id_rid_map_get: null count or map");
  }
  int devices = 0;
  if (NRT_STATUS s = DeviceCount("nrt_host_device_id_rid_map_get", &devices); s != NRT_SUCCESS) {
    return s;
  }
  if (*count < static_cast<uint32_t>(devices)) {
    return Fail(NRT_INVALID, absl::StrFormat("nrt_host_device_id_rid_map_get: the map has room for "
                                             "%u entries, the instance has %d devices",
                                             *count, devices));
  }
  // Routing ids follow device ids on the simulated instance.
  for (int d = 0; d < devices; ++d) host_did_to_rid_map[d] = static_cast<uint32_t>(d);
  *count = static_cast<uint32_t>(devices);
  return NRT_SUCCESS;
}

}  // extern "C"
