/*
 * neuron-tools runtime: debug event streams. Each logical NeuronCore has
 * one; while a client is connected, events the core emits (the values of
 * neuron.device_print custom calls) are queued for it.
 *
 * nrt_debug_client_connect gives a file descriptor that can be polled
 * (poll, select, epoll) and is readable while events wait; read them with
 * nrt_debug_client_read_one_event, never with read(2). One client per core
 * at a time; events emitted before the client connected are not kept.
 * When more events than NEURON_RT_DEBUG_STREAM_BUFFER_SIZE wait unread,
 * new ones are dropped and counted (the count is logged when the client
 * closes). Streams are per process, and one stream must not be used from
 * several threads at once.
 */
#ifndef NRT_NDEBUG_STREAM_H_
#define NRT_NDEBUG_STREAM_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrt/nrt_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ndebug_stream_event_type {
  NDEBUG_STREAM_EVENT_TYPE_INVALID = 0,
  NDEBUG_STREAM_EVENT_TYPE_DEBUG_TENSOR_READ = 1, /* payload: ndebug_stream_payload_debug_tensor_read_t */
} ndebug_stream_event_type_t;

/* Every event: its payload's type and size in bytes. */
typedef struct ndebug_stream_event_header {
  uint64_t data_size;
  uint32_t type;
  char reserved[52];
} ndebug_stream_event_header_t;

/* A printed tensor: the prefix (NUL-terminated, cut to fit), the core, the
 * dtype name ("float32", "bfloat16", ...), up to 8 dims (0 past the rank)
 * and tensor_data_size bytes of row-major data after the fixed part. */
typedef struct ndebug_stream_payload_debug_tensor_read {
  char prefix[512];
  uint32_t logical_nc_id;
  uint32_t pipe;
  char tensor_dtype[16];
  uint64_t tensor_shape[8];
  uint64_t tensor_data_size;
  char reserved0[416];
  char tensor_data[];
} ndebug_stream_payload_debug_tensor_read_t;

/* Connects to logical core `logical_nc_idx`'s stream; *stream_fd is the
 * pollable handle. NRT_INVALID when the core is not one of the process's
 * or already has a client; NRT_INVALID_HANDLE before nrt_init. */
NRT_STATUS nrt_debug_client_connect(int logical_nc_idx, int *stream_fd);

/* Disconnects; events not read are dropped. */
void nrt_debug_client_connect_close(int stream_fd);

/* Takes the oldest event: its header, and its payload in memory the
 * caller frees with free(). NRT_FAILURE when no event waits (poll first),
 * NRT_INVALID for an fd that is not a connected stream. */
NRT_STATUS nrt_debug_client_read_one_event(int stream_fd, ndebug_stream_event_header_t *header,
                                           void **payload);

#ifdef __cplusplus
}
#endif

#endif /* NRT_NDEBUG_STREAM_H_ */
