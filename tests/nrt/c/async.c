/* The async API from C: tensor writes on two queues, an execution, reads,
 * sequence ids, completion handles polled with poll(2), an error tracker,
 * the async-exec callback and drain, and nrt_close with work queued.
 *
 * argv[1]: a directory holding add_mul.neff (tests/nrt/c/models/add_mul.hlo:
 * inputs a, b f32[2,3]; outputs sum, product). NEURON_SIM_ROOT is set.
 * Prints "ok async" and exits 0, or says what failed and exits 1. */
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "c_test_util.h"
#include "nrt/nrt.h"
#include "nrt/nrt_async.h"
#include "nrt/nrt_experimental.h"

static int failures = 0;

/* Evaluates `cond` once; on failure says where and why, and counts it. */
#define CHECK(cond, ...) check_at((cond) ? 1 : 0, __LINE__, __VA_ARGS__)

/* As CHECK, and returns 1 from main on failure. */
#define REQUIRE(cond, ...)                                          \
  do {                                                              \
    if (!check_at((cond) ? 1 : 0, __LINE__, __VA_ARGS__)) return 1; \
  } while (0)

static int check_at(int ok, int line, const char *format, ...) {
  va_list args;
  if (ok) return 1;
  fprintf(stderr, "async.c:%d: ", line);
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
  fprintf(stderr, " (last error: %s)\n", nrt_get_last_error());
  ++failures;
  return 0;
}

/* Waits (poll on the completion handle, 60 s at most) for `seq`. */
static int wait_for(nrta_seq_t seq) {
  int fd = -1;
  struct pollfd p;
  int n;
  if (nrta_get_completion_handle(seq, &fd) != NRT_SUCCESS) return 0;
  p.fd = fd;
  p.events = POLLIN;
  p.revents = 0;
  n = poll(&p, 1, 60000);
  close(fd);
  return n == 1 && (p.revents & POLLIN) != 0;
}

/* What the callback saw; read after nrt_async_drain_queued_execs, which
 * returns only once the callbacks it waited for have run. */
struct calls {
  int count;
  uint64_t job_ids[8];
  NRT_STATUS statuses[8];
  uint32_t vncs[8];
};

static void on_exec(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                    NRT_STATUS status) {
  struct calls *c = (struct calls *)params;
  (void)model_id;
  if (c->count < 8) {
    c->job_ids[c->count] = job_id;
    c->statuses[c->count] = status;
    c->vncs[c->count] = vnc;
  }
  ++c->count;
}

