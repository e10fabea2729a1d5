/*
 * Collectives and async send/recv through the public headers only: two
 * ranks forked here, each holding its own core, rendezvous through
 * NEURON_RT_ROOT_COMM_ID=127.0.0.1:PORT (PORT from argv[2], else a fixed
 * default; send/recv listens on PORT+2 and PORT+3).
 *
 * Each rank: builds the global communicator, barrier, all-gather of host
 * buffers, the all-reduce NEFF (models/allreduce.neff) loaded with
 * nrt_load_collectives, an all-reduce prepared with nrta_cc_prepare and
 * run by nrta_cc_schedule, and 64 KiB sent from rank 0 to rank 1.
 *
 * usage: collectives MODELS_DIR [PORT]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "c_test_util.h"
#include "nrt/nrt.h"
#include "nrt/nrt_async.h"
#include "nrt/nrt_async_sendrecv.h"
#include "nrt/nrt_experimental.h"

#define DEFAULT_PORT 46231
#define SENDRECV_BYTES (64 * 1024)

static int g_rank = -1;

#define CHECK(cond)                                                                          \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      fprintf(stderr, "rank %d: line %d: %s failed (%s)\n", g_rank, __LINE__, #cond,        \
              nrt_get_last_error());                                                         \
      return 1;                                                                              \
    }                                                                                        \
  } while (0)

static void sleep_ms(long ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&ts, NULL);
}

/* Seconds since some fixed point, for the give-up limits (never a pass
 * criterion). */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run_neff(int rank, const char* models) {
  char path[4096];
  size_t size = 0;
  void* neff;
  nrt_model_t* model = NULL;
  nrt_tensor_info_array_t* info = NULL;
  nrt_tensor_t *x = NULL, *sum = NULL;
  nrt_tensor_set_t *ins = NULL, *outs = NULL;
  float xs[4], got[4];
  int i;
  NRT_STATUS s;

  snprintf(path, sizeof path, "%s/allreduce.neff", models);
  neff = read_file(path, &size);
  CHECK(neff != NULL);
  s = nrt_load_collectives(neff, size, 0, -1, (uint32_t)rank, 2, &model);
  free(neff);
  CHECK(s == NRT_SUCCESS);
  CHECK(nrt_get_model_tensor_info(model, &info) == NRT_SUCCESS);
  CHECK(info->tensor_count == 2);
  CHECK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 16, "x", &x) == NRT_SUCCESS);
  CHECK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 16, "sum", &sum) == NRT_SUCCESS);
  for (i = 0; i < 4; ++i) xs[i] = rank == 0 ? (float)i : (float)(100 * (i + 1));
  CHECK(nrt_tensor_write(x, xs, 0, sizeof xs) == NRT_SUCCESS);
  CHECK(nrt_allocate_tensor_set(&ins) == NRT_SUCCESS);
  CHECK(nrt_allocate_tensor_set(&outs) == NRT_SUCCESS);
  CHECK(nrt_add_tensor_to_tensor_set(ins, info->tensor_array[0].name, x) == NRT_SUCCESS);
  CHECK(nrt_add_tensor_to_tensor_set(outs, info->tensor_array[1].name, sum) == NRT_SUCCESS);
  nrt_free_model_tensor_info(info);
  CHECK(nrt_execute(model, ins, outs) == NRT_SUCCESS);
  CHECK(nrt_tensor_read(sum, got, 0, sizeof got) == NRT_SUCCESS);
  for (i = 0; i < 4; ++i) CHECK(got[i] == (float)(i + 100 * (i + 1)));
  nrt_destroy_tensor_set(&ins);
  nrt_destroy_tensor_set(&outs);
  nrt_tensor_free(&x);
  nrt_tensor_free(&sum);
  CHECK(nrt_unload(model) == NRT_SUCCESS);
  return 0;
}

