/* The core API from C: lifecycle, instance and core questions, loading,
 * model introspection, every tensor call, execution and output completion,
 * and the hardware-only calls failing with a reason. argv[1]: directory
 * holding add_mul.neff (inputs a, b: f32[2,3]; outputs sum, product). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_test_util.h"
#include "nrt/nrt.h"
#include "nrt/nrt_experimental.h"
#include "nrt/nrt_version.h"

static int failures = 0;

#define EXPECT(cond)                                                      \
  do {                                                                    \
    if (!(cond)) {                                                        \
      ++failures;                                                         \
      fprintf(stderr, "core.c:%d: %s (last error: %s)\n", __LINE__, #cond, \
              nrt_get_last_error());                                      \
    }                                                                     \
  } while (0)

static nrt_tensor_t *device_tensor(const char *name, size_t size) {
  nrt_tensor_t *t = NULL;
  EXPECT(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, size, name, &t) == NRT_SUCCESS);
  return t;
}

static void check_before_init(void) {
  uint32_t n = 0;
  EXPECT(nrt_get_total_vnc_count(&n) == NRT_SUCCESS && n >= 1);
  EXPECT(nrt_get_visible_nc_count(&n) == NRT_SUCCESS && n >= 1);
  nrt_instance_info_t info;
  memset(&info, 0xff, sizeof info);
  EXPECT(nrt_get_instance_info(&info, sizeof info) == NRT_SUCCESS);
  EXPECT(info.family != NRT_INSTANCE_UNKNOWN && info.family <= NRT_INSTANCE_TRN3PDS98);
  EXPECT(info.size < NRT_INSTANCE_SIZE_NUM);
  EXPECT(strlen(info.arch_name) > 0 && strlen(info.arch_name) < sizeof info.arch_name);
  nrt_version_t v;
  EXPECT(nrt_get_version(&v, sizeof v) == NRT_SUCCESS);
  EXPECT(v.rt_major == NRT_MAJOR_VERSION && strstr(v.rt_detail, "neuron-tools") != NULL);
  EXPECT(strcmp(nrt_get_status_as_str(NRT_SUCCESS), nrt_get_status_as_str(NRT_TIMEOUT)) != 0);
  nrt_model_t *model = NULL;
  EXPECT(nrt_load("x", 1, -1, -1, &model) == NRT_UNINITIALIZED);
}

static void check_hardware_only(void) {
  int fd = -1;
  void *va = NULL;
  size_t size = 0;
  char bdf[64];
  size_t len = sizeof bdf;
  EXPECT(nrt_get_dmabuf_fd(0, 64, &fd) == NRT_INVALID);
  EXPECT(strstr(nrt_get_last_error(), "simulated") != NULL);
  EXPECT(nrt_get_hbm_mmap_va(0, 0, &va, &size) == NRT_INVALID);
  EXPECT(nrt_get_attached_efa_bdf(&fd, bdf, &len) == NRT_FAILURE);
  EXPECT(nrt_memcpy_to_device(&fd, &fd, sizeof fd) == NRT_INVALID);
  int err = 0;
  char msg[128] = "";
  EXPECT(nrt_get_libnccl_net(&err, msg, sizeof msg) == NULL && err != 0 && msg[0] != '\0');
  uint32_t host_id = 99;
  EXPECT(nrt_host_device_id_get(0, &host_id) == NRT_SUCCESS && host_id == 0);
  EXPECT(nrt_host_device_id_get(1000, &host_id) == NRT_INVALID);
}

static void check_model_info(nrt_model_t *model) {
  nrt_tensor_info_array_t *infos = NULL;
  EXPECT(nrt_get_model_tensor_info(model, &infos) == NRT_SUCCESS);
  if (infos == NULL) return;
  EXPECT(infos->tensor_count == 4);
  int inputs = 0, outputs = 0;
  for (uint64_t i = 0; i < infos->tensor_count; ++i) {
    const nrt_tensor_info_t *t = &infos->tensor_array[i];
    EXPECT(t->size == 6 * sizeof(float) && t->dtype == NRT_DTYPE_FLOAT32 && t->ndim == 2);
    EXPECT(t->shape[0] == 2 && t->shape[1] == 3);
    if (t->usage == NRT_TENSOR_USAGE_INPUT) {
      ++inputs;
      EXPECT(strcmp(t->name, "a") == 0 || strcmp(t->name, "b") == 0);
    } else {
      ++outputs;
      EXPECT(strcmp(t->name, "output0") == 0 || strcmp(t->name, "output1") == 0);  /* tuple leaves */
    }
  }
  EXPECT(inputs == 2 && outputs == 2);
  nrt_free_model_tensor_info(infos);
  nrt_model_info_t mi;
  size_t written = 0;
  EXPECT(nrt_get_model_info(model, &mi, sizeof mi, &written) == NRT_SUCCESS);
  EXPECT(written == sizeof mi && mi.vnc == 0);
  uint32_t n = 0;
  EXPECT(nrt_get_model_vnc_count(model, &n) == NRT_SUCCESS && n == 1);
  EXPECT(nrt_get_model_instance_count(model, &n) == NRT_SUCCESS && n >= 1);
}

