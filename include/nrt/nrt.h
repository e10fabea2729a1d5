/*
 * neuron-tools runtime (libnrt.so.1): the core C API.
 *
 * The functions, types, enum values and struct layouts are those of the
 * Neuron SDK's libnrt, so a program written against the SDK builds against
 * this library unchanged and runs its NEFFs on the simulated NeuronCore.
 * Where the simulated device has no counterpart of a piece of hardware
 * (dma-buf, EFA, mapped HBM) the call fails with NRT_INVALID or
 * NRT_FAILURE, and nrt_get_last_error() says why. See nrt(3).
 *
 * Thread safety: every call may be made from any thread. Executions of
 * different models (or on different cores) run in parallel; tensor reads
 * and writes may overlap executions that do not use those tensors.
 */
#ifndef NRT_NRT_H_
#define NRT_NRT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrt/nrt_status.h"
#include "ndl/neuron_driver_shared_tensor_batch_op.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NRT_MAJOR_VERSION 2
#define NRT_MINOR_VERSION 0

/* Opaque handles. */
typedef struct nrt_model nrt_model_t;
typedef struct nrt_tensor nrt_tensor_t;
typedef struct nrt_cc_context nrt_cc_context_t;

/* Values below are part of the ABI: never renumbered, only appended to. */
typedef enum nrt_tensor_placement {
  NRT_TENSOR_PLACEMENT_DEVICE,  /* the core's device memory (HBM) */
  NRT_TENSOR_PLACEMENT_HOST,    /* host memory (deprecated DMA-able variant) */
  NRT_TENSOR_PLACEMENT_VIRTUAL, /* host memory; also what attached buffers are */
} nrt_tensor_placement_t;

typedef enum nrt_framework_type {
  NRT_FRAMEWORK_TYPE_INVALID = 0,
  NRT_FRAMEWORK_TYPE_NO_FW = 1, /* a program using the runtime directly */
  NRT_FRAMEWORK_TYPE_TENSORFLOW,
  NRT_FRAMEWORK_TYPE_PYTORCH,
  NRT_FRAMEWORK_TYPE_MXNET,
  NRT_FRAMEWORK_TYPE_PRECHECK,
} nrt_framework_type_t;

/* nrt_instance_info_t.family */
enum {
  NRT_INSTANCE_UNKNOWN = 0,
  NRT_INSTANCE_INF1 = 1,
  NRT_INSTANCE_TRN1 = 2,
  NRT_INSTANCE_TRN1N = 3,
  NRT_INSTANCE_INF2 = 4,
  NRT_INSTANCE_TRN2 = 5,
  NRT_INSTANCE_TRN2N = 6,
  NRT_INSTANCE_INF2E = 7,
  NRT_INSTANCE_TRN2P = 8,
  NRT_INSTANCE_TRN2U = 9,
  NRT_INSTANCE_TRN2E = 10,
  NRT_INSTANCE_TRN2EU = 11,
  NRT_INSTANCE_TRN2AC = 12,
  NRT_INSTANCE_TRN2UAC = 13,
  NRT_INSTANCE_TRN3 = 14,
  NRT_INSTANCE_TRN3PDS98 = 15
};

/* nrt_instance_info_t.size */
enum {
  NRT_INSTANCE_SIZE_1XL,
  NRT_INSTANCE_SIZE_2XL,
  NRT_INSTANCE_SIZE_4XL,
  NRT_INSTANCE_SIZE_6XL,
  NRT_INSTANCE_SIZE_8XL,
  NRT_INSTANCE_SIZE_24XL,
  NRT_INSTANCE_SIZE_32XL,
  NRT_INSTANCE_SIZE_48XL,
  NRT_INSTANCE_SIZE_3XL,
  /* new sizes go above this line */
  NRT_INSTANCE_SIZE_UNKNOWN,
  NRT_INSTANCE_SIZE_NUM = NRT_INSTANCE_SIZE_UNKNOWN,
};

/* Reductions of the host-driven collectives (nrta_cc_prepare). */
typedef enum nrt_op_type {
  NRT_OP_ADD = 0x0,
  NRT_OP_FMA = 0x1,
  NRT_OP_MAX = 0x2,
  NRT_OP_MIN = 0x3,
  NRT_OP_INVALID = 0xF,
} nrt_op_type_t;