static int run_prepared(int rank) {
  uint32_t group[2] = {0, 1};
  nrt_cc_comm_t comm;
  nrt_tensor_t *in = NULL, *out = NULL;
  nrt_tensor_list_t in_list, out_list;
  nrt_cc_context_t* ctx = NULL;
  nrta_error_tracker_t* tracker = NULL;
  const nrta_error_t* errors = NULL;
  size_t error_count = 0;
  nrta_seq_t seq = 0;
  bool done = false;
  int32_t values[5], got[5];
  double limit;
  int i;

  comm.replica_group = group;
  comm.rank = (uint32_t)rank;
  comm.rank_n = 2;
  comm.ctx_device_id = (uint32_t)rank;
  comm.ctx_device_count = 2;
  comm.vnc = 0; /* each rank holds one core: its vnc 0 */
  CHECK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, sizeof values, "in", &in) == NRT_SUCCESS);
  CHECK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, -1, sizeof values, "out", &out) == NRT_SUCCESS);
  for (i = 0; i < 5; ++i) values[i] = rank == 0 ? i - 2 : 7 * i;
  CHECK(nrt_tensor_write(in, values, 0, sizeof values) == NRT_SUCCESS);
  in_list.tensors = &in;
  in_list.num_tensors = 1;
  out_list.tensors = &out;
  out_list.num_tensors = 1;
  CHECK(nrta_cc_prepare(&comm, &in_list, &out_list, NRT_DTYPE_INT32, NRT_OP_FMA, NRT_CC_ALLREDUCE,
                        &ctx) == NRT_INVALID);
  CHECK(nrta_cc_prepare(&comm, &in_list, &out_list, NRT_DTYPE_INT32, NRT_OP_MAX, NRT_CC_ALLREDUCE,
                        &ctx) == NRT_SUCCESS);
  CHECK(nrta_error_tracker_create(0, &tracker) == NRT_SUCCESS);
  CHECK(nrta_cc_schedule(&ctx, 0, tracker, &seq) == NRT_SUCCESS);
  CHECK(ctx == NULL);
  limit = now_s() + 60;
  while (!done) {
    CHECK(nrta_is_completed(seq, &done) == NRT_SUCCESS);
    CHECK(now_s() < limit);
    if (!done) sleep_ms(1);
  }
  CHECK(nrta_error_tracker_get_list(tracker, &errors, &error_count) == NRT_SUCCESS);
  CHECK(error_count == 0);
  CHECK(nrt_tensor_read(out, got, 0, sizeof got) == NRT_SUCCESS);
  for (i = 0; i < 5; ++i) CHECK(got[i] == 7 * i);
  nrta_error_tracker_destroy(tracker);
  nrt_tensor_free(&in);
  nrt_tensor_free(&out);
  return 0;
}

static int run_sendrecv(int rank) {
  nrt_async_sendrecv_comm_t* comm = NULL;
  nrt_async_sendrecv_request_t* req = NULL;
  nrt_tensor_t* t = NULL;
  unsigned char* bytes = malloc(SENDRECV_BYTES);
  bool done = false;
  size_t moved = 0;
  double limit;
  int i, max_comms = 0, max_pending = 0;

  CHECK(bytes != NULL);
  CHECK(nrt_async_sendrecv_get_max_num_communicators_per_lnc(&max_comms) == NRT_SUCCESS && max_comms > 0);
  CHECK(nrt_async_sendrecv_get_max_num_pending_request(&max_pending) == NRT_SUCCESS && max_pending > 0);
  CHECK(nrt_async_sendrecv_init(rank) == NRT_SUCCESS);
  if (rank == 0) {
    CHECK(nrt_async_sendrecv_connect("127.0.0.1", 1, 0, &comm) == NRT_SUCCESS);
  } else {
    CHECK(nrt_async_sendrecv_accept("127.0.0.1", 0, 1, &comm) == NRT_SUCCESS);
  }
  limit = now_s() + 60;
  while (!done) {
    CHECK(nrt_async_sendrecv_test_comm(comm, &done) == NRT_SUCCESS);
    CHECK(now_s() < limit);
    if (!done) sleep_ms(1);
  }
  CHECK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, -1, SENDRECV_BYTES, "sr", &t) == NRT_SUCCESS);
  for (i = 0; i < SENDRECV_BYTES; ++i) bytes[i] = (unsigned char)(i * 31 + (i >> 8));
  if (rank == 0) {
    CHECK(nrt_tensor_write(t, bytes, 0, SENDRECV_BYTES) == NRT_SUCCESS);
    CHECK(nrt_async_sendrecv_send_tensor(t, 0, SENDRECV_BYTES, comm, &req) == NRT_SUCCESS);
  } else {
    CHECK(nrt_async_sendrecv_recv_tensor(t, 0, SENDRECV_BYTES, comm, &req) == NRT_SUCCESS);
  }
  done = false;
  limit = now_s() + 60;
  while (!done) {
    CHECK(nrt_async_sendrecv_test_request(req, &done, &moved) == NRT_SUCCESS);
    CHECK(now_s() < limit);
    if (!done) sleep_ms(1);
  }
  CHECK(moved == SENDRECV_BYTES);
  if (rank == 1) {
    unsigned char* got = malloc(SENDRECV_BYTES);
    int same;
    CHECK(got != NULL);
    CHECK(nrt_async_sendrecv_flush(1) == NRT_SUCCESS);
    CHECK(nrt_tensor_read(t, got, 0, SENDRECV_BYTES) == NRT_SUCCESS);
    same = memcmp(got, bytes, SENDRECV_BYTES) == 0;
    free(got);
    CHECK(same);
  }
  /* Both sides done before either closes its core. */
  CHECK(nrt_barrier(0, (uint32_t)rank, 2) == NRT_SUCCESS);
  CHECK(nrt_async_sendrecv_close(rank) == NRT_SUCCESS);
  nrt_tensor_free(&t);
  free(bytes);
  return 0;
}

