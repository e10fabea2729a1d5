/* Thread safety as libnrt documents it: two threads execute models loaded
 * on different cores while two others write and read tensors of their own;
 * every result and every byte read back is checked. argv[1]: directory
 * holding add_mul.neff. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_test_util.h"
#include "nrt/nrt.h"

enum { kIterations = 200, kTensorBytes = 1 << 16 };

static nrt_model_t *models[2];
static volatile int failed = 0;

static void fail(const char *what, int worker, int iteration) {
  fprintf(stderr, "threads: worker %d, iteration %d: %s (%s)\n", worker, iteration, what,
          nrt_get_last_error());
  failed = 1;
}

static void *execute_loop(void *arg) {
  const int core = (int)(size_t)arg;
  float a[6], b[6], sum[6], product[6];
  nrt_tensor_t *t[4];
  const char *names[4] = {"a", "b", "output0", "output1"};  /* sum, product */
  nrt_tensor_set_t *ins = NULL, *outs = NULL;
  if (nrt_allocate_tensor_set(&ins) != NRT_SUCCESS || nrt_allocate_tensor_set(&outs) != NRT_SUCCESS) {
    fail("tensor sets", core, 0);
    return NULL;
  }
  for (int i = 0; i < 4; ++i) {
    if (nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, core, sizeof a, names[i], &t[i]) != NRT_SUCCESS) {
      fail("allocate", core, 0);
      return NULL;
    }
    nrt_add_tensor_to_tensor_set(i < 2 ? ins : outs, names[i], t[i]);
  }
  for (int it = 0; it < kIterations && !failed; ++it) {
    for (int k = 0; k < 6; ++k) {
      a[k] = (float)(core * 1000 + it + k);
      b[k] = (float)(k - it % 7);
    }
    if (nrt_tensor_write(t[0], a, 0, sizeof a) != NRT_SUCCESS ||
        nrt_tensor_write(t[1], b, 0, sizeof b) != NRT_SUCCESS ||
        nrt_execute(models[core], ins, outs) != NRT_SUCCESS ||
        nrt_tensor_read(t[2], sum, 0, sizeof sum) != NRT_SUCCESS ||
        nrt_tensor_read(t[3], product, 0, sizeof product) != NRT_SUCCESS) {
      fail("execute", core, it);
      break;
    }
    for (int k = 0; k < 6; ++k) {
      if (sum[k] != a[k] + b[k] || product[k] != a[k] * b[k]) {
        fail("wrong result", core, it);
        break;
      }
    }
  }
  for (int i = 0; i < 4; ++i) nrt_tensor_free(&t[i]);
  nrt_destroy_tensor_set(&ins);
  nrt_destroy_tensor_set(&outs);
  return NULL;
}

static void *tensor_loop(void *arg) {
  const int worker = (int)(size_t)arg;
  unsigned char *out = malloc(kTensorBytes), *in = malloc(kTensorBytes);
  nrt_tensor_t *t = NULL;
  if (out == NULL || in == NULL ||
      nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, worker % 2, kTensorBytes, "scratch", &t) != NRT_SUCCESS) {
    fail("allocate", worker, 0);
    free(out);
    free(in);
    return NULL;
  }
  for (int it = 0; it < kIterations && !failed; ++it) {
    for (int k = 0; k < kTensorBytes; ++k) out[k] = (unsigned char)(k * 31 + it + worker);
    if (nrt_tensor_write(t, out, 0, kTensorBytes) != NRT_SUCCESS ||
        nrt_tensor_read(t, in, 0, kTensorBytes) != NRT_SUCCESS) {
      fail("write/read", worker, it);
      break;
    }
    if (memcmp(in, out, kTensorBytes) != 0) {
      fail("read back other bytes than written", worker, it);
      break;
    }
  }
  nrt_tensor_free(&t);
  free(out);
  free(in);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: threads MODEL_DIR\n");
    return 2;
  }
  size_t size = 0;
  char *neff = read_model(argv[1], "add_mul.neff", &size);
  if (neff == NULL) return 1;
  uint32_t cores = 0;
  if (nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "") != NRT_SUCCESS ||
      nrt_get_visible_vnc_count(&cores) != NRT_SUCCESS || cores < 2) {
    fprintf(stderr, "threads: needs 2 visible cores (%s)\n", nrt_get_last_error());
    return 1;
  }
  for (int c = 0; c < 2; ++c) {
    if (nrt_load(neff, size, c, -1, &models[c]) != NRT_SUCCESS) {
      fprintf(stderr, "threads: load on core %d: %s\n", c, nrt_get_last_error());
      return 1;
    }
  }
  pthread_t threads[4];
  for (size_t i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, execute_loop, (void *)i);
  for (size_t i = 2; i < 4; ++i) pthread_create(&threads[i], NULL, tensor_loop, (void *)i);
  for (int i = 0; i < 4; ++i) pthread_join(threads[i], NULL);
  nrt_unload(models[0]);
  nrt_unload(models[1]);
  nrt_close();
  free(neff);
  if (failed) return 1;
  printf("ok threads (%d executions on each of 2 cores, tensor traffic alongside)\n", kIterations);
  return 0;
}
