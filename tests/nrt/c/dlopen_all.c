/* A client as language bindings are: it loads libnrt.so.1 by name with
 * dlopen, resolves every public function (names listed one per line in
 * argv[2], taken from the installed headers), then runs a model through
 * the resolved pointers only. argv[1]: directory holding add_mul.neff. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_test_util.h"
#include "nrt/nrt.h"
#include "nrt/nrt_version.h"

static void *lib;

static void *must_resolve(const char *name) {
  void *p = dlsym(lib, name);
  if (p == NULL) {
    fprintf(stderr, "dlopen_all: %s is not exported: %s\n", name, dlerror());
    exit(1);
  }
  return p;
}

typedef NRT_STATUS (*init_fn)(nrt_framework_type_t, const char *, const char *);
typedef void (*close_fn)(void);
typedef NRT_STATUS (*version_fn)(nrt_version_t *, size_t);
typedef NRT_STATUS (*load_fn)(const void *, size_t, int32_t, int32_t, nrt_model_t **);
typedef NRT_STATUS (*unload_fn)(nrt_model_t *);
typedef NRT_STATUS (*alloc_fn)(nrt_tensor_placement_t, int, size_t, const char *, nrt_tensor_t **);
typedef void (*free_fn)(nrt_tensor_t **);
typedef NRT_STATUS (*write_fn)(nrt_tensor_t *, const void *, size_t, size_t);
typedef NRT_STATUS (*read_fn)(const nrt_tensor_t *, void *, size_t, size_t);
typedef NRT_STATUS (*set_alloc_fn)(nrt_tensor_set_t **);
typedef void (*set_free_fn)(nrt_tensor_set_t **);
typedef NRT_STATUS (*set_add_fn)(nrt_tensor_set_t *, const char *, nrt_tensor_t *);
typedef NRT_STATUS (*exec_fn)(nrt_model_t *, const nrt_tensor_set_t *, nrt_tensor_set_t *);
typedef const char *(*str_fn)(NRT_STATUS);

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: dlopen_all MODEL_DIR FUNCTIONS_FILE\n");
    return 2;
  }
  lib = dlopen("libnrt.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "dlopen_all: %s\n", dlerror());
    return 1;
  }
  FILE *names = fopen(argv[2], "r");
  if (names == NULL) {
    perror(argv[2]);
    return 1;
  }
  char line[256];
  int resolved = 0;
  while (fgets(line, sizeof line, names) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    if (line[0] == '\0') continue;
    must_resolve(line);
    ++resolved;
  }
  fclose(names);
  if (resolved < 100) {
    fprintf(stderr, "dlopen_all: only %d names to resolve\n", resolved);
    return 1;
  }

  version_fn get_version = (version_fn)must_resolve("nrt_get_version");
  str_fn as_str = (str_fn)must_resolve("nrt_get_status_as_str");
  nrt_version_t v;
  if (get_version(&v, sizeof v) != NRT_SUCCESS || v.rt_major != NRT_MAJOR_VERSION) {
    fprintf(stderr, "dlopen_all: nrt_get_version failed\n");
    return 1;
  }
  if (as_str(NRT_TIMEOUT) == NULL || strlen(as_str(NRT_TIMEOUT)) == 0) {
    fprintf(stderr, "dlopen_all: nrt_get_status_as_str gave nothing\n");
    return 1;
  }

  size_t neff_size = 0;
  char *neff = read_model(argv[1], "add_mul.neff", &neff_size);
  if (neff == NULL) return 1;
  init_fn init = (init_fn)must_resolve("nrt_init");
  close_fn nrt_close_p = (close_fn)must_resolve("nrt_close");
  load_fn load = (load_fn)must_resolve("nrt_load");
  unload_fn unload = (unload_fn)must_resolve("nrt_unload");
  alloc_fn alloc = (alloc_fn)must_resolve("nrt_tensor_allocate");
  free_fn tfree = (free_fn)must_resolve("nrt_tensor_free");
  write_fn twrite = (write_fn)must_resolve("nrt_tensor_write");
  read_fn tread = (read_fn)must_resolve("nrt_tensor_read");
  set_alloc_fn set_alloc = (set_alloc_fn)must_resolve("nrt_allocate_tensor_set");
  set_free_fn set_free = (set_free_fn)must_resolve("nrt_destroy_tensor_set");
  set_add_fn set_add = (set_add_fn)must_resolve("nrt_add_tensor_to_tensor_set");
  exec_fn execute = (exec_fn)must_resolve("nrt_execute");

  nrt_model_t *model = NULL;
  if (init(NRT_FRAMEWORK_TYPE_NO_FW, "", "") != NRT_SUCCESS ||
      load(neff, neff_size, -1, -1, &model) != NRT_SUCCESS) {
    fprintf(stderr, "dlopen_all: init or load failed\n");
    return 1;
  }
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {10, 20, 30, 40, 50, 60};
  float sum[6], product[6];
  nrt_tensor_t *ta, *tb, *ts, *tp;
  nrt_tensor_set_t *ins, *outs;
  int ok = alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, sizeof a, "a", &ta) == NRT_SUCCESS &&
           alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, sizeof b, "b", &tb) == NRT_SUCCESS &&
           alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, sizeof sum, "sum", &ts) == NRT_SUCCESS &&
           alloc(NRT_TENSOR_PLACEMENT_DEVICE, 0, sizeof product, "product", &tp) == NRT_SUCCESS &&
           twrite(ta, a, 0, sizeof a) == NRT_SUCCESS && twrite(tb, b, 0, sizeof b) == NRT_SUCCESS &&
           set_alloc(&ins) == NRT_SUCCESS && set_alloc(&outs) == NRT_SUCCESS &&
           set_add(ins, "a", ta) == NRT_SUCCESS && set_add(ins, "b", tb) == NRT_SUCCESS &&
           set_add(outs, "output0", ts) == NRT_SUCCESS && set_add(outs, "output1", tp) == NRT_SUCCESS &&
           execute(model, ins, outs) == NRT_SUCCESS &&
           tread(ts, sum, 0, sizeof sum) == NRT_SUCCESS &&
           tread(tp, product, 0, sizeof product) == NRT_SUCCESS;
  if (!ok) {
    fprintf(stderr, "dlopen_all: running add_mul through the resolved functions failed\n");
    return 1;
  }
  for (int i = 0; i < 6; ++i) {
    if (sum[i] != a[i] + b[i] || product[i] != a[i] * b[i]) {
      fprintf(stderr, "dlopen_all: element %d: sum %g product %g\n", i, sum[i], product[i]);
      return 1;
    }
  }
  set_free(&ins);
  set_free(&outs);
  tfree(&ta);
  tfree(&tb);
  tfree(&ts);
  tfree(&tp);
  unload(model);
  nrt_close_p();
  free(neff);
  dlclose(lib);
  printf("ok dlopen_all (%d functions resolved)\n", resolved);
  return 0;
}