static void check_tensors(void) {
  const uint8_t pattern[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  uint8_t back[8] = {0};
  nrt_tensor_t *t = device_tensor("t", 8);
  EXPECT(nrt_tensor_get_size(t) == 8);
  EXPECT(nrt_tensor_write(t, pattern, 0, 8) == NRT_SUCCESS);
  EXPECT(nrt_tensor_read(t, back, 0, 8) == NRT_SUCCESS && memcmp(back, pattern, 8) == 0);
  EXPECT(nrt_tensor_read(t, back, 4, 8) == NRT_INVALID);
  EXPECT(strlen(nrt_get_last_error()) > 0);

  /* memset and copy */
  EXPECT(nrt_tensor_memset(t, 2, 0xAB, 3) == NRT_SUCCESS);
  EXPECT(nrt_tensor_read(t, back, 0, 8) == NRT_SUCCESS);
  EXPECT(back[1] == 2 && back[2] == 0xAB && back[4] == 0xAB && back[5] == 6);
  nrt_tensor_t *u = device_tensor("u", 8);
  EXPECT(nrt_tensor_copy(t, 0, u, 4, 4) == NRT_SUCCESS);
  EXPECT(nrt_tensor_read(u, back, 4, 4) == NRT_SUCCESS && back[0] == 1 && back[2] == 0xAB);
  EXPECT(nrt_tensor_copy(t, 6, u, 0, 4) == NRT_INVALID);

  /* slices share storage, in both directions */
  nrt_tensor_t *slice = NULL;
  EXPECT(nrt_tensor_allocate_slice(t, 4, 4, "t[4:8]", &slice) == NRT_SUCCESS);
  EXPECT(nrt_tensor_get_size(slice) == 4);
  const uint8_t nines[4] = {9, 9, 9, 9};
  EXPECT(nrt_tensor_write(slice, nines, 0, 4) == NRT_SUCCESS);
  EXPECT(nrt_tensor_read(t, back, 0, 8) == NRT_SUCCESS && back[3] == 0xAB && back[4] == 9 && back[7] == 9);
  EXPECT((char *)nrt_tensor_get_va(slice) == (char *)nrt_tensor_get_va(t) + 4);
  EXPECT(nrt_tensor_allocate_slice(t, 6, 4, NULL, &slice) == NRT_INVALID);

  /* allocation info and batches */
  nrt_tensor_device_allocation_info_t ai;
  EXPECT(nrt_tensor_get_device_allocation_info(t, &ai) == NRT_SUCCESS && ai.size >= 8);
  nrt_tensor_device_allocation_info_t si;
  EXPECT(nrt_tensor_get_device_allocation_info(slice, &si) == NRT_SUCCESS);
  EXPECT(si.physical_address == ai.physical_address + 4);
  nrt_tensor_t *host = NULL;
  EXPECT(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_VIRTUAL, -1, 16, "host", &host) == NRT_SUCCESS);
  EXPECT(nrt_tensor_get_size(host) == 16 && nrt_tensor_get_va(host) != NULL);
  EXPECT(nrt_tensor_get_device_allocation_info(host, &ai) == NRT_INVALID);
  uint8_t w0[2] = {0x11, 0x22}, w1[3] = {0x33, 0x44, 0x55}, r0[2], r1[3];
  nrt_tensor_batch_op_t wops[2] = {{0, 2, w0}, {10, 3, w1}};
  nrt_tensor_batch_op_t rops[2] = {{0, 2, r0}, {10, 3, r1}};
  nrt_tensor_batch_t wb = {host, wops, 2}, rb = {host, rops, 2};
  EXPECT(nrt_tensor_write_batch(&wb, 1, false) == NRT_SUCCESS);
  EXPECT(nrt_tensor_read_batch(&rb, 1, false) == NRT_SUCCESS);
  EXPECT(memcmp(r0, w0, 2) == 0 && memcmp(r1, w1, 3) == 0);
  nrt_tensor_batch_op_t bad = {14, 3, r1};
  nrt_tensor_batch_t badb = {host, &bad, 1};
  EXPECT(nrt_tensor_read_batch(&badb, 1, false) == NRT_INVALID);

  /* empty tensors get storage from the caller */
  nrt_tensor_t *empty = NULL;
  EXPECT(nrt_tensor_allocate_empty("empty", &empty) == NRT_SUCCESS);
  EXPECT(nrt_tensor_read(empty, back, 0, 1) == NRT_INVALID);
  EXPECT(nrt_tensor_get_va(empty) == NULL);
  uint8_t mine[4] = {0};
  EXPECT(nrt_tensor_attach_buffer(empty, mine, sizeof mine) == NRT_SUCCESS);
  EXPECT(nrt_tensor_write(empty, pattern, 0, 4) == NRT_SUCCESS && mine[3] == 4);
  EXPECT(nrt_tensor_get_va(empty) == (void *)mine);

  /* device memory accounting */
  nrt_vnc_memory_stats_t before, after;
  size_t out_size = 0;
  EXPECT(nrt_get_vnc_memory_stats(0, &before, sizeof before, &out_size) == NRT_SUCCESS);
  EXPECT(out_size == sizeof before && before.bytes_limit > before.bytes_used);
  nrt_tensor_t *big = device_tensor("big", 1 << 20);
  EXPECT(nrt_get_vnc_memory_stats(0, &after, sizeof after, &out_size) == NRT_SUCCESS);
  EXPECT(after.bytes_used >= before.bytes_used + (1 << 20));
  nrt_tensor_free(&big);
  EXPECT(big == NULL);
  EXPECT(nrt_get_vnc_memory_stats(0, &after, sizeof after, &out_size) == NRT_SUCCESS);
  EXPECT(after.bytes_used == before.bytes_used);
  EXPECT(nrt_get_vnc_memory_stats(9999, &after, sizeof after, &out_size) == NRT_INVALID);

  nrt_tensor_free(&slice);  /* the slice goes first: t is still usable */
  EXPECT(nrt_tensor_read(t, back, 0, 8) == NRT_SUCCESS);
  nrt_tensor_free(&t);
  nrt_tensor_free(&u);
  nrt_tensor_free(&host);
  nrt_tensor_free(&empty);
}

