/*
 * neuron-tools runtime: asynchronous requests on execution units.
 *
 * Each logical core has execution units (XUs) of five kinds, each with
 * queues. A request (tensor read/write/copy, execution, collective) is
 * queued on one, runs in queue order, and is named by a sequence id: the
 * XU id in the top 16 bits, a per-queue number counting from 1 below. A
 * request's failure is appended to the error tracker it was given.
 */
#ifndef NRT_NRT_ASYNC_H_
#define NRT_NRT_ASYNC_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrt/nrt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  NRTA_XU_TENSOR_READ = 0,
  NRTA_XU_TENSOR_WRITE,
  NRTA_XU_TENSOR_OP,  /* tensor operations other than read and write */
  NRTA_XU_COMPUTE,
  NRTA_XU_COLLECTIVES,
  NRTA_XU_TYPE_NUM    /* new kinds are added above */
} nrta_xu_t;

typedef uint64_t nrta_seq_t;
typedef uint16_t nrta_xu_id_t;

#define NRTA_SEQ_NUM_MAX ((1ull << 48) - 1)
#define NRTA_SEQ_NUM_MASK NRTA_SEQ_NUM_MAX
#define NRTA_SEQ_GET_SEQ_NUM(seq_id) ((seq_id) & NRTA_SEQ_NUM_MASK)
#define NRTA_SEQ_GET_XU_ID(seq_id) ((seq_id) >> 48)

typedef struct nrta_error {
  nrta_seq_t seq_id;
  uint64_t error_code; /* an NRT_STATUS, 64 bits wide on every compiler */
} nrta_error_t;
#if defined(__cplusplus)
static_assert(sizeof(nrta_error_t) == 16, "nrta_error_t is 16 bytes");
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(nrta_error_t) == 16, "nrta_error_t is 16 bytes");
#endif

typedef struct nrta_error_tracker nrta_error_tracker_t;

/* Queues a copy of `size` bytes from `buf` into `tensor` at `offset` on the
 * TENSOR_WRITE unit of the tensor's core. `buf` must stay valid until done. */
NRT_STATUS nrta_tensor_write(nrt_tensor_t *tensor, const void *buf, uint64_t offset, uint64_t size, int queue,
                             nrta_error_tracker_t *err, nrta_seq_t *req_sequence);

/* Queues a copy out of `tensor` into `buf` on the TENSOR_READ unit. */
NRT_STATUS nrta_tensor_read(void *buf, nrt_tensor_t *tensor, uint64_t offset, uint64_t size, int queue,
                            nrta_error_tracker_t *err, nrta_seq_t *req_sequence);

/* Queues a copy between two tensors of one core on the TENSOR_OP unit. */
NRT_STATUS nrta_tensor_copy(nrt_tensor_t *src, uint64_t src_offset, nrt_tensor_t *dst, uint64_t dst_offset,
                            uint64_t size, int queue, nrta_error_tracker_t *err, nrta_seq_t *req_sequence);

/* Queues an execution on the COMPUTE unit of the model's core (queue 0).
 * At most NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS may wait; beyond that
 * this returns NRT_QUEUE_FULL. */
NRT_STATUS nrta_execute_schedule(nrt_model_t *model, const nrt_tensor_set_t *input, nrt_tensor_set_t *output,
                                 int queue, nrta_error_tracker_t *err, nrta_seq_t *req_sequence);

/* Checks and captures a collective over `comm` for nrta_cc_schedule. */
NRT_STATUS nrta_cc_prepare(nrt_cc_comm_t *comm, nrt_tensor_list_t *input, nrt_tensor_list_t *output,
                           nrt_dtype_t dtype, nrt_op_type_t op, nrt_cc_op_type_t cc_op, nrt_cc_context_t **cc_ctx);

/* Queues a prepared collective on the COLLECTIVES unit (queues 0-2). The
 * context is consumed: *cc_ctx is set to NULL. */
NRT_STATUS nrta_cc_schedule(nrt_cc_context_t **cc_ctx, int queue, nrta_error_tracker_t *err,
                            nrta_seq_t *req_sequence);

/* Whether request `seq` has finished (successfully or not). */
NRT_STATUS nrta_is_completed(nrta_seq_t seq, bool *is_completed);

/* The last finished sequence id of queue `queue` of unit `xu` on core `lnc`
 * (sequence number 0 when none has finished). */
NRT_STATUS nrta_get_sequence(uint32_t lnc, nrta_xu_t xu, int queue, nrta_seq_t *seq);

/* A file descriptor that becomes readable (poll(2)) when `seq` finishes.
 * Only poll and close it; the caller closes it. */
NRT_STATUS nrta_get_completion_handle(nrta_seq_t seq, int *fd);

/* Error trackers collect the failures of the requests given them. */
NRT_STATUS nrta_error_tracker_create(uint32_t lnc_idx, nrta_error_tracker_t **error_tracker);
void nrta_error_tracker_destroy(nrta_error_tracker_t *error_tracker);
/* The failures recorded since the last call (the list stays valid until the
 * next call or destroy). */
NRT_STATUS nrta_error_tracker_get_list(nrta_error_tracker_t *error_tracker, const nrta_error_t **list,
                                       size_t *error_count);

#ifdef __cplusplus
}
#endif

#endif /* NRT_NRT_ASYNC_H_ */