/* Element types, as the hardware encodes them. */
typedef enum nrt_dtype {
  NRT_DTYPE_UNKNOWN = 0x0,
  NRT_DTYPE_INVALID = 0x0,
  NRT_DTYPE_FP8_E3 = 0xD,
  NRT_DTYPE_FP8_E4 = 0xE,
  NRT_DTYPE_FP8_E5 = 0xF,
  NRT_DTYPE_FLOAT16 = 0x7,
  NRT_DTYPE_BFLOAT16 = 0x6,
  NRT_DTYPE_FLOAT32 = 0xA,
  NRT_DTYPE_FP32R = 0xB,
  NRT_DTYPE_UINT8 = 0x3,
  NRT_DTYPE_UINT16 = 0x5,
  NRT_DTYPE_UINT32 = 0x9,
  NRT_DTYPE_UINT64 = 0x1,
  NRT_DTYPE_INT8 = 0x2,
  NRT_DTYPE_INT16 = 0x4,
  NRT_DTYPE_INT32 = 0x8,
  NRT_DTYPE_INT64 = 0xC,
} nrt_dtype_t;

typedef enum nrt_cc_op_type {
  NRT_CC_ALLGATHER,
  NRT_CC_ALLREDUCE,
  NRT_CC_REDUCESCATTER
} nrt_cc_op_type_t;

typedef struct nrt_instance_info {
  uint32_t family;           /* NRT_INSTANCE_* of the simulated instance */
  uint32_t size;             /* NRT_INSTANCE_SIZE_* */
  char arch_name[16];        /* "Trainium", "Inferentia2", ... */
  char device_revision[8];   /* "v2", ... */
} nrt_instance_info_t;

/* The simulated instance (NEURON_SIM_INSTANCE_TYPE, see nrt(3)). May be called
 * before nrt_init. `instance_info_len` is sizeof(*info) as the caller knows it. */
NRT_STATUS nrt_get_instance_info(nrt_instance_info_t *info, size_t instance_info_len);

/* Starts the runtime: reads every NEURON_RT_* variable once, configures
 * logging and takes the visible cores for this process. A second call
 * before nrt_close fails with NRT_INVALID. */
NRT_STATUS nrt_init(nrt_framework_type_t framework, const char *fw_version, const char *fal_version);

/* Stops the runtime: unloads what is still loaded, releases the cores.
 * Handles from before are invalid afterwards. */
void nrt_close(void);

/* Loads a NEFF held in memory onto logical core `vnc` (-1: the first
 * visible core without a model; below -1 is NRT_INVALID). `vnc_count` is
 * deprecated: pass -1. */
NRT_STATUS nrt_load(const void *neff_bytes, size_t size, int32_t vnc, int32_t vnc_count, nrt_model_t **model);

/* Loads a NEFF with collectives: this process is device `ctx_device_id` of
 * `ctx_device_count`. When no global communicator exists yet, one is built
 * with those as global id and count (see nrt_build_global_comm). */
NRT_STATUS nrt_load_collectives(const void *neff_bytes, size_t size, int32_t vnc, int32_t vnc_count,
                                uint32_t ctx_device_id, uint32_t ctx_device_count, nrt_model_t **model);

/* Unloads a model and frees its device memory. */
NRT_STATUS nrt_unload(nrt_model_t *model);

/* Cores a model occupies (always 1 here). Both names are kept; the first is
 * the older one. */
NRT_STATUS nrt_get_model_nc_count(const nrt_model_t *model, uint32_t *vnc_count);
NRT_STATUS nrt_get_model_vnc_count(const nrt_model_t *model, uint32_t *vnc_count);

/* Logical cores of the instance / visible to this process. Callable before
 * nrt_init. The *_nc_* names are the older spellings. */
NRT_STATUS nrt_get_total_nc_count(uint32_t *vnc_count);
NRT_STATUS nrt_get_total_vnc_count(uint32_t *vnc_count);
NRT_STATUS nrt_get_visible_nc_count(uint32_t *vnc_count);
NRT_STATUS nrt_get_visible_vnc_count(uint32_t *vnc_count);

/* A set of tensors by name: the inputs or outputs of one execution. */
typedef void nrt_tensor_set_t;

