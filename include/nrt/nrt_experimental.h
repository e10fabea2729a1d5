/*
 * neuron-tools runtime: the SDK's "experimental" API: model introspection,
 * tracing, barrier and all-gather across workers, and calls kept for
 * hardware-specific callers.
 */
#ifndef NRT_NRT_EXPERIMENTAL_H_
#define NRT_NRT_EXPERIMENTAL_H_

#include <stddef.h>
#include <stdint.h>

#include "nrt/nrt.h"
#include "nrt/nrt_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nrt_tensor_usage {
  NRT_TENSOR_USAGE_INPUT = 0, /* fed to the model */
  NRT_TENSOR_USAGE_OUTPUT,    /* produced by the model */
} nrt_tensor_usage_t;

#define NRT_TENSOR_NAME_MAX 256

typedef struct nrt_tensor_info {
  char name[NRT_TENSOR_NAME_MAX];
  nrt_tensor_usage_t usage;
  size_t size;        /* bytes */
  nrt_dtype_t dtype;
  uint32_t *shape;    /* ndim extents, outermost first */
  uint32_t ndim;
} nrt_tensor_info_t;

typedef struct nrt_tensor_info_array {
  uint64_t tensor_count;
  nrt_tensor_info_t tensor_array[];
} nrt_tensor_info_array_t;

/* Called when an execution queued by the async worker finishes. */
typedef void (*NRT_ASYNC_EXEC_STATUS_CALLBACK)(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                                               NRT_STATUS status);

/* The model's inputs then outputs. Free with nrt_free_model_tensor_info. */
NRT_STATUS nrt_get_model_tensor_info(nrt_model_t *model, nrt_tensor_info_array_t **tensor_info);

/* How many threads may usefully call nrt_execute on the model at once (1:
 * a core runs one execution at a time). Deprecated in the SDK. */
NRT_STATUS nrt_get_model_instance_count(nrt_model_t *model, uint32_t *instance_count);

NRT_STATUS nrt_free_model_tensor_info(nrt_tensor_info_array_t *tensor_info);

/* Records a trace of every execution (and, with trace_mem, every device
 * allocation) on the visible cores until nrt_trace_stop writes it, as Trace
 * Event JSON, to `filename`. */
NRT_STATUS nrt_trace_start(bool trace_mem);
NRT_STATUS nrt_trace_stop(const char *filename);

/* Hardware-only: there is no NCCL network plugin here. Returns NULL with
 * *err set and the reason in err_msg. */
void *nrt_get_libnccl_net(int *err, char *err_msg, size_t err_msg_size);

/* Pool-engine microcode images (hardware-only). */
typedef struct nrt_ucode_img {
  uint8_t *bin;
  size_t size;
} nrt_ucode_img;

typedef struct nrt_ucode_info {
  nrt_ucode_img iram;
  nrt_ucode_img dram;
} nrt_ucode_info;

/* Hardware-only: the simulated core has no pool engine to load (NRT_INVALID). */
NRT_STATUS nrt_set_pool_eng_ucode(const nrt_ucode_info *ucode_info);

/* Hardware-only: device memory is not mapped into the process (NRT_INVALID). */
NRT_STATUS nrt_memcpy_to_device(void *dest, const void *src, size_t size);

/* Callback for executions run by the async worker (NEURON_RT_ASYNC_EXEC_*);
 * replaces any earlier one. */
NRT_STATUS nrt_register_async_exec_callback(NRT_ASYNC_EXEC_STATUS_CALLBACK callback, void *params);

/* Returns once every worker of the global communicator has called it. */
NRT_STATUS nrt_barrier(int32_t vnc, uint32_t g_device_id, uint32_t g_device_count);

/* Every worker's `rank_input_size` bytes of `input`, in worker order, land
 * in each worker's `output` (g_device_count * rank_input_size bytes). */
NRT_STATUS nrt_all_gather(int32_t vnc, uint32_t g_device_id, uint32_t g_device_count, uint32_t rank_input_size,
                          void *input, void *output);

/* Waits until executions queued on core `vnc` by the async worker are done. */
NRT_STATUS nrt_async_drain_queued_execs(int32_t vnc);

typedef struct nrt_model_info {
  uint32_t vnc; /* the core the model is loaded on */
  /* newer fields are only ever appended */
} nrt_model_info_t;

/* `info_size_in`: sizeof(*info) as the caller knows it; `info_size_out`:
 * bytes written. */
NRT_STATUS nrt_get_model_info(const nrt_model_t *model, nrt_model_info_t *info, size_t info_size_in,
                              size_t *info_size_out);

#ifdef __cplusplus
}
#endif

#endif /* NRT_NRT_EXPERIMENTAL_H_ */
