// nrt/ndebug_stream.h over lib/runtime/debug_stream.h: argument checks, the
// vnc -> core mapping, and the payload handed to the caller in malloc'd
// memory (the header says the caller frees it).
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_format.h"
#include "lib/log/log.h"
#include "lib/nrt/api_state.h"
#include "lib/runtime/debug_stream.h"
#include "nrt/ndebug_stream.h"

using namespace neuron::nrt_api;  // NOLINT: the C API is this file's whole job
using neuron::runtime::DebugStream;

extern "C" {

NRT_STATUS nrt_debug_client_connect(int logical_nc_idx, int* stream_fd) {
  constexpr const char* kFn = "nrt_debug_client_connect";
  if (stream_fd == nullptr) return Fail(NRT_INVALID, absl::StrFormat("%s: null stream_fd", kFn));
  RuntimeRef rt(kFn);
  if (!rt.ok()) return rt.status();
  int core = 0;
  if (NRT_STATUS s = CoreOfVnc(kFn, *rt, logical_nc_idx, &core); s != NRT_SUCCESS) return s;
  absl::StatusOr<int> fd = DebugStream::Connect(core, rt->config().debug_stream_buffer_size);
  if (!fd.ok()) return Fail(kFn, fd.status());
  *stream_fd = *fd;
  return NRT_SUCCESS;
}

void nrt_debug_client_connect_close(int stream_fd) {
  std::shared_ptr<DebugStream> s = DebugStream::Close(stream_fd);
  if (s == nullptr || s->dropped() == 0) return;
  // Otherwise lost silently: say how many, and what would have kept them.
  NEURON_LOG(NRT, kWarn,
             "debug stream of nc%d: %d events dropped, %d delivered (more than "
             "NEURON_RT_DEBUG_STREAM_BUFFER_SIZE=%d were unread)",
             s->core(), s->dropped(), s->pushed(), s->capacity());
}

NRT_STATUS nrt_debug_client_read_one_event(int stream_fd, ndebug_stream_event_header_t* header,
                                           void** payload) {
  constexpr const char* kFn = "nrt_debug_client_read_one_event";
  if (header == nullptr || payload == nullptr) {
    return Fail(NRT_INVALID, absl::StrFormat("%s: null header or payload", kFn));
  }
  absl::StatusOr<std::optional<neuron::runtime::DebugEvent>> event = DebugStream::Read(stream_fd);
  if (!event.ok()) return Fail(kFn, event.status());
  if (!event->has_value()) {
    return Fail(NRT_FAILURE, absl::StrFormat("%s: no event waits on fd %d", kFn, stream_fd));
  }
  const neuron::runtime::DebugEvent& e = **event;
  void* bytes = std::malloc(e.payload.empty() ? 1 : e.payload.size());
  if (bytes == nullptr) return Fail(NRT_RESOURCE, absl::StrFormat("%s: out of memory", kFn));
  std::memcpy(bytes, e.payload.data(), e.payload.size());
  std::memset(header, 0, sizeof *header);
  header->data_size = e.payload.size();
  header->type = e.type;
  *payload = bytes;
  return NRT_SUCCESS;
}

}  // extern "C"
