/*
 * Profiling, inspect and the system trace through libnrt.so.1 and its
 * public headers only: nrt_profile_start/stop, nrt_trace_start/stop,
 * continuous profiling, an inspect session with options, and fetching
 * system trace events.
 *
 * argv[1]: a directory holding add_mul.neff (tests/nrt/c/models/add_mul.hlo:
 * inputs a, b f32[2,3]; outputs output0 = sum, output1 = product). NEURON_SIM_ROOT is set and
 * the current directory is a writable temporary directory.
 * Prints "ok profile" and exits 0, else what failed and exits 1.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "c_test_util.h"
#include "nrt/nrt.h"
#include "nrt/nrt_experimental.h"
#include "nrt/nrt_profile.h"
#include "nrt/nrt_sys_trace.h"

#define CHECK(cond, what)                                                         \
  do {                                                                            \
    if (!(cond)) {                                                                \
      fprintf(stderr, "profile: %s: %s failed (last error: %s)\n", (what), #cond, \
              nrt_get_last_error());                                              \
      return 1;                                                                   \
    }                                                                             \
  } while (0)

static int count(const char *text, const char *needle) {
  int n = 0;
  const char *at = text;
  while ((at = strstr(at, needle)) != NULL) {
    ++n;
    at += strlen(needle);
  }
  return n;
}

/* The only file in `dir` whose name starts with `prefix` (dot files aside),
 * or NULL (also when there are several). The result is malloc'd. */
static char *only_file(const char *dir, const char *prefix) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char *found = NULL;
  int n = 0;
  if (d == NULL) return NULL;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)) != 0) continue;
    if (++n == 1) {
      found = malloc(strlen(dir) + strlen(e->d_name) + 2);
      if (found != NULL) sprintf(found, "%s/%s", dir, e->d_name);
    }
  }
  closedir(d);
  if (n != 1) {
    free(found);
    return NULL;
  }
  return found;
}

static nrt_tensor_t *device_tensor(const char *name, nrt_tensor_set_t *set) {
  nrt_tensor_t *t = NULL;
  if (nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 24, name, &t) != NRT_SUCCESS) return NULL;
  if (nrt_add_tensor_to_tensor_set(set, name, t) != NRT_SUCCESS) return NULL;
  return t;
}

