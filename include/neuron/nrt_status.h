// NRT status codes with the real runtime's numeric values (nrt_status.h of
// the Neuron SDK), so scripts that check them work against either runtime.
#ifndef NEURON_NRT_STATUS_H_
#define NEURON_NRT_STATUS_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef enum NRT_STATUS {
  NRT_SUCCESS = 0,
  NRT_FAILURE = 1,
  NRT_INVALID = 2,
  NRT_INVALID_HANDLE = 3,
  NRT_RESOURCE = 4,
  NRT_TIMEOUT = 5,
  NRT_HW_ERROR = 6,
  NRT_QUEUE_FULL = 7,
  NRT_LOAD_NOT_ENOUGH_NC = 9,
  NRT_UNSUPPORTED_NEFF_VERSION = 10,
  NRT_FAIL_HOST_MEM_ALLOC = 11,
  NRT_UNINITIALIZED = 13,
  NRT_CLOSED = 14,
  NRT_QUEUE_EMPTY = 15,
  NRT_EXEC_UNIT_UNRECOVERABLE = 101,
  NRT_EXEC_BAD_INPUT = 1002,
  NRT_EXEC_COMPLETED_WITH_NUM_ERR = 1003,
  NRT_EXEC_COMPLETED_WITH_ERR = 1004,
  NRT_EXEC_NC_BUSY = 1005,
  NRT_EXEC_OOB = 1006,
  NRT_COLL_PENDING = 1100,
  NRT_EXEC_HW_ERR_COLLECTIVES = 1200,
  NRT_EXEC_HW_ERR_HBM_UE = 1201,
  NRT_EXEC_HW_ERR_NC_UE = 1202,
  NRT_EXEC_HW_ERR_DMA_ABORT = 1203,
  NRT_EXEC_SW_NQ_OVERFLOW = 1204,
  NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE = 1205,
  NRT_NETWORK_PROXY_FAILURE = 1206,
} NRT_STATUS;

// "NRT_TIMEOUT" for NRT_TIMEOUT; "NRT_UNKNOWN" for a value not listed above.
const char* nrt_get_status_name(NRT_STATUS status);
// The message frameworks show, e.g. "Timeout Exceeded" for NRT_TIMEOUT.
const char* nrt_get_status_as_str(NRT_STATUS status);
// Parses "NRT_TIMEOUT", "TIMEOUT" or "5"; returns 0 on success, -1 otherwise.
int nrt_parse_status(const char* text, NRT_STATUS* out);

#ifdef __cplusplus
}
#endif

#endif  // NEURON_NRT_STATUS_H_
