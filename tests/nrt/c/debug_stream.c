/*
 * The debug stream through libnrt.so.1 and its public headers only:
 * connect to core 0's stream, run a model whose neuron.device_print step
 * emits one DEBUG_TENSOR_READ event per execution, poll the stream's fd,
 * read each event (freeing its payload, as the header asks) and close.
 *
 * argv[1]: a directory holding device_print.neff
 * (tests/nrt/c/models/device_print.hlo: input x f32[2,3], output y).
 * Prints "ok debug_stream (N events)" and exits 0, else what failed and
 * exits 1.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_test_util.h"
#include "nrt/ndebug_stream.h"
#include "nrt/nrt.h"

#define CHECK(cond, what)                                                              \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      fprintf(stderr, "debug_stream: %s: %s failed (last error: %s)\n", (what), #cond, \
              nrt_get_last_error());                                                   \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)

static int readable(int fd) {
  struct pollfd p;
  p.fd = fd;
  p.events = POLLIN;
  p.revents = 0;
  return poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

int main(int argc, char **argv) {
  size_t size = 0;
  char *neff;
  nrt_model_t *model = NULL;
  nrt_tensor_t *x = NULL, *y = NULL;
  nrt_tensor_set_t *in = NULL, *out = NULL;
  const float xs[6] = {1, 2, 3, 4, 5, 6};
  int fd = -1, events = 0, i;
  if (argc < 2) return 1;
  neff = read_model(argv[1], "device_print.neff", &size);
  if (neff == NULL) return 1;
  CHECK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "") == NRT_SUCCESS, "nrt_init");
  CHECK(nrt_load(neff, size, 0, -1, &model) == NRT_SUCCESS, "nrt_load");
  free(neff);
  CHECK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, sizeof xs, "x", &x) == NRT_SUCCESS, "x");
  CHECK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, sizeof xs, "y", &y) == NRT_SUCCESS, "y");
  CHECK(nrt_tensor_write(x, xs, 0, sizeof xs) == NRT_SUCCESS, "nrt_tensor_write");
  CHECK(nrt_allocate_tensor_set(&in) == NRT_SUCCESS && nrt_allocate_tensor_set(&out) == NRT_SUCCESS,
        "tensor sets");
  CHECK(nrt_add_tensor_to_tensor_set(in, "x", x) == NRT_SUCCESS, "add x");
  CHECK(nrt_add_tensor_to_tensor_set(out, "y", y) == NRT_SUCCESS, "add y");

  CHECK(nrt_debug_client_connect(0, &fd) == NRT_SUCCESS, "nrt_debug_client_connect");
  CHECK(!readable(fd), "nothing before an execution");
  for (i = 0; i < 2; ++i) CHECK(nrt_execute(model, in, out) == NRT_SUCCESS, "nrt_execute");
  while (readable(fd)) {
    ndebug_stream_event_header_t header;
    void *payload = NULL;
    const ndebug_stream_payload_debug_tensor_read_t *e;
    float last;
    CHECK(nrt_debug_client_read_one_event(fd, &header, &payload) == NRT_SUCCESS, "read one event");
    e = payload;
    CHECK(header.type == NDEBUG_STREAM_EVENT_TYPE_DEBUG_TENSOR_READ, "event type");
    CHECK(header.data_size == sizeof *e + sizeof xs, "event size");
    CHECK(strcmp(e->prefix, "x = ") == 0, "prefix");
    CHECK(e->tensor_shape[0] == 2 && e->tensor_shape[1] == 3 && e->tensor_shape[2] == 0, "shape");
    CHECK(e->tensor_data_size == sizeof xs, "data size");
    memcpy(&last, e->tensor_data + 5 * sizeof(float), sizeof last);
    CHECK(last == 6.0f, "data");
    free(payload);
    ++events;
  }
  CHECK(events == 2, "one event per execution");
  nrt_debug_client_connect_close(fd);

  nrt_destroy_tensor_set(&in);
  nrt_destroy_tensor_set(&out);
  nrt_tensor_free(&x);
  nrt_tensor_free(&y);
  CHECK(nrt_unload(model) == NRT_SUCCESS, "nrt_unload");
  nrt_close();
  printf("ok debug_stream (%d events)\n", events);
  return 0;
}