NRT_STATUS nrt_allocate_tensor_set(nrt_tensor_set_t **result);
void nrt_destroy_tensor_set(nrt_tensor_set_t **tensor_set);
/* Adds `tensor` under `tensor_name`, replacing an earlier one of that name.
 * The set does not own the tensor; it must live while the set is used. */
NRT_STATUS nrt_add_tensor_to_tensor_set(nrt_tensor_set_t *tensor_set, const char *tensor_name, nrt_tensor_t *tensor);
/* NRT_FAILURE when the set has no tensor of that name. */
NRT_STATUS nrt_get_tensor_from_tensor_set(nrt_tensor_set_t *tensor_set, const char *tensor_name, nrt_tensor_t **tensor);

/* Runs the model once (or `repeat_count` times, at least 1) and waits.
 * Inputs and outputs are looked up by the model's tensor names. Returns
 * NRT_EXEC_COMPLETED_WITH_NUM_ERR when a result holds NaN/Inf and
 * NEURON_RT_NUMERICAL_ERRORS_VERBOSITY is not none (outputs are written;
 * under the default none NaN/Inf go unchecked), NRT_TIMEOUT past
 * NEURON_RT_EXEC_TIMEOUT. */
NRT_STATUS nrt_execute(nrt_model_t *model, const nrt_tensor_set_t *input_set, nrt_tensor_set_t *output_set);
NRT_STATUS nrt_execute_repeat(nrt_model_t *model, const nrt_tensor_set_t *input_set, nrt_tensor_set_t *output_set,
                              int repeat_count);

/* Joins this process to the global communicator as device `g_device_id` of
 * `g_device_count` (the largest world of any NEFF to run); rendezvous
 * through NEURON_RT_ROOT_COMM_ID. */
NRT_STATUS nrt_build_global_comm(int32_t vnc, uint32_t g_device_id, uint32_t g_device_count);

/* A tensor of `size` bytes: in core `vnc`'s device memory (DEVICE), or in
 * host memory (VIRTUAL, HOST; vnc is not used). `name` may be NULL. */
NRT_STATUS nrt_tensor_allocate(nrt_tensor_placement_t tensor_placement, int vnc, size_t size, const char *name,
                               nrt_tensor_t **tensor);
/* Frees a tensor (its storage unless attached by the caller or shared with
 * slices still alive) and sets *tensor to NULL. */
void nrt_tensor_free(nrt_tensor_t **tensor);

/* Copy `size` bytes at `offset` out of / into a tensor. */
NRT_STATUS nrt_tensor_read(const nrt_tensor_t *tensor, void *buf, size_t offset, size_t size);
NRT_STATUS nrt_tensor_write(nrt_tensor_t *tensor, const void *buf, size_t offset, size_t size);

/* Several reads or writes of one tensor. */
typedef struct nrt_tensor_batch {
  const nrt_tensor_t *tensor;
  const nrt_tensor_batch_op_t *ops;
  uint32_t num_ops;
} nrt_tensor_batch_t;

/* Runs every operation of every batch; stops at the first failing one.
 * `unsafe` skips waiting for executions that use the tensors. */
NRT_STATUS nrt_tensor_read_batch(const nrt_tensor_batch_t *batches, uint64_t num_batches, bool unsafe);
NRT_STATUS nrt_tensor_write_batch(const nrt_tensor_batch_t *batches, uint64_t num_batches, bool unsafe);

/* Copies between tensors; two device tensors must be on the same core
 * (NRT_INVALID otherwise). */
NRT_STATUS nrt_tensor_copy(const nrt_tensor_t *src, size_t src_offset, nrt_tensor_t *dst, size_t dst_offset,
                           size_t size);

/* Size in bytes (0 for NULL). */
size_t nrt_tensor_get_size(const nrt_tensor_t *tensor);

/* Sets `size` bytes at `offset` to the byte `value`. */
NRT_STATUS nrt_tensor_memset(nrt_tensor_t *tensor, uint64_t offset, int value, size_t size);

/* A tensor with no storage; give it some with nrt_tensor_attach_buffer. */
NRT_STATUS nrt_tensor_allocate_empty(const char *name, nrt_tensor_t **tensor);

/* Makes the caller's `buffer` the tensor's storage (it must outlive the
 * tensor) and its placement VIRTUAL. Storage the tensor owned before is
 * released. */
