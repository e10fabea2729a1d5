// libdnnl.so.2 (oneDNN), opened with dlopen on first use: linking it would
// slow every tool's start-up, and the kernels work without it (OpenBLAS and
// plain conversions take over). Shared by the f32 GEMM (gemm.cc), the
// bf16/f16 matmul (low_precision_gemm.cc) and the convolution primitive
// (dnnl_convolution.cc). Only the types come from oneDNN's headers.
#ifndef NEURON_LIB_KERNELS_DNNL_LIBRARY_H_
#define NEURON_LIB_KERNELS_DNNL_LIBRARY_H_

#include <oneapi/dnnl/dnnl_types.h>

#include <cstddef>

namespace neuron::kernels {

// The C API functions the kernels use, resolved from the library.
struct DnnlApi {
  dnnl_status_t (*memory_desc_init_by_strides)(dnnl_memory_desc_t*, int, const dnnl_dims_t,
                                               dnnl_data_type_t, const dnnl_dims_t);
  dnnl_status_t (*memory_desc_init_by_tag)(dnnl_memory_desc_t*, int, const dnnl_dims_t,
                                           dnnl_data_type_t, dnnl_format_tag_t);
  int (*memory_desc_equal)(const dnnl_memory_desc_t*, const dnnl_memory_desc_t*);
  dnnl_status_t (*matmul_desc_init)(dnnl_matmul_desc_t*, const dnnl_memory_desc_t*,
                                    const dnnl_memory_desc_t*, const dnnl_memory_desc_t*,
                                    const dnnl_memory_desc_t*);
  dnnl_status_t (*dilated_convolution_forward_desc_init)(
      dnnl_convolution_desc_t*, dnnl_prop_kind_t, dnnl_alg_kind_t, const dnnl_memory_desc_t*,
      const dnnl_memory_desc_t*, const dnnl_memory_desc_t*, const dnnl_memory_desc_t*,
      const dnnl_dims_t, const dnnl_dims_t, const dnnl_dims_t, const dnnl_dims_t);
  dnnl_status_t (*reorder_primitive_desc_create)(dnnl_primitive_desc_t*, const dnnl_memory_desc_t*,
                                                 dnnl_engine_t, const dnnl_memory_desc_t*,
                                                 dnnl_engine_t, const_dnnl_primitive_attr_t);
  dnnl_status_t (*primitive_attr_create)(dnnl_primitive_attr_t*);
  dnnl_status_t (*primitive_attr_destroy)(dnnl_primitive_attr_t);
  dnnl_status_t (*primitive_attr_set_scratchpad_mode)(dnnl_primitive_attr_t,
                                                      dnnl_scratchpad_mode_t);
  dnnl_status_t (*primitive_desc_create)(dnnl_primitive_desc_t*, const_dnnl_op_desc_t,
                                         const_dnnl_primitive_attr_t, dnnl_engine_t,
                                         const_dnnl_primitive_desc_t);
  dnnl_status_t (*primitive_desc_query)(const_dnnl_primitive_desc_t, dnnl_query_t, int, void*);
  const dnnl_memory_desc_t* (*primitive_desc_query_md)(const_dnnl_primitive_desc_t,
                                                       dnnl_query_t, int);
  dnnl_status_t (*primitive_desc_destroy)(dnnl_primitive_desc_t);
  dnnl_status_t (*primitive_create)(dnnl_primitive_t*, const_dnnl_primitive_desc_t);
  dnnl_status_t (*primitive_destroy)(dnnl_primitive_t);
  dnnl_status_t (*primitive_execute)(const_dnnl_primitive_t, dnnl_stream_t, int,
                                     const dnnl_exec_arg_t*);
  size_t (*memory_desc_get_size)(const dnnl_memory_desc_t*);
  dnnl_status_t (*engine_create)(dnnl_engine_t*, dnnl_engine_kind_t, size_t);
  dnnl_status_t (*stream_create)(dnnl_stream_t*, dnnl_engine_t, unsigned);
  dnnl_status_t (*stream_wait)(dnnl_stream_t);
  dnnl_status_t (*memory_create)(dnnl_memory_t*, const dnnl_memory_desc_t*, dnnl_engine_t,
                                 void*);
  dnnl_status_t (*memory_destroy)(dnnl_memory_t);
  dnnl_engine_t engine = nullptr;  // one CPU engine for every primitive
};

// The API, or null when the library is missing or lacks a function.
const DnnlApi* Dnnl();

// One argument of a primitive: its kind (DNNL_ARG_SRC, ...), layout and
// memory.
struct DnnlArg {
  int kind;
  const dnnl_memory_desc_t* desc;
  const void* data;
};

// Runs `primitive` on this thread's stream with `threads` OpenMP threads
// and waits for it; false on any failure.
bool DnnlExecute(const_dnnl_primitive_t primitive, const DnnlArg* args, int nargs, int threads);

// The library's handle for dlsym, or null when it is not installed (or in
// sanitizer builds, see dnnl_library.cc).
void* DnnlHandle();

// Makes oneDNN's OpenMP team `threads` wide for calls from this thread
// (OpenMP keeps the size per thread); cheap when the count is unchanged.
void DnnlUseThreads(int threads);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_DNNL_LIBRARY_H_
