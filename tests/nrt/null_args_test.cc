// Bad input never crashes: every function of the public headers called
// with null pointers (and nonsense handles' neighbours: out-of-range cores,
// unknown sequence ids), before nrt_init and after it. Each returns a
// failure, never NRT_SUCCESS, and says why in nrt_get_last_error().
#include <string>

#include "gtest/gtest.h"
#include "nrt/ndebug_stream.h"
#include "nrt/nrt.h"
#include "nrt/nrt_async.h"
#include "nrt/nrt_async_sendrecv.h"
#include "nrt/nrt_experimental.h"
#include "nrt/nrt_profile.h"
#include "nrt/nrt_sys_trace.h"
#include "nrt/nrt_version.h"
#include "tests/nrt/nrt_test_env.h"

namespace {

class NullArgsTest : public neuron::testing::NrtTestEnv {
 protected:
  void SetUp() override { StartEnv(); }
  void TearDown() override { EndEnv(); }
};

// Every call must fail and leave a reason.
#define EXPECT_REFUSED(call)                                                  \
  do {                                                                        \
    const NRT_STATUS s_ = (call);                                             \
    EXPECT_NE(s_, NRT_SUCCESS) << #call;                                      \
    EXPECT_NE(std::string(nrt_get_last_error()), "") << #call << " gave no reason"; \
  } while (0)

void CallEverythingWithNulls() {
  EXPECT_REFUSED(nrt_get_instance_info(nullptr, 0));
  EXPECT_REFUSED(nrt_load(nullptr, 0, -1, -1, nullptr));
  EXPECT_REFUSED(nrt_load_collectives(nullptr, 0, -1, -1, 0, 0, nullptr));
  EXPECT_REFUSED(nrt_unload(nullptr));
  EXPECT_REFUSED(nrt_get_model_nc_count(nullptr, nullptr));
  EXPECT_REFUSED(nrt_get_model_vnc_count(nullptr, nullptr));
  EXPECT_REFUSED(nrt_get_total_nc_count(nullptr));
  EXPECT_REFUSED(nrt_get_total_vnc_count(nullptr));
  EXPECT_REFUSED(nrt_get_visible_nc_count(nullptr));
  EXPECT_REFUSED(nrt_get_visible_vnc_count(nullptr));
  EXPECT_REFUSED(nrt_allocate_tensor_set(nullptr));
  nrt_destroy_tensor_set(nullptr);
  EXPECT_REFUSED(nrt_add_tensor_to_tensor_set(nullptr, nullptr, nullptr));
  EXPECT_REFUSED(nrt_get_tensor_from_tensor_set(nullptr, nullptr, nullptr));
  EXPECT_REFUSED(nrt_execute(nullptr, nullptr, nullptr));
  EXPECT_REFUSED(nrt_execute_repeat(nullptr, nullptr, nullptr, 3));
  EXPECT_REFUSED(nrt_build_global_comm(-7, 5, 2));
  EXPECT_REFUSED(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 8, nullptr, nullptr));
  EXPECT_REFUSED(nrt_tensor_allocate(static_cast<nrt_tensor_placement_t>(42), 0, 8, "x", nullptr));
  nrt_tensor_free(nullptr);
  EXPECT_REFUSED(nrt_tensor_read(nullptr, nullptr, 0, 8));
  EXPECT_REFUSED(nrt_tensor_write(nullptr, nullptr, 0, 8));
  EXPECT_REFUSED(nrt_tensor_read_batch(nullptr, 3, false));
  EXPECT_REFUSED(nrt_tensor_write_batch(nullptr, 3, true));
  EXPECT_REFUSED(nrt_tensor_copy(nullptr, 0, nullptr, 0, 8));
  EXPECT_EQ(nrt_tensor_get_size(nullptr), 0u);
  EXPECT_REFUSED(nrt_tensor_memset(nullptr, 0, 0, 8));
  EXPECT_REFUSED(nrt_tensor_allocate_empty(nullptr, nullptr));
  EXPECT_REFUSED(nrt_tensor_attach_buffer(nullptr, nullptr, 8));
  EXPECT_REFUSED(nrt_tensor_allocate_slice(nullptr, 0, 8, nullptr, nullptr));
  EXPECT_EQ(nrt_tensor_get_va(nullptr), nullptr);
  EXPECT_REFUSED(nrt_tensor_get_device_allocation_info(nullptr, nullptr));
  EXPECT_REFUSED(nrt_tensor_check_output_completion(nullptr, 0, 1));
  EXPECT_REFUSED(nrt_tensor_reset_output_completion(nullptr));
  EXPECT_REFUSED(nrt_get_dmabuf_fd(0, 0, nullptr));
  EXPECT_REFUSED(nrt_host_device_id_get(-1, nullptr));
  EXPECT_REFUSED(nrt_host_device_id_rid_map_get(nullptr, nullptr));
  EXPECT_REFUSED(nrt_get_hbm_mmap_va(0, 0, nullptr, nullptr));
  EXPECT_REFUSED(nrt_get_vnc_memory_stats(1u << 30, nullptr, 0, nullptr));
  EXPECT_REFUSED(nrt_get_attached_efa_bdf(nullptr, nullptr, nullptr));
  EXPECT_REFUSED(nrt_cc_global_comm_init(1u << 30, 5, 2));
  EXPECT_REFUSED(nrt_get_version(nullptr, 0));

