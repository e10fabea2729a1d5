/*
 * neuron-tools' extras of libnrt.so.1: NOT PART OF THE NEURON SDK.
 *
 * The project's own tools (neuron-exec, neuron-load) show more than the
 * SDK's public functions can tell: a model's exact element types and pytree
 * paths, its memory plan and load stage timings, memory metrics, load
 * progress. The project's libnrt.so.1 exports these functions for them; the
 * SDK's library does not. A program that must also run on the SDK's library
 * looks each one up with dlsym and does without it when it is absent, as the
 * tools do. See nrt(3), "EXTRAS".
 */
#ifndef NRT_NRT_TOOLS_EXT_H_
#define NRT_NRT_TOOLS_EXT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrt/nrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A caller that prints failures itself (from nrt_get_last_error) asks the
   library not to log them as well. Applies to the whole process. */
void nrt_tools_quiet_api_errors(bool quiet);

/* Progress lines on stderr for long work inside the library (loading a
   NEFF), named after `tool`, as NEURON_TOOLS_PROGRESS says; `quiet` turns
   them off. */
void nrt_tools_enable_progress(const char *tool, bool quiet);

/* The name the calling thread's next nrt_load gives its NEFF in messages
   and progress, and the file its bytes were read from, which input and
   core dumps record; NULL or "" for either: "NEFF", from memory. */
void nrt_tools_set_load_name(const char *name, const char *path);

/* A JSON document describing a loaded model beyond
   nrt_get_model_tensor_info: its name and target, each input and output
   with its position, exact element type as NumPy names it ("bool",
   "float64", "complex64", "bfloat16", ...),
   dimensions, bytes, pytree key path and the input an output may share
   (input_output_alias), the memory plan, the device-memory cost and the
   load stage timings. *json is malloc'd; free it with nrt_tools_free. */
NRT_STATUS nrt_tools_describe_model(const nrt_model_t *model, char **json);

/* A JSON document with the device-memory metrics of core `vnc`
   (NEURON_RT_ENABLE_MEMORY_METRICS): {"enabled": bool, "summary": text,
   "categories": {...}}. Free with nrt_tools_free. */
NRT_STATUS nrt_tools_describe_core_memory(uint32_t vnc, char **json);

/* The host side of a model's infeed/outfeed queues (XLA infeed and
   outfeed instructions). Each infeed step asks for the next value of an
   array of element type `dtype` ("float32", "bool", ... as in
   nrt_tools_describe_model) and dims `dims`
   (`ndim` of them), `bytes` bytes at `data`; each outfeed step hands one
   over. A callback returns 0, or nonzero after writing a one-line reason
   into `error` (`error_size` bytes with its NUL), which fails the
   execution. */
typedef struct nrt_tools_feed {
  void *context;
  int (*infeed)(void *context, const char *instruction, const char *dtype, const int64_t *dims,
                size_t ndim, void *data, size_t bytes, char *error, size_t error_size);
  int (*outfeed)(void *context, const char *instruction, const char *dtype, const int64_t *dims,
                 size_t ndim, const void *data, size_t bytes, char *error, size_t error_size);
} nrt_tools_feed_t;

/* Gives `model` a host feed for its later executions (copied; the context
   must outlive them); NULL removes it. */
NRT_STATUS nrt_tools_set_model_feed(nrt_model_t *model, const nrt_tools_feed_t *feed);

/* A listening socket on NEURON_RT_ROOT_COMM_ID that the process handed
   it (a launcher forking the ranks of a job holds the port from choosing
   it to the bootstrap): the next global communicator of device 0 accepts
   the other ranks on it instead of binding the port again, and closes it. */
void nrt_tools_set_bootstrap_listener(int fd);

/* The caller has finished writing `tensor` through the address
   nrt_tensor_get_va gave it: the runtime tracks the tensor's changes again,
   so work derived from its bytes (a convolution's reordered weights) is
   kept while they stay unchanged. Writes through the address after this
   call are not seen; call nrt_tensor_get_va again before making any. */
NRT_STATUS nrt_tools_tensor_written(nrt_tensor_t *tensor);
/* Trips of the outermost while loop in the model's last execution (a
   generate loop makes one a token) and, where loop_ns is not NULL, the
   time that loop took from its start to its end (a prompt's prefill before
   it left out), so a caller can report time per trip; 0 and 0 when the
   program ran no loop or has not run. */
NRT_STATUS nrt_tools_last_loop_trips(const nrt_model_t *model, uint64_t *trips, uint64_t *loop_ns);
/* Frees a string the functions above returned. */
void nrt_tools_free(char *json);

#ifdef __cplusplus
}
#endif

#endif /* NRT_NRT_TOOLS_EXT_H_ */
