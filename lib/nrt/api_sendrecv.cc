// Async point-to-point tensor transfer (nrt/nrt_async_sendrecv.h): argument
// and tensor checks over the TCP engine in lib/collectives/point_to_point.h,
// which owns the protocol, the progress thread and the handles' lifetime.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "lib/collectives/communicator.h"
#include "lib/collectives/net.h"
#include "lib/collectives/point_to_point.h"
#include "lib/nrt/api_state.h"
#include "nrt/nrt_async_sendrecv.h"

// The opaque handles are the engine's own objects: it allocates, frees and
// validates them, so a stale handle is refused without being read.
struct nrt_async_sendrecv_comm : neuron::collectives::p2p::Comm {};
struct nrt_async_sendrecv_request : neuron::collectives::p2p::Request {};

namespace p2p = neuron::collectives::p2p;

namespace neuron::nrt_api {
namespace {

NRT_STATUS NewComm(const char* function, const char* peer_ip, int peer_lnc, int lnc, bool send,
                   nrt_async_sendrecv_comm_t** out) {
  if (out == nullptr) return Fail(NRT_INVALID, absl::StrFormat("%s: null communicator pointer", function));
  *out = nullptr;
  if (peer_ip == nullptr) return Fail(NRT_INVALID, absl::StrFormat("%s: null peer address", function));
  auto handle = std::make_unique<nrt_async_sendrecv_comm>();
  absl::StatusOr<p2p::Comm*> comm = send ? p2p::Connect(peer_ip, peer_lnc, lnc, std::move(handle))
                                         : p2p::Accept(peer_ip, peer_lnc, lnc, std::move(handle));
  if (!comm.ok()) return FailCollectives(function, comm.status());
  *out = static_cast<nrt_async_sendrecv_comm*>(*comm);
  return NRT_SUCCESS;
}

NRT_STATUS Post(const char* function, nrt_tensor_t* tensor, size_t offset, size_t length,
                nrt_async_sendrecv_comm_t* comm, bool send, nrt_async_sendrecv_request_t** out) {
  if (out == nullptr) return Fail(NRT_INVALID, absl::StrFormat("%s: null request pointer", function));
  *out = nullptr;
  if (tensor == nullptr) return Fail(NRT_INVALID_HANDLE, absl::StrFormat("%s: null tensor", function));
  if (comm == nullptr) return Fail(NRT_INVALID_HANDLE, absl::StrFormat("%s: null communicator", function));
  runtime::TensorBuffer* buffer = tensor->buffer();
  if (buffer == nullptr) {
    return Fail(NRT_INVALID,
                absl::StrFormat("%s: tensor '%s' has no storage", function, tensor->name));
  }
  if (offset > buffer->size() || length > buffer->size() - offset) {
    return Fail(NRT_INVALID, absl::StrFormat("%s: %d bytes at offset %d is outside tensor '%s' (%d bytes)",
                                             function, length, offset, tensor->name, buffer->size()));
  }
  char* data = static_cast<char*>(buffer->data()) + offset;
  auto handle = std::make_unique<nrt_async_sendrecv_request>();
  absl::StatusOr<p2p::Request*> request = send ? p2p::Send(comm, data, length, std::move(handle))
                                                : p2p::Recv(comm, data, length, std::move(handle));
  if (!request.ok()) return FailCollectives(function, request.status());
  *out = static_cast<nrt_async_sendrecv_request*>(*request);
  return NRT_SUCCESS;
}

}  // namespace

void ShutdownSendRecv() { p2p::Shutdown(); }

}  // namespace neuron::nrt_api

using namespace neuron::nrt_api;  // NOLINT: the C API is this file's whole job