int main(int argc, char **argv) {
  char path[4096];
  size_t neff_size = 0;
  char *neff;
  char *text;
  char *file;
  char *events = NULL;
  size_t events_size = 0;
  const char **types = NULL;
  size_t ntypes = 0, i;
  int has_exec = 0;
  nrt_model_t *model = NULL;
  nrt_tensor_set_t *in = NULL, *out = NULL;
  nrt_tensor_t *a, *b, *sum, *product, *extra = NULL;
  nrt_profile_continuous_options_t *cont = NULL;
  nrt_inspect_config_t *inspect = NULL;
  nrt_sys_trace_fetch_options_t *fetch = NULL;
  const float ones[6] = {1, 1, 1, 1, 1, 1};

  if (argc < 2) {
    fprintf(stderr, "usage: profile NEFF_DIR\n");
    return 1;
  }
  snprintf(path, sizeof path, "%s/add_mul.neff", argv[1]);
  neff = read_file(path, &neff_size);
  CHECK(neff != NULL, "reading add_mul.neff");

  /* Event types: malloc'd, so free() works on them. */
  CHECK(nrt_sys_trace_get_event_types(&types, &ntypes) == NRT_SUCCESS,
        "nrt_sys_trace_get_event_types");
  for (i = 0; i < ntypes; ++i) {
    if (strcmp(types[i], "exec") == 0) has_exec = 1;
    free((void *)types[i]);
  }
  free((void *)types);
  CHECK(has_exec, "event type list holds \"exec\"");

  CHECK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "") == NRT_SUCCESS, "nrt_init");
  /* Started before the load, so the load is in it. */
  CHECK(nrt_sys_trace_start(NULL) == NRT_SUCCESS, "nrt_sys_trace_start");
  CHECK(nrt_load(neff, neff_size, 0, -1, &model) == NRT_SUCCESS, "nrt_load");
  free(neff);
  CHECK(nrt_allocate_tensor_set(&in) == NRT_SUCCESS, "nrt_allocate_tensor_set");
  CHECK(nrt_allocate_tensor_set(&out) == NRT_SUCCESS, "nrt_allocate_tensor_set");
  a = device_tensor("a", in);
  b = device_tensor("b", in);
  sum = device_tensor("output0", out);  /* the tuple leaves, as named by the compiler */
  product = device_tensor("output1", out);
  CHECK(a && b && sum && product, "allocating tensors");
  CHECK(nrt_tensor_write(a, ones, 0, sizeof ones) == NRT_SUCCESS, "nrt_tensor_write");
  CHECK(nrt_tensor_write(b, ones, 0, sizeof ones) == NRT_SUCCESS, "nrt_tensor_write");

  /* nrt_profile_start/stop: two executions of the model. */
  CHECK(nrt_profile_start(model, "model.json") == NRT_SUCCESS, "nrt_profile_start");
  CHECK(nrt_execute(model, in, out) == NRT_SUCCESS, "nrt_execute");
  CHECK(nrt_execute(model, in, out) == NRT_SUCCESS, "nrt_execute");
  CHECK(nrt_profile_stop("model.json") == NRT_SUCCESS, "nrt_profile_stop");
  CHECK(nrt_profile_stop("model.json") == NRT_INVALID, "a second nrt_profile_stop");
  text = read_file("model.json", NULL);
  CHECK(text != NULL, "reading model.json");
  CHECK(strstr(text, "\"traceEvents\"") != NULL, "model.json is a Trace Event document");
  CHECK(count(text, "\"cat\":\"nc_exec\"") == 2, "model.json holds two executions");
  CHECK(count(text, "\"name\":\"sum\"") == 2, "model.json holds the add of each execution");
  free(text);

  /* nrt_trace_start/stop with device allocations. */
  CHECK(nrt_trace_start(true) == NRT_SUCCESS, "nrt_trace_start");
  CHECK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 4096, "extra", &extra) == NRT_SUCCESS,
        "nrt_tensor_allocate");
  CHECK(nrt_execute(model, in, out) == NRT_SUCCESS, "nrt_execute");
  nrt_tensor_free(&extra);
  CHECK(nrt_trace_stop("trace/all.json") == NRT_SUCCESS, "nrt_trace_stop");
  text = read_file("trace/all.json", NULL);
  CHECK(text != NULL, "reading trace/all.json");
  CHECK(count(text, "\"cat\":\"nc_exec\"") == 1, "the trace holds the execution");
  CHECK(strstr(text, "\"alloc extra\"") != NULL && strstr(text, "\"free extra\"") != NULL,
        "the trace holds the allocation and the free");
  free(text);

  /* Continuous profiling: save the latest execution of nc0. */
  CHECK(nrt_profile_continuous_options_allocate(&cont) == NRT_SUCCESS,
        "nrt_profile_continuous_options_allocate");
  CHECK(nrt_profile_continuous_options_set_output_dir(cont, "continuous") == NRT_SUCCESS,
        "nrt_profile_continuous_options_set_output_dir");
  CHECK(nrt_profile_continuous_start(cont) == NRT_SUCCESS, "nrt_profile_continuous_start");
  CHECK(nrt_execute(model, in, out) == NRT_SUCCESS, "nrt_execute");
  CHECK(nrt_profile_continuous_save(0, cont) == NRT_SUCCESS, "nrt_profile_continuous_save");
  CHECK(nrt_profile_continuous_stop() == NRT_SUCCESS, "nrt_profile_continuous_stop");
  nrt_profile_continuous_options_free(cont);
  file = only_file("continuous", "");
  CHECK(file != NULL, "one file in continuous/");
  text = read_file(file, NULL);
  free(file);
  CHECK(text != NULL && count(text, "\"cat\":\"nc_exec\"") == 1,
        "the saved profile holds one execution");
  free(text);

  /* An inspect session with options. */
  CHECK(nrt_inspect_config_allocate(&inspect) == NRT_SUCCESS, "nrt_inspect_config_allocate");
  CHECK(nrt_inspect_config_set_output_dir(inspect, "") == NRT_INVALID,
        "an empty output dir is refused");
  CHECK(nrt_inspect_config_set_activity(inspect, "bogus", true) == NRT_INVALID,
        "an unknown activity is refused");
  CHECK(nrt_inspect_config_set_output_dir(inspect, "inspect") == NRT_SUCCESS,
        "nrt_inspect_config_set_output_dir");
  CHECK(nrt_inspect_config_set_enable_inspect(inspect, true) == NRT_SUCCESS,
        "nrt_inspect_config_set_enable_inspect");
  CHECK(nrt_inspect_begin_with_options(inspect) == NRT_SUCCESS, "nrt_inspect_begin_with_options");
  nrt_inspect_config_free(inspect);
  CHECK(nrt_execute(model, in, out) == NRT_SUCCESS, "nrt_execute");
  CHECK(nrt_inspect_stop() == NRT_SUCCESS, "nrt_inspect_stop");
  file = only_file("inspect", "system_profile_pid");
  CHECK(file != NULL, "one system profile in inspect/");
  text = read_file(file, NULL);
  free(file);
  CHECK(text != NULL && count(text, "\"name\":\"nrt_execute\"") == 1,
        "the system profile holds the execution");
  free(text);

  /* System trace: every event so far, then nothing again. */
  CHECK(nrt_sys_trace_fetch_options_allocate(&fetch) == NRT_SUCCESS,
        "nrt_sys_trace_fetch_options_allocate");
  nrt_sys_trace_fetch_options_set_nc_idx(fetch, 0);
  CHECK(nrt_sys_trace_fetch_events(&events, &events_size, fetch) == NRT_SUCCESS,
        "nrt_sys_trace_fetch_events");
  CHECK(strlen(events) == events_size, "the fetched text is NUL-terminated at its size");
  CHECK(count(events, "\"name\":\"model_load\"") == 1, "the load was recorded");
  CHECK(count(events, "\"name\":\"execute\"") == 5, "five executions were recorded");
  CHECK(count(events, "\"name\":\"tensor_write\"") == 2, "two tensor writes were recorded");
  CHECK(count(events, "\"nc_idx\":0") > 0 && count(events, "\"nc_idx\":1") == 0,
        "events are on nc0");
  nrt_sys_trace_buffer_free(events);
  events = NULL;
  CHECK(nrt_sys_trace_fetch_events(&events, &events_size, NULL) == NRT_SUCCESS,
        "nrt_sys_trace_fetch_events");
  CHECK(strstr(events, "\"execute\"") == NULL, "fetched events are not fetched again");
  nrt_sys_trace_buffer_free(events);
  nrt_sys_trace_fetch_options_free(fetch);
  CHECK(nrt_sys_trace_stop() == NRT_SUCCESS, "nrt_sys_trace_stop");

  nrt_destroy_tensor_set(&in);
  nrt_destroy_tensor_set(&out);
  nrt_tensor_free(&a);
  nrt_tensor_free(&b);
  nrt_tensor_free(&sum);
  nrt_tensor_free(&product);
  CHECK(nrt_unload(model) == NRT_SUCCESS, "nrt_unload");
  nrt_close();
  printf("ok profile\n");
  return 0;
}
