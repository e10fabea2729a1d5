/*
 * neuron-tools runtime: one operation of a batched tensor read or write
 * (nrt_tensor_read_batch / nrt_tensor_write_batch). Shared with the driver
 * interface in the SDK, hence its own header and the kernel-type branch.
 */
#ifndef NEURON_DRIVER_SHARED_TENSOR_BATCH_OP_H
#define NEURON_DRIVER_SHARED_TENSOR_BATCH_OP_H

#ifdef __KERNEL__
#include <linux/types.h>
typedef __u64 nrt_tensor_batch_offset_t;
typedef __u64 nrt_tensor_batch_size_t;
#else
#include <stdint.h>
typedef uint64_t nrt_tensor_batch_offset_t;
typedef uint64_t nrt_tensor_batch_size_t;
#endif

typedef struct nrt_tensor_batch_op {
  nrt_tensor_batch_offset_t offset; /* byte offset into the tensor */
  nrt_tensor_batch_size_t size;     /* bytes to move */
  void *buffer;                     /* host memory read from or written to */
} nrt_tensor_batch_op_t;

#endif /* NEURON_DRIVER_SHARED_TENSOR_BATCH_OP_H */
