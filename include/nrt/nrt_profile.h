/*
 * neuron-tools runtime: profiling. Per-model profiles (nrt_profile_*),
 * continuous profiling, and "inspect" sessions that capture system and
 * device profiles to a directory, as NEURON_RT_INSPECT_* do.
 * Profiles are written as Trace Event JSON (see nrt(3)).
 */
#ifndef NRT_NRT_PROFILE_H_
#define NRT_NRT_PROFILE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nrt/nrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Profiles every execution of `model` until nrt_profile_stop. */
NRT_STATUS nrt_profile_start(nrt_model_t *model, const char *filename);
/* Writes the profile to `filename` and stops profiling. */
NRT_STATUS nrt_profile_stop(const char *filename);

/* Continuous profiling: every execution is profiled, and the latest one of
 * a core is written only when asked (nrt_profile_continuous_save). */
typedef struct nrt_profile_continuous_options nrt_profile_continuous_options_t;

NRT_STATUS nrt_profile_continuous_options_allocate(nrt_profile_continuous_options_t **options);
NRT_STATUS nrt_profile_continuous_options_free(nrt_profile_continuous_options_t *options);
/* Default "./output". */
NRT_STATUS nrt_profile_continuous_options_set_output_dir(nrt_profile_continuous_options_t *options,
                                                         const char *output_dir);
NRT_STATUS nrt_profile_continuous_start(nrt_profile_continuous_options_t *options);
NRT_STATUS nrt_profile_continuous_save(uint32_t vnc, nrt_profile_continuous_options_t *options);
NRT_STATUS nrt_profile_continuous_stop(void);

/* Starts an inspect session configured by the NEURON_RT_INSPECT_*
 * variables (ENABLE, OUTPUT_DIR, SYSTEM_PROFILE, DEVICE_PROFILE, ON_FAIL). */
NRT_STATUS nrt_inspect_begin(void);
/* Ends the session and writes what it captured. */
NRT_STATUS nrt_inspect_stop(void);

/* Options for nrt_inspect_begin_with_options, which ignores the variables. */
typedef struct nrt_inspect_config nrt_inspect_config_t;

/* Allocates options set to the defaults below. */
NRT_STATUS nrt_inspect_config_allocate(nrt_inspect_config_t **options);
/* Defaults: session 1, "./output", every activity type, every core and
 * event type captured, inspect and inspect-on-fail off. */
NRT_STATUS nrt_inspect_config_set_defaults(nrt_inspect_config_t *options);
NRT_STATUS nrt_inspect_config_free(nrt_inspect_config_t *options);
NRT_STATUS nrt_inspect_config_set_session_id(nrt_inspect_config_t *options, int session_id);
/* A non-empty path, copied. */
NRT_STATUS nrt_inspect_config_set_output_dir(nrt_inspect_config_t *options, const char *output_dir);
NRT_STATUS nrt_inspect_config_set_sys_trace_max_events_per_nc(nrt_inspect_config_t *options,
                                                              uint64_t sys_trace_max_events_per_nc);
NRT_STATUS nrt_inspect_config_set_capture_enabled_for_nc(nrt_inspect_config_t *options, uint32_t nc_idx,
                                                         bool enabled);
/* `event_type`: one of nrt_sys_trace_get_event_types(). */
NRT_STATUS nrt_inspect_config_set_capture_enabled_for_event_type_string(nrt_inspect_config_t *options,
                                                                       const char *event_type, bool enabled);
/* Capture profiles of every execution. */
NRT_STATUS nrt_inspect_config_set_enable_inspect(nrt_inspect_config_t *options, bool enable_inspect);
/* Capture device profiles of failed executions. */
NRT_STATUS nrt_inspect_config_set_enable_inspect_on_fail(nrt_inspect_config_t *options,
                                                         bool enable_inspect_on_fail);
/* Starts a session with `options` (NULL: defaults). */
NRT_STATUS nrt_inspect_begin_with_options(nrt_inspect_config_t *options);

/* Activity types: "system_profile", "device_profile", "host_memory",
 * "cpu_util". Arrays are allocated; free with
 * nrt_inspect_config_free_activity_types (or free() each and the array). */
NRT_STATUS nrt_inspect_config_get_all_activity_types(const char ***activity_types, size_t *count);
NRT_STATUS nrt_inspect_config_get_enabled_activity_types(nrt_inspect_config_t *options,
                                                         const char ***activity_types, size_t *count);
void nrt_inspect_config_free_activity_types(const char **activity_types, size_t count);
/* `activity_type`: one of the above or "all". */
NRT_STATUS nrt_inspect_config_set_activity(nrt_inspect_config_t *options, const char *activity_type,
                                           bool enabled);

#ifdef __cplusplus
}
#endif

#endif /* NRT_NRT_PROFILE_H_ */