int main(int argc, char **argv) {
  char path[4096];
  size_t neff_size = 0;
  char *neff;
  nrt_model_t *model = NULL;
  nrt_tensor_t *a = NULL, *b = NULL, *sum = NULL, *product = NULL;
  nrt_tensor_set_t *ins = NULL, *outs = NULL;
  nrta_error_tracker_t *err = NULL;
  const nrta_error_t *list = NULL;
  size_t count = 99;
  const float av[6] = {1, 2, 3, 4, 5, 6};
  const float bv[6] = {0.5f, -1, 2, 10, 0, -3};
  float got_sum[6], got_product[6], late[6];
  nrta_seq_t wa = 0, wb = 0, ex = 0, rs = 0, rp = 0, last = 0, e1 = 0, e2 = 0;
  bool done = false;
  struct calls calls;
  int i;

  if (argc < 2) {
    fprintf(stderr, "usage: %s DIR (holding add_mul.neff)\n", argv[0]);
    return 1;
  }
  snprintf(path, sizeof path, "%s/add_mul.neff", argv[1]);
  neff = read_file(path, &neff_size);
  REQUIRE(neff != NULL, "cannot read %s", path);

  REQUIRE(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "") == NRT_SUCCESS, "nrt_init failed");
  REQUIRE(nrt_load(neff, neff_size, 0, -1, &model) == NRT_SUCCESS, "nrt_load failed");
  free(neff);
  REQUIRE(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 24, "a", &a) == NRT_SUCCESS &&
              nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 24, "b", &b) == NRT_SUCCESS &&
              nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 24, "sum", &sum) == NRT_SUCCESS &&
              nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 24, "product", &product) ==
                  NRT_SUCCESS,
          "tensor allocation failed");
  REQUIRE(
      nrt_allocate_tensor_set(&ins) == NRT_SUCCESS && nrt_allocate_tensor_set(&outs) == NRT_SUCCESS,
      "tensor set allocation failed");
  REQUIRE(nrt_add_tensor_to_tensor_set(ins, "a", a) == NRT_SUCCESS &&
              nrt_add_tensor_to_tensor_set(ins, "b", b) == NRT_SUCCESS &&
              nrt_add_tensor_to_tensor_set(outs, "output0", sum) == NRT_SUCCESS &&
              nrt_add_tensor_to_tensor_set(outs, "output1", product) == NRT_SUCCESS,
          "adding tensors to sets failed");
  REQUIRE(nrta_error_tracker_create(0, &err) == NRT_SUCCESS, "nrta_error_tracker_create failed");

  /* Inputs on two write queues; the execution once both are in. */
  REQUIRE(nrta_tensor_write(a, av, 0, sizeof av, 0, err, &wa) == NRT_SUCCESS,
          "write of a not scheduled");
  REQUIRE(nrta_tensor_write(b, bv, 0, sizeof bv, 1, err, &wb) == NRT_SUCCESS,
          "write of b not scheduled");
  CHECK(NRTA_SEQ_GET_SEQ_NUM(wa) == 1 && NRTA_SEQ_GET_SEQ_NUM(wb) == 1,
        "first sequence numbers are %llu and %llu, not 1",
        (unsigned long long)NRTA_SEQ_GET_SEQ_NUM(wa), (unsigned long long)NRTA_SEQ_GET_SEQ_NUM(wb));
  CHECK(NRTA_SEQ_GET_XU_ID(wa) != NRTA_SEQ_GET_XU_ID(wb), "two queues share an XU id");
  REQUIRE(wait_for(wa) && wait_for(wb), "writes did not complete");
  REQUIRE(nrta_execute_schedule(model, ins, outs, 0, err, &ex) == NRT_SUCCESS,
          "execution not scheduled");
  REQUIRE(wait_for(ex), "execution did not complete");
  REQUIRE(
      nrta_tensor_read(got_sum, sum, 0, sizeof got_sum, 0, err, &rs) == NRT_SUCCESS &&
          nrta_tensor_read(got_product, product, 0, sizeof got_product, 0, err, &rp) == NRT_SUCCESS,
      "reads not scheduled");
  CHECK(NRTA_SEQ_GET_SEQ_NUM(rp) == NRTA_SEQ_GET_SEQ_NUM(rs) + 1,
        "read sequence numbers not consecutive");
  REQUIRE(wait_for(rp), "reads did not complete");
  REQUIRE(nrta_is_completed(rs, &done) == NRT_SUCCESS, "nrta_is_completed failed");
  CHECK(done, "an earlier read of the same queue is not complete");
  for (i = 0; i < 6; ++i) {
    CHECK(got_sum[i] == av[i] + bv[i], "sum[%d] = %g, want %g", i, got_sum[i], av[i] + bv[i]);
    CHECK(got_product[i] == av[i] * bv[i], "product[%d] = %g, want %g", i, got_product[i],
          av[i] * bv[i]);
  }
  REQUIRE(nrta_get_sequence(0, NRTA_XU_TENSOR_READ, 0, &last) == NRT_SUCCESS,
          "nrta_get_sequence failed");
  CHECK(last == rp, "last read sequence 0x%llx, want 0x%llx", (unsigned long long)last,
        (unsigned long long)rp);
  REQUIRE(nrta_get_sequence(0, NRTA_XU_COLLECTIVES, 0, &last) == NRT_SUCCESS,
          "nrta_get_sequence failed");
  CHECK(NRTA_SEQ_GET_SEQ_NUM(last) == 0, "an unused unit reports a finished request");

  /* Wrong queues, unknown sequence ids. */
  CHECK(nrta_execute_schedule(model, ins, outs, 1, err, &e1) == NRT_INVALID,
        "COMPUTE queue 1 accepted");
  CHECK(nrta_tensor_write(a, av, 0, sizeof av, 99, err, &e1) == NRT_INVALID,
        "write queue 99 accepted");
  CHECK(nrta_tensor_read(got_sum, sum, 8, sizeof got_sum, 0, err, &e1) == NRT_INVALID,
        "read past the end accepted");
  CHECK(nrta_is_completed(rp + 1, &done) == NRT_INVALID, "a future sequence id accepted");

  /* The callback fires per execution; drain waits for them. */
  memset(&calls, 0, sizeof calls);
  REQUIRE(nrt_register_async_exec_callback(on_exec, &calls) == NRT_SUCCESS,
          "callback not registered");
  REQUIRE(nrta_execute_schedule(model, ins, outs, 0, err, &e1) == NRT_SUCCESS &&
              nrta_execute_schedule(model, ins, outs, 0, err, &e2) == NRT_SUCCESS,
          "executions not scheduled");
  REQUIRE(nrt_async_drain_queued_execs(0) == NRT_SUCCESS, "drain failed");
  REQUIRE(nrta_is_completed(e2, &done) == NRT_SUCCESS, "nrta_is_completed failed");
  CHECK(done, "drain returned before the executions completed");
  CHECK(calls.count == 2, "callback ran %d times, want 2", calls.count);
  if (calls.count == 2) {
    CHECK(calls.job_ids[0] == e1 && calls.job_ids[1] == e2,
          "callback job ids are not the sequence ids");
    CHECK(calls.statuses[0] == NRT_SUCCESS && calls.statuses[1] == NRT_SUCCESS,
          "callback statuses not success");
    CHECK(calls.vncs[0] == 0 && calls.vncs[1] == 0, "callback vnc not 0");
  }
  REQUIRE(nrt_register_async_exec_callback(NULL, NULL) == NRT_SUCCESS, "callback not cleared");

  REQUIRE(nrta_error_tracker_get_list(err, &list, &count) == NRT_SUCCESS, "get_list failed");
  CHECK(count == 0, "%zu requests failed", count);

  /* nrt_close with requests queued runs them before it returns. */
  memset(late, 0, sizeof late);
  for (i = 0; i < 5; ++i) {
    REQUIRE(nrta_execute_schedule(model, ins, outs, 0, err, NULL) == NRT_SUCCESS,
            "execution %d not scheduled", i);
  }
  REQUIRE(nrta_tensor_read(late, product, 0, sizeof late, 1, err, NULL) == NRT_SUCCESS,
          "late read not scheduled");
  nrt_close();
  CHECK(late[5] == av[5] * bv[5], "the read queued before nrt_close did not run (got %g)", late[5]);
  REQUIRE(nrta_error_tracker_get_list(err, &list, &count) == NRT_SUCCESS,
          "get_list after close failed");
  CHECK(count == 0, "%zu requests failed around nrt_close", count);
  CHECK(nrta_get_sequence(0, NRTA_XU_COMPUTE, 0, &last) == NRT_CLOSED,
        "nrta_get_sequence after close");
  nrta_error_tracker_destroy(err);

  nrt_destroy_tensor_set(&ins);
  nrt_destroy_tensor_set(&outs);
  nrt_tensor_free(&a);
  nrt_tensor_free(&b);
  nrt_tensor_free(&sum);
  nrt_tensor_free(&product);
  nrt_unload(model);

  if (failures != 0) {
    fprintf(stderr, "async: %d check(s) failed\n", failures);
    return 1;
  }
  printf("ok async\n");
  return 0;
}