static int run_rank(int rank, const char* models) {
  uint8_t in[24], out[48];
  int i, r;

  g_rank = rank;
  CHECK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "") == NRT_SUCCESS);
  CHECK(nrt_build_global_comm(0, (uint32_t)rank, 2) == NRT_SUCCESS);
  CHECK(nrt_build_global_comm(0, (uint32_t)rank, 3) == NRT_INVALID);
  CHECK(nrt_barrier(0, (uint32_t)rank, 2) == NRT_SUCCESS);
  for (i = 0; i < 24; ++i) in[i] = (uint8_t)(rank * 50 + i);
  memset(out, 0, sizeof out);
  CHECK(nrt_all_gather(0, (uint32_t)rank, 2, sizeof in, in, out) == NRT_SUCCESS);
  for (r = 0; r < 2; ++r) {
    for (i = 0; i < 24; ++i) CHECK(out[r * 24 + i] == (uint8_t)(r * 50 + i));
  }
  if (run_neff(rank, models) != 0) return 1;
  if (run_prepared(rank) != 0) return 1;
  if (run_sendrecv(rank) != 0) return 1;
  nrt_close();
  return 0;
}

int main(int argc, char** argv) {
  char text[64];
  pid_t pids[2];
  int codes[2] = {-1, -1};
  int port = DEFAULT_PORT, left = 2, rank, ok = 1;
  double limit;

  if (argc < 2) {
    fprintf(stderr, "usage: %s MODELS_DIR [PORT]\n", argv[0]);
    return 1;
  }
  if (argc > 2) port = atoi(argv[2]);
  if (port <= 0 || port > 65532) {
    fprintf(stderr, "bad port '%s'\n", argv[2]);
    return 1;
  }
  snprintf(text, sizeof text, "127.0.0.1:%d", port);
  setenv("NEURON_RT_ROOT_COMM_ID", text, 1);
  snprintf(text, sizeof text, "%d", port + 2);
  setenv("NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT", text, 1);
  setenv("NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED", "1", 1);
  fflush(stdout);
  fflush(stderr);
  for (rank = 0; rank < 2; ++rank) {
    pids[rank] = fork();
    if (pids[rank] < 0) {
      perror("fork");
      if (rank == 1) {
        kill(pids[0], SIGKILL);
        waitpid(pids[0], NULL, 0);
      }
      return 1;
    }
    if (pids[rank] == 0) {
      snprintf(text, sizeof text, "%d", rank);
      setenv("NEURON_RT_VISIBLE_CORES", text, 1);
      fflush(stderr);
      _exit(run_rank(rank, argv[1]));
    }
  }
  /* Reap both; a rank that hangs is killed, never left behind. */
  limit = now_s() + 120;
  while (left > 0) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      for (rank = 0; rank < 2; ++rank) {
        if (pids[rank] == pid) {
          codes[rank] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
          --left;
        }
      }
      continue;
    }
    if (pid < 0 || now_s() > limit) {
      for (rank = 0; rank < 2; ++rank) {
        if (codes[rank] == -1) {
          fprintf(stderr, "rank %d did not finish in time: killed\n", rank);
          kill(pids[rank], SIGKILL);
          waitpid(pids[rank], NULL, 0);
        }
      }
      break;
    }
    sleep_ms(5);
  }
  for (rank = 0; rank < 2; ++rank) {
    if (codes[rank] != 0) {
      printf("rank %d failed (exit %d)\n", rank, codes[rank]);
      ok = 0;
    }
  }
  if (!ok) return 1;
  printf("ok collectives\n");
  return 0;
}
