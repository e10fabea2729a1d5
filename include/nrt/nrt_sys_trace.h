/*
 * neuron-tools runtime: system trace. Runtime events (loads, executions,
 * tensor transfers, collectives) kept in a ring per core, captured between
 * nrt_sys_trace_start and nrt_sys_trace_stop and fetched as JSON while the
 * program runs; inspect sessions write the same events to disk.
 */
#ifndef NRT_NRT_SYS_TRACE_H_
#define NRT_NRT_SYS_TRACE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrt/nrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Capture options. */
typedef struct nrt_sys_trace_config nrt_sys_trace_config_t;

NRT_STATUS nrt_sys_trace_config_allocate(nrt_sys_trace_config_t **options);
void nrt_sys_trace_config_set_defaults(nrt_sys_trace_config_t *options);
void nrt_sys_trace_config_free(nrt_sys_trace_config_t *options);
/* Ring capacity per core (the oldest events are dropped beyond it). */
void nrt_sys_trace_config_set_max_events_per_nc(nrt_sys_trace_config_t *options, uint64_t max_events_per_nc);
/* No ring (and no events) for a disabled core. */
void nrt_sys_trace_config_set_capture_enabled_for_nc(nrt_sys_trace_config_t *options, uint32_t nc_idx,
                                                     bool enabled);
/* `event_type`: one of nrt_sys_trace_get_event_types(); NRT_INVALID otherwise. */
NRT_STATUS nrt_sys_trace_config_set_capture_enabled_for_event_type(nrt_sys_trace_config_t *options,
                                                                   const char *event_type, bool enabled);

/* Every event type name; an allocated array of allocated strings. Free with
 * nrt_sys_trace_free_event_types (or free() each and the array). */
NRT_STATUS nrt_sys_trace_get_event_types(const char ***event_types, size_t *count);
void nrt_sys_trace_free_event_types(const char **event_types, size_t count);
/* The event types `options` captures, allocated likewise. */
NRT_STATUS nrt_sys_trace_config_get_enabled_event_types(nrt_sys_trace_config_t *options,
                                                        const char ***event_types, size_t *count);

/* Starts capturing (NULL: defaults); NRT_INVALID when already started. */
NRT_STATUS nrt_sys_trace_start(nrt_sys_trace_config_t *options);
/* Stops capturing and drops what was not fetched. */
NRT_STATUS nrt_sys_trace_stop(void);

/* Fetch options. */
typedef struct nrt_sys_trace_fetch_options nrt_sys_trace_fetch_options_t;
NRT_STATUS nrt_sys_trace_fetch_options_allocate(nrt_sys_trace_fetch_options_t **options);
void nrt_sys_trace_fetch_options_set_defaults(nrt_sys_trace_fetch_options_t *options);
void nrt_sys_trace_fetch_options_free(nrt_sys_trace_fetch_options_t *options);
/* At most this many events per core per fetch (default: all). */
void nrt_sys_trace_fetch_options_set_max_events_per_nc(nrt_sys_trace_fetch_options_t *options,
                                                       uint64_t max_events_per_nc);
/* Only this core's events (default: every core). */
void nrt_sys_trace_fetch_options_set_nc_idx(nrt_sys_trace_fetch_options_t *options, uint64_t nc_idx);

/* Moves captured events out as a NUL-terminated JSON text in *buffer
 * (allocated; free with nrt_sys_trace_buffer_free), *written_size bytes
 * without the NUL. Events fetched once are not fetched again. `options`
 * may be NULL. */
NRT_STATUS nrt_sys_trace_fetch_events(char **buffer, size_t *written_size,
                                      const nrt_sys_trace_fetch_options_t *options);
void nrt_sys_trace_buffer_free(char *buffer);

#ifdef __cplusplus
}
#endif

#endif /* NRT_NRT_SYS_TRACE_H_ */
