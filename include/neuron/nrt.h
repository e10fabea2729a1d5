// The runtime's C API, modelled on the Neuron SDK's libnrt (nrt/nrt.h and
// nrt_experimental.h): the same function names, argument order, handle
// types, dtype and status values, so a program written against libnrt's
// core calls builds against this one. It is a thin layer over the C++ API
// of lib/runtime (runtime.h); the tools use that directly.
//
// Beyond libnrt: nrt_get_last_error() returns the one-line reason of the
// calling thread's last failed call (libnrt only logs it).
#ifndef NEURON_NRT_H_
#define NEURON_NRT_H_

#include <stddef.h>
#include <stdint.h>

#include "neuron/nrt_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NRT_MAJOR_VERSION 2
#define NRT_MINOR_VERSION 0

typedef enum nrt_framework_type {
  NRT_FRAMEWORK_TYPE_INVALID = 0,
  NRT_FRAMEWORK_TYPE_NO_FW = 1,  // tools without a framework
  NRT_FRAMEWORK_TYPE_TENSORFLOW = 2,
  NRT_FRAMEWORK_TYPE_PYTORCH = 3,
  NRT_FRAMEWORK_TYPE_MXNET = 4,
} nrt_framework_type_t;

typedef struct nrt_model nrt_model_t;
typedef struct nrt_tensor nrt_tensor_t;
typedef void nrt_tensor_set_t;

typedef enum nrt_tensor_placement {
  NRT_TENSOR_PLACEMENT_DEVICE = 0,   // in the core's HBM (category "tensors")
  NRT_TENSOR_PLACEMENT_HOST = 1,     // host memory
  NRT_TENSOR_PLACEMENT_VIRTUAL = 2,  // no storage until attached (unsupported here)
} nrt_tensor_placement_t;

typedef enum nrt_tensor_usage {
  NRT_TENSOR_USAGE_INPUT = 0,
  NRT_TENSOR_USAGE_OUTPUT = 1,
} nrt_tensor_usage_t;

typedef enum nrt_dtype {
  NRT_DTYPE_UNKNOWN = 0,
  NRT_DTYPE_INVALID = 0,
  NRT_DTYPE_UINT64 = 0x1,
  NRT_DTYPE_INT8 = 0x2,
  NRT_DTYPE_UINT8 = 0x3,
  NRT_DTYPE_INT16 = 0x4,
  NRT_DTYPE_UINT16 = 0x5,
  NRT_DTYPE_BFLOAT16 = 0x6,
  NRT_DTYPE_FLOAT16 = 0x7,
  NRT_DTYPE_INT32 = 0x8,
  NRT_DTYPE_UINT32 = 0x9,
  NRT_DTYPE_FLOAT32 = 0xA,
  NRT_DTYPE_FP32R = 0xB,
  NRT_DTYPE_INT64 = 0xC,
  NRT_DTYPE_FP8_E3 = 0xD,
  NRT_DTYPE_FP8_E4 = 0xE,
  NRT_DTYPE_FP8_E5 = 0xF,
} nrt_dtype_t;

#define NRT_TENSOR_NAME_MAX 256

typedef struct nrt_tensor_info {
  char name[NRT_TENSOR_NAME_MAX];
  nrt_tensor_usage_t usage;
  size_t size;  // bytes
  nrt_dtype_t dtype;
  uint32_t* shape;
  uint32_t ndim;
} nrt_tensor_info_t;

typedef struct nrt_tensor_info_array {
  uint64_t tensor_count;
  nrt_tensor_info_t tensor_array[];
} nrt_tensor_info_array_t;

#define NRT_RT_VERSION_DETAIL_LEN 128
#define NRT_GIT_HASH_LEN 64

typedef struct nrt_version {
  uint64_t rt_major;
  uint64_t rt_minor;
  uint64_t rt_patch;
  uint64_t rt_maintenance;
  char rt_detail[NRT_RT_VERSION_DETAIL_LEN];
  char git_hash[NRT_GIT_HASH_LEN];
} nrt_version_t;

// Lifecycle. nrt_init reads the environment once (every NEURON_RT_*
// variable), configures logging and takes the visible cores exclusively;
// a second nrt_init without nrt_close fails with NRT_INVALID.
NRT_STATUS nrt_init(nrt_framework_type_t framework, const char* fw_version,
                    const char* fal_version);
void nrt_close(void);

// Loads a NEFF held in memory on logical core `start_vnc` (-1: the first
// visible core with no model loaded, else the first visible core).
// vnc_count must be -1 or 1 (libnrt deprecated it too).
NRT_STATUS nrt_load(const void* neff_bytes, size_t size, int32_t start_vnc, int32_t vnc_count,
                    nrt_model_t** model);
NRT_STATUS nrt_unload(nrt_model_t* model);

// Tensors.
NRT_STATUS nrt_tensor_allocate(nrt_tensor_placement_t placement, int vnc, size_t size,
                               const char* name, nrt_tensor_t** tensor);
void nrt_tensor_free(nrt_tensor_t** tensor);
NRT_STATUS nrt_tensor_read(const nrt_tensor_t* tensor, void* buf, size_t offset, size_t size);
NRT_STATUS nrt_tensor_write(nrt_tensor_t* tensor, const void* buf, size_t offset, size_t size);
size_t nrt_tensor_get_size(const nrt_tensor_t* tensor);

// Tensor sets: tensors by name (the model's input/output names).
NRT_STATUS nrt_allocate_tensor_set(nrt_tensor_set_t** result);
void nrt_destroy_tensor_set(nrt_tensor_set_t** tensor_set);
NRT_STATUS nrt_add_tensor_to_tensor_set(nrt_tensor_set_t* tensor_set, const char* tensor_name,
                                        nrt_tensor_t* tensor);
NRT_STATUS nrt_get_tensor_from_tensor_set(nrt_tensor_set_t* tensor_set, const char* tensor_name,
                                          nrt_tensor_t** tensor);

// Execution. Returns NRT_EXEC_COMPLETED_WITH_NUM_ERR when a result holds
// NaN/Inf (outputs are written; callers treat it as success unless
// NEURON_FAIL_ON_NAN), NRT_TIMEOUT past NEURON_RT_EXEC_TIMEOUT.
NRT_STATUS nrt_execute(nrt_model_t* model, const nrt_tensor_set_t* input_set,
                       nrt_tensor_set_t* output_set);
NRT_STATUS nrt_execute_repeat(nrt_model_t* model, const nrt_tensor_set_t* input_set,
                              nrt_tensor_set_t* output_set, int repeat_count);

// Introspection.
NRT_STATUS nrt_get_model_tensor_info(nrt_model_t* model, nrt_tensor_info_array_t** tensor_info);
NRT_STATUS nrt_free_model_tensor_info(nrt_tensor_info_array_t* tensor_info);
NRT_STATUS nrt_get_visible_vnc_count(uint32_t* vnc_count);
NRT_STATUS nrt_get_total_vnc_count(uint32_t* vnc_count);
NRT_STATUS nrt_get_model_vnc_count(const nrt_model_t* model, uint32_t* vnc_count);
NRT_STATUS nrt_get_version(nrt_version_t* ver, size_t size);

// Ours: the calling thread's last error as one line ("" when none).
const char* nrt_get_last_error(void);

#ifdef __cplusplus
}
#endif

#endif  // NEURON_NRT_H_
