/*
 * neuron-tools runtime: status codes.
 *
 * Every libnrt call reports one of these. The numbers are those of the
 * Neuron SDK's runtime, so a program (or a script reading a log) that
 * compares against them works the same on either runtime.
 */
#ifndef NRT_NRT_STATUS_H_
#define NRT_NRT_STATUS_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  NRT_SUCCESS = 0,
  NRT_FAILURE = 1,         /* failed, no more specific code fits */
  NRT_INVALID = 2,         /* bad argument, bad NEFF, names or sizes that do not match */
  NRT_INVALID_HANDLE = 3,  /* a handle that is null or no longer valid */
  NRT_RESOURCE = 4,        /* out of device memory, cores, queue slots, ... */
  NRT_TIMEOUT = 5,         /* the operation did not finish in time */
  NRT_HW_ERROR = 6,        /* the (simulated) hardware reported an error */
  NRT_QUEUE_FULL = 7,      /* no room in an execution queue */
  NRT_LOAD_NOT_ENOUGH_NC = 9,        /* not enough free cores to load */
  NRT_UNSUPPORTED_NEFF_VERSION = 10, /* NEFF format this runtime cannot read */
  NRT_FAIL_HOST_MEM_ALLOC = 11,      /* kept for old callers; host allocation failed */
  NRT_UNINITIALIZED = 13,  /* called before nrt_init */
  NRT_CLOSED = 14,         /* called after nrt_close */
  NRT_QUEUE_EMPTY = 15,    /* nothing queued */

  NRT_EXEC_UNIT_UNRECOVERABLE = 101, /* an execution unit can no longer run */

  NRT_EXEC_BAD_INPUT = 1002,              /* inputs given to an execution are wrong */
  NRT_EXEC_COMPLETED_WITH_NUM_ERR = 1003, /* finished, but results hold NaN/Inf */
  NRT_EXEC_COMPLETED_WITH_ERR = 1004,     /* finished with another error */
  NRT_EXEC_NC_BUSY = 1005,                /* the core is held by someone else */
  NRT_EXEC_OOB = 1006,                    /* an indirect access was out of bounds */
  NRT_COLL_PENDING = 1100,                /* a collective has not finished yet */

  NRT_EXEC_HW_ERR_COLLECTIVES = 1200,      /* stuck in a collective (a peer failed?) */
  NRT_EXEC_HW_ERR_HBM_UE = 1201,           /* uncorrectable HBM error */
  NRT_EXEC_HW_ERR_NC_UE = 1202,            /* on-chip memory parity error */
  NRT_EXEC_HW_ERR_DMA_ABORT = 1203,        /* a DMA engine aborted */
  NRT_EXEC_SW_NQ_OVERFLOW = 1204,          /* software notification queue overflowed */
  NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE = 1205, /* repairable uncorrectable HBM error */
  NRT_NETWORK_PROXY_FAILURE = 1206,        /* the network proxy failed */
} NRT_STATUS;

/* A short English description of `status` ("Timeout Exceeded", ...). The
 * string is static; never NULL. */
const char *nrt_get_status_as_str(NRT_STATUS status);

#ifdef __cplusplus
}
#endif

#endif /* NRT_NRT_STATUS_H_ */
