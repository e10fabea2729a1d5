/*
 * neuron-tools runtime: asynchronous point-to-point tensor transfer between
 * logical cores, on this host or another (TCP between the peers' addresses;
 * NEURON_RT_ASYNC_SENDRECV_* set its limits and bootstrap port).
 */
#ifndef NRT_NRT_ASYNC_SENDRECV_H_
#define NRT_NRT_ASYNC_SENDRECV_H_

#include <stdbool.h>
#include <stddef.h>

#include "nrt/nrt.h"
#include "nrt/nrt_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nrt_async_sendrecv_comm nrt_async_sendrecv_comm_t;
typedef struct nrt_async_sendrecv_request nrt_async_sendrecv_request_t;

/* Communicators allowed per logical core. */
NRT_STATUS nrt_async_sendrecv_get_max_num_communicators_per_lnc(int *num);
/* Requests allowed in flight per communicator. */
NRT_STATUS nrt_async_sendrecv_get_max_num_pending_request(int *num);

/* Starts send/recv on logical core `lnc` (after nrt_init); pair it with
 * nrt_async_sendrecv_close before nrt_close. */
NRT_STATUS nrt_async_sendrecv_init(int lnc);
/* Ends it; fails if a communicator is unconnected or a request in flight. */
NRT_STATUS nrt_async_sendrecv_close(int lnc);

/* A send communicator from `lnc` to `peer_lnc` at `peer_ip`, and the
 * matching receive side. Both return at once; nrt_async_sendrecv_test_comm
 * says when the connection is up. NRT_RESOURCE past the limit. */
NRT_STATUS nrt_async_sendrecv_connect(const char *peer_ip, int peer_lnc, int lnc,
                                      nrt_async_sendrecv_comm_t **send_comm);
NRT_STATUS nrt_async_sendrecv_accept(const char *peer_ip, int peer_lnc, int lnc,
                                     nrt_async_sendrecv_comm_t **recv_comm);

/* *done becomes true once connected; NRT_TIMEOUT if that took too long. */
NRT_STATUS nrt_async_sendrecv_test_comm(nrt_async_sendrecv_comm_t *comm, bool *done);

/* Start sending / receiving `length` bytes of `tensor` at `offset`;
 * non-blocking. NRT_RESOURCE when too many requests are in flight. */
NRT_STATUS nrt_async_sendrecv_send_tensor(nrt_tensor_t *tensor, size_t offset, size_t length,
                                          nrt_async_sendrecv_comm_t *send_comm,
                                          nrt_async_sendrecv_request_t **request);
NRT_STATUS nrt_async_sendrecv_recv_tensor(nrt_tensor_t *tensor, size_t offset, size_t length,
                                          nrt_async_sendrecv_comm_t *recv_comm,
                                          nrt_async_sendrecv_request_t **request);

/* *done becomes true when the request has finished, with *size the bytes
 * moved; the request is freed then and must not be tested again. */
NRT_STATUS nrt_async_sendrecv_test_request(nrt_async_sendrecv_request_t *request, bool *done, size_t *size);

/* Makes received data of finished requests visible in memory. */
NRT_STATUS nrt_async_sendrecv_flush(int lnc);

#ifdef __cplusplus
}
#endif

#endif /* NRT_NRT_ASYNC_SENDRECV_H_ */
