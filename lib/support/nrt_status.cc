// Names and messages of NRT status codes.
#include "neuron/nrt_status.h"

#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace {

struct StatusInfo {
  NRT_STATUS code;
  const char* name;
  const char* message;
};

constexpr StatusInfo kStatuses[] = {
    {NRT_SUCCESS, "NRT_SUCCESS", "Success"},
    {NRT_FAILURE, "NRT_FAILURE", "Non specific failure"},
    {NRT_INVALID, "NRT_INVALID", "Invalid argument"},
    {NRT_INVALID_HANDLE, "NRT_INVALID_HANDLE", "Invalid handle"},
    {NRT_RESOURCE, "NRT_RESOURCE", "Allocation Failure"},
    {NRT_TIMEOUT, "NRT_TIMEOUT", "Timeout Exceeded"},
    {NRT_HW_ERROR, "NRT_HW_ERROR", "Hardware Error"},
    {NRT_QUEUE_FULL, "NRT_QUEUE_FULL", "Queue Full"},
    {NRT_LOAD_NOT_ENOUGH_NC, "NRT_LOAD_NOT_ENOUGH_NC",
     "Not enough NeuronCores available"},
    {NRT_UNSUPPORTED_NEFF_VERSION, "NRT_UNSUPPORTED_NEFF_VERSION",
     "Unsupported NEFF version"},
    {NRT_FAIL_HOST_MEM_ALLOC, "NRT_FAIL_HOST_MEM_ALLOC",
     "Host memory allocation failure"},
    {NRT_UNINITIALIZED, "NRT_UNINITIALIZED", "Runtime not initialized"},
    {NRT_CLOSED, "NRT_CLOSED", "Runtime closed"},
    {NRT_QUEUE_EMPTY, "NRT_QUEUE_EMPTY", "Queue Empty"},
    {NRT_EXEC_UNIT_UNRECOVERABLE, "NRT_EXEC_UNIT_UNRECOVERABLE",
     "Execution unit unrecoverable"},
    {NRT_EXEC_BAD_INPUT, "NRT_EXEC_BAD_INPUT", "Bad input"},
    {NRT_EXEC_COMPLETED_WITH_NUM_ERR, "NRT_EXEC_COMPLETED_WITH_NUM_ERR",
     "Numerical Error"},
    {NRT_EXEC_COMPLETED_WITH_ERR, "NRT_EXEC_COMPLETED_WITH_ERR",
     "Execution completed with error"},
    {NRT_EXEC_NC_BUSY, "NRT_EXEC_NC_BUSY", "NeuronCore busy"},
    {NRT_EXEC_OOB, "NRT_EXEC_OOB", "Out of bounds access"},
    {NRT_COLL_PENDING, "NRT_COLL_PENDING", "Collective operation pending"},
    {NRT_EXEC_HW_ERR_COLLECTIVES, "NRT_EXEC_HW_ERR_COLLECTIVES",
     "Collectives hardware error"},
    {NRT_EXEC_HW_ERR_HBM_UE, "NRT_EXEC_HW_ERR_HBM_UE",
     "HBM uncorrectable error"},
    {NRT_EXEC_HW_ERR_NC_UE, "NRT_EXEC_HW_ERR_NC_UE",
     "NeuronCore uncorrectable error"},
    {NRT_EXEC_HW_ERR_DMA_ABORT, "NRT_EXEC_HW_ERR_DMA_ABORT", "DMA abort"},
    {NRT_EXEC_SW_NQ_OVERFLOW, "NRT_EXEC_SW_NQ_OVERFLOW",
     "Notification queue overflow"},
    {NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE, "NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE",
     "Repairable HBM uncorrectable error"},
    {NRT_NETWORK_PROXY_FAILURE, "NRT_NETWORK_PROXY_FAILURE",
     "Network proxy failure"},
};

const StatusInfo* Find(NRT_STATUS status) {
  for (const StatusInfo& s : kStatuses) {
    if (s.code == status) return &s;
  }
  return nullptr;
}

}  // namespace

extern "C" const char* nrt_get_status_name(NRT_STATUS status) {
  const StatusInfo* s = Find(status);
  return s ? s->name : "NRT_UNKNOWN";
}

extern "C" const char* nrt_get_status_as_str(NRT_STATUS status) {
  const StatusInfo* s = Find(status);
  return s ? s->message : "Unknown status";
}

extern "C" int nrt_parse_status(const char* text, NRT_STATUS* out) {
  if (text == nullptr || *text == '\0') return -1;
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (*end == '\0') {
    const StatusInfo* s = Find(static_cast<NRT_STATUS>(value));
    if (s == nullptr) return -1;
    *out = s->code;
    return 0;
  }
  for (const StatusInfo& s : kStatuses) {
    if (strcasecmp(text, s.name) == 0 || strcasecmp(text, s.name + 4) == 0) {
      *out = s.code;
      return 0;
    }
  }
  return -1;
}