  EXPECT_REFUSED(nrt_get_model_tensor_info(nullptr, nullptr));
  EXPECT_REFUSED(nrt_get_model_instance_count(nullptr, nullptr));
  EXPECT_EQ(nrt_free_model_tensor_info(nullptr), NRT_SUCCESS);  // like free(NULL)
  EXPECT_REFUSED(nrt_trace_stop(nullptr));
  int err = 0;
  EXPECT_EQ(nrt_get_libnccl_net(&err, nullptr, 0), nullptr);
  EXPECT_EQ(nrt_get_libnccl_net(nullptr, nullptr, 0), nullptr);
  EXPECT_REFUSED(nrt_set_pool_eng_ucode(nullptr));
  EXPECT_REFUSED(nrt_memcpy_to_device(nullptr, nullptr, 8));
  EXPECT_REFUSED(nrt_barrier(-7, 5, 2));
  EXPECT_REFUSED(nrt_all_gather(-7, 5, 2, 8, nullptr, nullptr));
  EXPECT_REFUSED(nrt_async_drain_queued_execs(1 << 30));
  EXPECT_REFUSED(nrt_get_model_info(nullptr, nullptr, 0, nullptr));

  EXPECT_REFUSED(nrta_tensor_write(nullptr, nullptr, 0, 8, 0, nullptr, nullptr));
  EXPECT_REFUSED(nrta_tensor_read(nullptr, nullptr, 0, 8, 0, nullptr, nullptr));
  EXPECT_REFUSED(nrta_tensor_copy(nullptr, 0, nullptr, 0, 8, 0, nullptr, nullptr));
  EXPECT_REFUSED(nrta_execute_schedule(nullptr, nullptr, nullptr, 0, nullptr, nullptr));
  EXPECT_REFUSED(nrta_cc_prepare(nullptr, nullptr, nullptr, NRT_DTYPE_FLOAT32, NRT_OP_ADD,
                                 NRT_CC_ALLREDUCE, nullptr));
  EXPECT_REFUSED(nrta_cc_schedule(nullptr, 0, nullptr, nullptr));
  EXPECT_REFUSED(nrta_is_completed(~0ull, nullptr));
  EXPECT_REFUSED(nrta_get_sequence(1u << 30, NRTA_XU_COMPUTE, 0, nullptr));
  EXPECT_REFUSED(nrta_get_completion_handle(~0ull, nullptr));
  EXPECT_REFUSED(nrta_error_tracker_create(1u << 30, nullptr));
  nrta_error_tracker_destroy(nullptr);
  EXPECT_REFUSED(nrta_error_tracker_get_list(nullptr, nullptr, nullptr));

  EXPECT_REFUSED(nrt_async_sendrecv_get_max_num_communicators_per_lnc(nullptr));
  EXPECT_REFUSED(nrt_async_sendrecv_get_max_num_pending_request(nullptr));
  EXPECT_REFUSED(nrt_async_sendrecv_init(-1));
  EXPECT_REFUSED(nrt_async_sendrecv_close(-1));
  EXPECT_REFUSED(nrt_async_sendrecv_connect(nullptr, 0, 0, nullptr));
  EXPECT_REFUSED(nrt_async_sendrecv_accept(nullptr, 0, 0, nullptr));
  EXPECT_REFUSED(nrt_async_sendrecv_test_comm(nullptr, nullptr));
  EXPECT_REFUSED(nrt_async_sendrecv_send_tensor(nullptr, 0, 8, nullptr, nullptr));
  EXPECT_REFUSED(nrt_async_sendrecv_recv_tensor(nullptr, 0, 8, nullptr, nullptr));
  EXPECT_REFUSED(nrt_async_sendrecv_test_request(nullptr, nullptr, nullptr));
  EXPECT_REFUSED(nrt_async_sendrecv_flush(-1));

