/* ABI check: sizes and field offsets of the public structs, and the values
 * of every public enum constant, as the Neuron SDK's headers define them on
 * x86-64 (recorded from those headers). A program compiled against the
 * SDK's headers passes these structs and values to our library, so any
 * difference here is a broken drop-in. Compiled against our installed
 * headers only. */
#include <stddef.h>
#include <stdio.h>

#include "nrt/ndebug_stream.h"
#include "nrt/nrt.h"
#include "nrt/nrt_async.h"
#include "nrt/nrt_async_sendrecv.h"
#include "nrt/nrt_experimental.h"
#include "nrt/nrt_profile.h"
#include "nrt/nrt_status.h"
#include "nrt/nrt_sys_trace.h"
#include "nrt/nrt_version.h"

static int failures = 0;
static int checks = 0;

#define CHECK(cond)                                  \
  do {                                               \
    ++checks;                                        \
    if (!(cond)) {                                   \
      ++failures;                                    \
      fprintf(stderr, "abi: not as in the SDK: %s\n", #cond); \
    }                                                \
  } while (0)

static void check_layouts(void) {
  CHECK(sizeof(nrt_instance_info_t) == 32);
  CHECK(offsetof(nrt_instance_info_t, family) == 0);
  CHECK(offsetof(nrt_instance_info_t, size) == 4);
  CHECK(offsetof(nrt_instance_info_t, arch_name) == 8);
  CHECK(offsetof(nrt_instance_info_t, device_revision) == 24);
  CHECK(sizeof(nrt_tensor_batch_op_t) == 24);
  CHECK(offsetof(nrt_tensor_batch_op_t, offset) == 0);
  CHECK(offsetof(nrt_tensor_batch_op_t, size) == 8);
  CHECK(offsetof(nrt_tensor_batch_op_t, buffer) == 16);
  CHECK(sizeof(nrt_tensor_batch_t) == 24);
  CHECK(offsetof(nrt_tensor_batch_t, tensor) == 0);
  CHECK(offsetof(nrt_tensor_batch_t, ops) == 8);
  CHECK(offsetof(nrt_tensor_batch_t, num_ops) == 16);
  CHECK(sizeof(nrt_tensor_device_allocation_info_t) == 24);
  CHECK(offsetof(nrt_tensor_device_allocation_info_t, physical_address) == 0);
  CHECK(offsetof(nrt_tensor_device_allocation_info_t, size) == 8);
  CHECK(offsetof(nrt_tensor_device_allocation_info_t, hbm_index) == 16);
  CHECK(sizeof(nrt_vnc_memory_stats_t) == 16);
  CHECK(offsetof(nrt_vnc_memory_stats_t, bytes_used) == 0);
  CHECK(offsetof(nrt_vnc_memory_stats_t, bytes_limit) == 8);
  CHECK(sizeof(nrt_cc_comm_t) == 32);
  CHECK(offsetof(nrt_cc_comm_t, replica_group) == 0);
  CHECK(offsetof(nrt_cc_comm_t, rank) == 8);
  CHECK(offsetof(nrt_cc_comm_t, rank_n) == 12);
  CHECK(offsetof(nrt_cc_comm_t, ctx_device_id) == 16);
  CHECK(offsetof(nrt_cc_comm_t, ctx_device_count) == 20);
  CHECK(offsetof(nrt_cc_comm_t, vnc) == 24);
  CHECK(sizeof(nrt_tensor_list_t) == 16);
  CHECK(offsetof(nrt_tensor_list_t, tensors) == 0);
  CHECK(offsetof(nrt_tensor_list_t, num_tensors) == 8);
  CHECK(sizeof(nrt_tensor_info_t) == 296);
  CHECK(offsetof(nrt_tensor_info_t, name) == 0);
  CHECK(offsetof(nrt_tensor_info_t, usage) == 256);
  CHECK(offsetof(nrt_tensor_info_t, size) == 264);
  CHECK(offsetof(nrt_tensor_info_t, dtype) == 272);
  CHECK(offsetof(nrt_tensor_info_t, shape) == 280);
  CHECK(offsetof(nrt_tensor_info_t, ndim) == 288);
  CHECK(sizeof(nrt_tensor_info_array_t) == 8);
  CHECK(offsetof(nrt_tensor_info_array_t, tensor_count) == 0);
  CHECK(offsetof(nrt_tensor_info_array_t, tensor_array) == 8);
  CHECK(sizeof(nrt_ucode_img) == 16);
  CHECK(offsetof(nrt_ucode_img, bin) == 0);
  CHECK(offsetof(nrt_ucode_img, size) == 8);
  CHECK(sizeof(nrt_ucode_info) == 32);
  CHECK(offsetof(nrt_ucode_info, iram) == 0);
  CHECK(offsetof(nrt_ucode_info, dram) == 16);
  CHECK(sizeof(nrt_model_info_t) == 4);
  CHECK(offsetof(nrt_model_info_t, vnc) == 0);
  CHECK(sizeof(nrt_version_t) == 224);
  CHECK(offsetof(nrt_version_t, rt_major) == 0);
  CHECK(offsetof(nrt_version_t, rt_minor) == 8);
  CHECK(offsetof(nrt_version_t, rt_patch) == 16);
  CHECK(offsetof(nrt_version_t, rt_maintenance) == 24);
  CHECK(offsetof(nrt_version_t, rt_detail) == 32);
  CHECK(offsetof(nrt_version_t, git_hash) == 160);
  CHECK(sizeof(nrta_error_t) == 16);
  CHECK(offsetof(nrta_error_t, seq_id) == 0);
  CHECK(offsetof(nrta_error_t, error_code) == 8);
  CHECK(sizeof(nrta_seq_t) == 8);
  CHECK(sizeof(nrta_xu_id_t) == 2);
  CHECK(sizeof(NRT_STATUS) == 4);
  CHECK(sizeof(nrt_dtype_t) == 4);
  CHECK(sizeof(nrt_tensor_placement_t) == 4);
  CHECK(sizeof(nrt_framework_type_t) == 4);
  CHECK(sizeof(ndebug_stream_event_header_t) == 64);
  CHECK(offsetof(ndebug_stream_event_header_t, data_size) == 0);
  CHECK(offsetof(ndebug_stream_event_header_t, type) == 8);
  CHECK(offsetof(ndebug_stream_event_header_t, reserved) == 12);
  CHECK(sizeof(ndebug_stream_payload_debug_tensor_read_t) == 1024);
  CHECK(offsetof(ndebug_stream_payload_debug_tensor_read_t, logical_nc_id) == 512);
  CHECK(offsetof(ndebug_stream_payload_debug_tensor_read_t, pipe) == 516);
  CHECK(offsetof(ndebug_stream_payload_debug_tensor_read_t, tensor_dtype) == 520);
  CHECK(offsetof(ndebug_stream_payload_debug_tensor_read_t, tensor_shape) == 536);
  CHECK(offsetof(ndebug_stream_payload_debug_tensor_read_t, tensor_data_size) == 600);
  CHECK(offsetof(ndebug_stream_payload_debug_tensor_read_t, reserved0) == 608);
  CHECK(offsetof(ndebug_stream_payload_debug_tensor_read_t, tensor_data) == 1024);
}

static void check_values(void) {
  CHECK(NDEBUG_STREAM_EVENT_TYPE_INVALID == 0);
  CHECK(NDEBUG_STREAM_EVENT_TYPE_DEBUG_TENSOR_READ == 1);
  CHECK(NRTA_SEQ_NUM_MAX == 281474976710655);
  CHECK(NRTA_XU_COLLECTIVES == 4);
  CHECK(NRTA_XU_COMPUTE == 3);
  CHECK(NRTA_XU_TENSOR_OP == 2);
  CHECK(NRTA_XU_TENSOR_READ == 0);
  CHECK(NRTA_XU_TENSOR_WRITE == 1);
  CHECK(NRTA_XU_TYPE_NUM == 5);
  CHECK(NRT_CC_ALLGATHER == 0);
  CHECK(NRT_CC_ALLREDUCE == 1);
  CHECK(NRT_CC_REDUCESCATTER == 2);
  CHECK(NRT_CLOSED == 14);
  CHECK(NRT_COLL_PENDING == 1100);
  CHECK(NRT_DTYPE_BFLOAT16 == 6);
  CHECK(NRT_DTYPE_FLOAT16 == 7);
  CHECK(NRT_DTYPE_FLOAT32 == 10);
  CHECK(NRT_DTYPE_FP32R == 11);
  CHECK(NRT_DTYPE_FP8_E3 == 13);
  CHECK(NRT_DTYPE_FP8_E4 == 14);
  CHECK(NRT_DTYPE_FP8_E5 == 15);
  CHECK(NRT_DTYPE_INT16 == 4);
  CHECK(NRT_DTYPE_INT32 == 8);
  CHECK(NRT_DTYPE_INT64 == 12);
  CHECK(NRT_DTYPE_INT8 == 2);
  CHECK(NRT_DTYPE_INVALID == 0);
  CHECK(NRT_DTYPE_UINT16 == 5);
  CHECK(NRT_DTYPE_UINT32 == 9);
  CHECK(NRT_DTYPE_UINT64 == 1);
  CHECK(NRT_DTYPE_UINT8 == 3);
  CHECK(NRT_DTYPE_UNKNOWN == 0);
  CHECK(NRT_EXEC_BAD_INPUT == 1002);
  CHECK(NRT_EXEC_COMPLETED_WITH_ERR == 1004);
  CHECK(NRT_EXEC_COMPLETED_WITH_NUM_ERR == 1003);
  CHECK(NRT_EXEC_HW_ERR_COLLECTIVES == 1200);
  CHECK(NRT_EXEC_HW_ERR_DMA_ABORT == 1203);
  CHECK(NRT_EXEC_HW_ERR_HBM_UE == 1201);
  CHECK(NRT_EXEC_HW_ERR_NC_UE == 1202);
  CHECK(NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE == 1205);
  CHECK(NRT_EXEC_NC_BUSY == 1005);
  CHECK(NRT_EXEC_OOB == 1006);
  CHECK(NRT_EXEC_SW_NQ_OVERFLOW == 1204);
  CHECK(NRT_EXEC_UNIT_UNRECOVERABLE == 101);
  CHECK(NRT_FAILURE == 1);
  CHECK(NRT_FAIL_HOST_MEM_ALLOC == 11);
  CHECK(NRT_FRAMEWORK_TYPE_INVALID == 0);
  CHECK(NRT_FRAMEWORK_TYPE_MXNET == 4);
  CHECK(NRT_FRAMEWORK_TYPE_NO_FW == 1);
  CHECK(NRT_FRAMEWORK_TYPE_PRECHECK == 5);
  CHECK(NRT_FRAMEWORK_TYPE_PYTORCH == 3);
  CHECK(NRT_FRAMEWORK_TYPE_TENSORFLOW == 2);
  CHECK(NRT_HW_ERROR == 6);
  CHECK(NRT_INSTANCE_INF1 == 1);
  CHECK(NRT_INSTANCE_INF2 == 4);
  CHECK(NRT_INSTANCE_INF2E == 7);
  CHECK(NRT_INSTANCE_SIZE_1XL == 0);
  CHECK(NRT_INSTANCE_SIZE_24XL == 5);
  CHECK(NRT_INSTANCE_SIZE_2XL == 1);
  CHECK(NRT_INSTANCE_SIZE_32XL == 6);
  CHECK(NRT_INSTANCE_SIZE_3XL == 8);
  CHECK(NRT_INSTANCE_SIZE_48XL == 7);
  CHECK(NRT_INSTANCE_SIZE_4XL == 2);
  CHECK(NRT_INSTANCE_SIZE_6XL == 3);
  CHECK(NRT_INSTANCE_SIZE_8XL == 4);
  CHECK(NRT_INSTANCE_SIZE_NUM == 9);
  CHECK(NRT_INSTANCE_SIZE_UNKNOWN == 9);
  CHECK(NRT_INSTANCE_TRN1 == 2);
  CHECK(NRT_INSTANCE_TRN1N == 3);
  CHECK(NRT_INSTANCE_TRN2 == 5);
  CHECK(NRT_INSTANCE_TRN2AC == 12);
  CHECK(NRT_INSTANCE_TRN2E == 10);
  CHECK(NRT_INSTANCE_TRN2EU == 11);
  CHECK(NRT_INSTANCE_TRN2N == 6);
  CHECK(NRT_INSTANCE_TRN2P == 8);
  CHECK(NRT_INSTANCE_TRN2U == 9);
  CHECK(NRT_INSTANCE_TRN2UAC == 13);
  CHECK(NRT_INSTANCE_TRN3 == 14);
  CHECK(NRT_INSTANCE_TRN3PDS98 == 15);
  CHECK(NRT_INSTANCE_UNKNOWN == 0);
  CHECK(NRT_INVALID == 2);
  CHECK(NRT_INVALID_HANDLE == 3);
  CHECK(NRT_LOAD_NOT_ENOUGH_NC == 9);
  CHECK(NRT_NETWORK_PROXY_FAILURE == 1206);
  CHECK(NRT_OP_ADD == 0);
  CHECK(NRT_OP_FMA == 1);
  CHECK(NRT_OP_INVALID == 15);
  CHECK(NRT_OP_MAX == 2);
  CHECK(NRT_OP_MIN == 3);
  CHECK(NRT_QUEUE_EMPTY == 15);
  CHECK(NRT_QUEUE_FULL == 7);
  CHECK(NRT_RESOURCE == 4);
  CHECK(NRT_SUCCESS == 0);
  CHECK(NRT_TENSOR_PLACEMENT_DEVICE == 0);
  CHECK(NRT_TENSOR_PLACEMENT_HOST == 1);
  CHECK(NRT_TENSOR_PLACEMENT_VIRTUAL == 2);
  CHECK(NRT_TENSOR_USAGE_INPUT == 0);
  CHECK(NRT_TENSOR_USAGE_OUTPUT == 1);
  CHECK(NRT_TIMEOUT == 5);
  CHECK(NRT_UNINITIALIZED == 13);
  CHECK(NRT_UNSUPPORTED_NEFF_VERSION == 10);
  CHECK(NRT_SUCCESS == 0);
  CHECK(NRT_FAILURE == 1);
  CHECK(NRT_INVALID == 2);
  CHECK(NRT_INVALID_HANDLE == 3);
  CHECK(NRT_RESOURCE == 4);
  CHECK(NRT_TIMEOUT == 5);
  CHECK(NRT_HW_ERROR == 6);
  CHECK(NRT_QUEUE_FULL == 7);
  CHECK(NRT_LOAD_NOT_ENOUGH_NC == 9);
  CHECK(NRT_UNSUPPORTED_NEFF_VERSION == 10);
  CHECK(NRT_FAIL_HOST_MEM_ALLOC == 11);
  CHECK(NRT_UNINITIALIZED == 13);
  CHECK(NRT_CLOSED == 14);
  CHECK(NRT_QUEUE_EMPTY == 15);
  CHECK(NRT_EXEC_UNIT_UNRECOVERABLE == 101);
  CHECK(NRT_EXEC_BAD_INPUT == 1002);
  CHECK(NRT_EXEC_COMPLETED_WITH_NUM_ERR == 1003);
  CHECK(NRT_EXEC_COMPLETED_WITH_ERR == 1004);
  CHECK(NRT_EXEC_NC_BUSY == 1005);
  CHECK(NRT_EXEC_OOB == 1006);
  CHECK(NRT_COLL_PENDING == 1100);
  CHECK(NRT_EXEC_HW_ERR_COLLECTIVES == 1200);
  CHECK(NRT_EXEC_HW_ERR_HBM_UE == 1201);
  CHECK(NRT_EXEC_HW_ERR_NC_UE == 1202);
  CHECK(NRT_EXEC_HW_ERR_DMA_ABORT == 1203);
  CHECK(NRT_EXEC_SW_NQ_OVERFLOW == 1204);
  CHECK(NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE == 1205);
  CHECK(NRT_NETWORK_PROXY_FAILURE == 1206);
  {
    const nrta_seq_t seq = ((nrta_seq_t)3 << 48) | 7;
    CHECK(NRTA_SEQ_GET_XU_ID(seq) == 3);
    CHECK(NRTA_SEQ_GET_SEQ_NUM(seq) == 7);
  }
}

int main(void) {
  check_layouts();
  check_values();
  if (failures != 0) {
    fprintf(stderr, "abi: %d of %d checks failed\n", failures, checks);
    return 1;
  }
  printf("ok abi (%d checks)\n", checks);
  return 0;
}