NRT_STATUS nrt_tensor_attach_buffer(nrt_tensor_t *tensor, void *buffer, size_t size);

/* A tensor viewing bytes [offset, offset+size) of another one (no copy). */
NRT_STATUS nrt_tensor_allocate_slice(const nrt_tensor_t *tensor_source, size_t offset, size_t size, const char *name,
                                     nrt_tensor_t **tensor_slice);

/* The address of the tensor's bytes in this process (the simulated device's
 * memory is host memory); NULL on failure. */
void *nrt_tensor_get_va(const nrt_tensor_t *tensor);

typedef struct nrt_tensor_device_allocation_info {
  uint64_t physical_address; /* offset in the device's memory space */
  size_t size;               /* bytes reserved; may exceed the tensor's size */
  int hbm_index;             /* which HBM of the device holds it */
} nrt_tensor_device_allocation_info_t;

/* Where a device tensor lives; NRT_INVALID for host or caller memory. */
NRT_STATUS nrt_tensor_get_device_allocation_info(const nrt_tensor_t *tensor,
                                                 nrt_tensor_device_allocation_info_t *alloc_info);

/* Waits until an output tensor has been written by at least
 * `expected_completion_count` executions since its last reset. `timeout` in
 * microseconds, negative for no limit. NRT_TIMEOUT when it runs out. */
NRT_STATUS nrt_tensor_check_output_completion(const nrt_tensor_t *output_tensor, int64_t timeout,
                                              uint64_t expected_completion_count);
/* Sets the tensor's completion count back to 0. */
NRT_STATUS nrt_tensor_reset_output_completion(nrt_tensor_t *output_tensor);

/* Hardware-only: no dma-buf exists for simulated memory (NRT_INVALID). */
NRT_STATUS nrt_get_dmabuf_fd(uint64_t va, uint64_t size, int *fd);

/* The host's id for device `neuron_dev` (identity: no containers remap). */
NRT_STATUS nrt_host_device_id_get(int neuron_dev, uint32_t *host_device_id);

/* Routing ids by host device id. `count`: entries available in, written out. */
NRT_STATUS nrt_host_device_id_rid_map_get(uint32_t *count, uint32_t *host_did_to_rid_map);

/* Hardware-only: HBM is not mapped into the process (NRT_INVALID). */
NRT_STATUS nrt_get_hbm_mmap_va(int device_id, int hbm_idx, void **addr, size_t *size);

typedef struct nrt_vnc_memory_stats {
  size_t bytes_used;  /* device memory in use on the core, all categories */
  size_t bytes_limit; /* the core's device memory */
  /* newer fields are only ever appended */
} nrt_vnc_memory_stats_t;

/* Memory use of core `vnc`. `stats_size_in`: sizeof(*stats) as the caller
 * knows it; `stats_size_out`: bytes written. */
NRT_STATUS nrt_get_vnc_memory_stats(uint32_t vnc, nrt_vnc_memory_stats_t *stats, size_t stats_size_in,
                                    size_t *stats_size_out);

/* Hardware-only: no EFA device is attached to simulated memory (NRT_FAILURE). */
NRT_STATUS nrt_get_attached_efa_bdf(const void *va, char *efa_bdf, size_t *len);

/* Host-driven collectives outside a NEFF. */
typedef struct nrt_cc_comm {
  uint32_t *replica_group; /* global device ids taking part */
  uint32_t rank;           /* this process's index in replica_group */
  uint32_t rank_n;         /* entries in replica_group */
  uint32_t ctx_device_id;
  uint32_t ctx_device_count;
  uint32_t vnc;
} nrt_cc_comm_t;

typedef struct nrt_tensor_list {
  nrt_tensor_t **tensors;
  size_t num_tensors;
} nrt_tensor_list_t;

/* Builds the global communicator for nrta_cc_* (same rendezvous as
 * nrt_build_global_comm). */
NRT_STATUS nrt_cc_global_comm_init(uint32_t vnc, uint32_t g_device_id, uint32_t g_device_count);

/* neuron-tools addition: the calling thread's last failure as one line
 * ("" when none). libnrt only logs the reason; this returns it. */
const char *nrt_get_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* NRT_NRT_H_ */