extern "C" {

NRT_STATUS nrt_async_sendrecv_get_max_num_communicators_per_lnc(int* num) {
  if (num == nullptr) {
    return Fail(NRT_INVALID, "nrt_async_sendrecv_get_max_num_communicators_per_lnc: null pointer");
  }
  *num = p2p::kMaxCommunicatorsPerLnc;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_async_sendrecv_get_max_num_pending_request(int* num) {
  if (num == nullptr) {
    return Fail(NRT_INVALID, "nrt_async_sendrecv_get_max_num_pending_request: null pointer");
  }
  *num = p2p::kMaxPendingRequests;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_async_sendrecv_init(int lnc) {
  static constexpr const char* kFn = "nrt_async_sendrecv_init";
  int base = 0;  // the engine's default
  std::chrono::seconds timeout{30};
  {
    RuntimeRef rt(kFn);
    if (!rt.ok()) return rt.status();
    const neuron::config::RuntimeConfig& config = rt->config();
    if (!config.async_sendrecv_experimental) {
      return Fail(NRT_FAILURE, "nrt_async_sendrecv_init: async send/recv is experimental; set "
                               "NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED=1 to use it");
    }
    if (absl::StatusOr<neuron::runtime::Core*> core = rt->GetCore(lnc); !core.ok()) {
      return Fail(kFn, core.status());
    }
    base = static_cast<int>(config.async_sendrecv_bootstrap_port);
    // Bounded before it becomes a duration: seconds past int64 would wrap.
    timeout = std::chrono::seconds(
        std::clamp<uint64_t>(config.exec_timeout_s, 1, neuron::collectives::net::kMaxTimeoutSeconds));
  }
  absl::Status st = p2p::Init(lnc, base, timeout);
  return st.ok() ? NRT_SUCCESS : FailCollectives(kFn, st);
}

NRT_STATUS nrt_async_sendrecv_close(int lnc) {
  absl::Status st = p2p::Close(lnc);
  return st.ok() ? NRT_SUCCESS : FailCollectives("nrt_async_sendrecv_close", st);
}

NRT_STATUS nrt_async_sendrecv_connect(const char* peer_ip, int peer_lnc, int lnc,
                                      nrt_async_sendrecv_comm_t** send_comm) {
  return NewComm("nrt_async_sendrecv_connect", peer_ip, peer_lnc, lnc, /*send=*/true, send_comm);
}

NRT_STATUS nrt_async_sendrecv_accept(const char* peer_ip, int peer_lnc, int lnc,
                                     nrt_async_sendrecv_comm_t** recv_comm) {
  return NewComm("nrt_async_sendrecv_accept", peer_ip, peer_lnc, lnc, /*send=*/false, recv_comm);
}

NRT_STATUS nrt_async_sendrecv_test_comm(nrt_async_sendrecv_comm_t* comm, bool* done) {
  static constexpr const char* kFn = "nrt_async_sendrecv_test_comm";
  if (done == nullptr) return Fail(NRT_INVALID, "nrt_async_sendrecv_test_comm: null result pointer");
  *done = false;
  absl::StatusOr<bool> connected = p2p::IsConnected(comm);
  if (!connected.ok()) return FailCollectives(kFn, connected.status());
  *done = *connected;
  return NRT_SUCCESS;
}

NRT_STATUS nrt_async_sendrecv_send_tensor(nrt_tensor_t* tensor, size_t offset, size_t length,
                                          nrt_async_sendrecv_comm_t* send_comm,
                                          nrt_async_sendrecv_request_t** request) {
  return Post("nrt_async_sendrecv_send_tensor", tensor, offset, length, send_comm, /*send=*/true,
              request);
}

NRT_STATUS nrt_async_sendrecv_recv_tensor(nrt_tensor_t* tensor, size_t offset, size_t length,
                                          nrt_async_sendrecv_comm_t* recv_comm,
                                          nrt_async_sendrecv_request_t** request) {
  return Post("nrt_async_sendrecv_recv_tensor", tensor, offset, length, recv_comm, /*send=*/false,
              request);
}

// A finished request is freed here, failed or not; a failure returns its
// status with the reason.
NRT_STATUS nrt_async_sendrecv_test_request(nrt_async_sendrecv_request_t* request, bool* done,
                                           size_t* size) {
  static constexpr const char* kFn = "nrt_async_sendrecv_test_request";
  if (done == nullptr) return Fail(NRT_INVALID, "nrt_async_sendrecv_test_request: null result pointer");
  *done = false;
  absl::StatusOr<p2p::Completion> c = p2p::Test(request);
  if (!c.ok()) return FailCollectives(kFn, c.status());
  if (!c->done) return NRT_SUCCESS;
  *done = true;
  if (size != nullptr) *size = c->bytes;
  return c->status.ok() ? NRT_SUCCESS : FailCollectives(kFn, c->status);
}

NRT_STATUS nrt_async_sendrecv_flush(int lnc) {
  absl::Status st = p2p::Flush(lnc);
  return st.ok() ? NRT_SUCCESS : FailCollectives("nrt_async_sendrecv_flush", st);
}

}  // extern "C"