  EXPECT_REFUSED(nrt_profile_start(nullptr, nullptr));
  EXPECT_REFUSED(nrt_profile_continuous_options_allocate(nullptr));
  EXPECT_REFUSED(nrt_profile_continuous_options_set_output_dir(nullptr, nullptr));
  EXPECT_REFUSED(nrt_profile_continuous_save(1u << 30, nullptr));
  EXPECT_REFUSED(nrt_inspect_config_allocate(nullptr));
  EXPECT_REFUSED(nrt_inspect_config_set_defaults(nullptr));
  EXPECT_REFUSED(nrt_inspect_config_set_session_id(nullptr, 1));
  EXPECT_REFUSED(nrt_inspect_config_set_output_dir(nullptr, nullptr));
  EXPECT_REFUSED(nrt_inspect_config_set_sys_trace_max_events_per_nc(nullptr, 1));
  EXPECT_REFUSED(nrt_inspect_config_set_capture_enabled_for_nc(nullptr, 0, true));
  EXPECT_REFUSED(nrt_inspect_config_set_capture_enabled_for_event_type_string(nullptr, nullptr, true));
  EXPECT_REFUSED(nrt_inspect_config_set_enable_inspect(nullptr, true));
  EXPECT_REFUSED(nrt_inspect_config_set_enable_inspect_on_fail(nullptr, true));
  EXPECT_REFUSED(nrt_inspect_config_get_all_activity_types(nullptr, nullptr));
  EXPECT_REFUSED(nrt_inspect_config_get_enabled_activity_types(nullptr, nullptr, nullptr));
  nrt_inspect_config_free_activity_types(nullptr, 5);
  EXPECT_REFUSED(nrt_inspect_config_set_activity(nullptr, nullptr, true));

  EXPECT_REFUSED(nrt_sys_trace_config_allocate(nullptr));
  nrt_sys_trace_config_set_defaults(nullptr);
  nrt_sys_trace_config_free(nullptr);
  nrt_sys_trace_config_set_max_events_per_nc(nullptr, 1);
  nrt_sys_trace_config_set_capture_enabled_for_nc(nullptr, 0, false);
  EXPECT_REFUSED(nrt_sys_trace_config_set_capture_enabled_for_event_type(nullptr, nullptr, true));
  EXPECT_REFUSED(nrt_sys_trace_get_event_types(nullptr, nullptr));
  nrt_sys_trace_free_event_types(nullptr, 3);
  EXPECT_REFUSED(nrt_sys_trace_config_get_enabled_event_types(nullptr, nullptr, nullptr));
  EXPECT_REFUSED(nrt_sys_trace_fetch_options_allocate(nullptr));
  nrt_sys_trace_fetch_options_set_defaults(nullptr);
  nrt_sys_trace_fetch_options_free(nullptr);
  nrt_sys_trace_fetch_options_set_max_events_per_nc(nullptr, 1);
  nrt_sys_trace_fetch_options_set_nc_idx(nullptr, 0);
  EXPECT_REFUSED(nrt_sys_trace_fetch_events(nullptr, nullptr, nullptr));
  nrt_sys_trace_buffer_free(nullptr);

  EXPECT_REFUSED(nrt_debug_client_connect(0, nullptr));
  int fd = -1;
  EXPECT_REFUSED(nrt_debug_client_connect(-1, &fd));
  ndebug_stream_event_header_t header;
  void* payload = nullptr;
  EXPECT_REFUSED(nrt_debug_client_read_one_event(-1, nullptr, nullptr));
  EXPECT_REFUSED(nrt_debug_client_read_one_event(-1, &header, &payload));
  nrt_debug_client_connect_close(-1);
}

TEST_F(NullArgsTest, RefusedBeforeInit) { CallEverythingWithNulls(); }

TEST_F(NullArgsTest, RefusedAfterInit) {
  ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS) << nrt_get_last_error();
  CallEverythingWithNulls();
  // The runtime is still usable afterwards.
  nrt_tensor_t* t = nullptr;
  ASSERT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 16, "t", &t), NRT_SUCCESS);
  nrt_tensor_free(&t);
}

}  // namespace