static void check_execute(nrt_model_t *model) {
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {0.5f, -1, 2, 8, 0, 3};
  float sum[6] = {0};
  nrt_tensor_t *ta = device_tensor("a", sizeof a), *tb = device_tensor("b", sizeof b);
  nrt_tensor_t *tp = device_tensor("product", sizeof a);
  nrt_tensor_t *ts = NULL;
  /* the sum lands straight in the caller's buffer */
  EXPECT(nrt_tensor_allocate_empty("sum", &ts) == NRT_SUCCESS);
  EXPECT(nrt_tensor_attach_buffer(ts, sum, sizeof sum) == NRT_SUCCESS);
  EXPECT(nrt_tensor_write(ta, a, 0, sizeof a) == NRT_SUCCESS);
  EXPECT(nrt_tensor_write(tb, b, 0, sizeof b) == NRT_SUCCESS);
  nrt_tensor_set_t *ins = NULL, *outs = NULL;
  EXPECT(nrt_allocate_tensor_set(&ins) == NRT_SUCCESS && nrt_allocate_tensor_set(&outs) == NRT_SUCCESS);
  EXPECT(nrt_add_tensor_to_tensor_set(ins, "a", ta) == NRT_SUCCESS);
  EXPECT(nrt_add_tensor_to_tensor_set(outs, "output0", ts) == NRT_SUCCESS);
  EXPECT(nrt_add_tensor_to_tensor_set(outs, "output1", tp) == NRT_SUCCESS);
  EXPECT(nrt_execute(model, ins, outs) == NRT_INVALID); /* b is missing */
  EXPECT(strstr(nrt_get_last_error(), "'b'") != NULL);
  EXPECT(nrt_add_tensor_to_tensor_set(ins, "b", tb) == NRT_SUCCESS);
  nrt_tensor_t *got = NULL;
  EXPECT(nrt_get_tensor_from_tensor_set(ins, "b", &got) == NRT_SUCCESS && got == tb);
  EXPECT(nrt_get_tensor_from_tensor_set(ins, "nope", &got) == NRT_FAILURE);

  EXPECT(nrt_tensor_check_output_completion(ts, 0, 1) == NRT_TIMEOUT);
  EXPECT(nrt_execute(model, ins, outs) == NRT_SUCCESS);
  float product[6];
  EXPECT(nrt_tensor_read(tp, product, 0, sizeof product) == NRT_SUCCESS);
  for (int i = 0; i < 6; ++i) {
    EXPECT(sum[i] == a[i] + b[i]);
    EXPECT(product[i] == a[i] * b[i]);
  }
  EXPECT(nrt_tensor_check_output_completion(ts, -1, 1) == NRT_SUCCESS);
  EXPECT(nrt_tensor_check_output_completion(ts, 1000, 2) == NRT_TIMEOUT);
  EXPECT(nrt_execute_repeat(model, ins, outs, 3) == NRT_SUCCESS);
  EXPECT(nrt_tensor_check_output_completion(ts, 0, 4) == NRT_SUCCESS);
  EXPECT(nrt_tensor_reset_output_completion(ts) == NRT_SUCCESS);
  EXPECT(nrt_tensor_check_output_completion(ts, 0, 1) == NRT_TIMEOUT);

  nrt_destroy_tensor_set(&ins);
  nrt_destroy_tensor_set(&outs);
  EXPECT(ins == NULL && outs == NULL);
  nrt_tensor_free(&ta);
  nrt_tensor_free(&tb);
  nrt_tensor_free(&ts);
  nrt_tensor_free(&tp);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: core MODEL_DIR\n");
    return 2;
  }
  size_t size = 0;
  char *neff = read_model(argv[1], "add_mul.neff", &size);
  if (neff == NULL) return 1;
  check_before_init();
  EXPECT(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "") == NRT_SUCCESS);
  EXPECT(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "") == NRT_INVALID);
  check_hardware_only();
  nrt_model_t *model = NULL;
  EXPECT(nrt_load(neff, size / 2, -1, -1, &model) != NRT_SUCCESS); /* truncated */
  EXPECT(nrt_load(neff, size, 0, -1, &model) == NRT_SUCCESS);
  if (model != NULL) {
    check_model_info(model);
    check_tensors();
    check_execute(model);
    EXPECT(nrt_unload(model) == NRT_SUCCESS);
  }
  nrt_close();
  nrt_tensor_t *t = NULL;
  EXPECT(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 8, "late", &t) == NRT_CLOSED);
  free(neff);
  if (failures != 0) {
    fprintf(stderr, "core: %d check(s) failed\n", failures);
    return 1;
  }
  printf("ok core\n");
  return 0;
}
