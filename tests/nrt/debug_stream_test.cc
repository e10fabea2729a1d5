// nrt/ndebug_stream.h and NEURON_RT_DEBUG_STREAM_BUFFER_SIZE: a client
// connected to core 0's stream gets one DEBUG_TENSOR_READ event per
// neuron.device_print step run; beyond the buffer size unread events are
// dropped and the count is logged at close. Run with the variable unset,
// at a valid size and at sizes (1, 2) smaller than what is emitted.
#include <poll.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "lib/log/log.h"
#include "nrt/ndebug_stream.h"
#include "nrt/nrt.h"
#include "tests/nrt/nrt_test_env.h"
#include "tests/runtime/test_neff.h"

namespace {

constexpr const char* kPrintHlo = R"(HloModule printed
ENTRY main {
  x = f32[2,2] parameter(0)
  p = f32[2,2] custom-call(x), custom_call_target="neuron.device_print", backend_config="x is "
  ROOT y = f32[2,2] add(p, p)
}
)";

class DebugStreamTest : public neuron::testing::NrtTestEnv {
 protected:
  void SetUp() override {
    StartEnv();
    setenv("NEURON_RT_LOG_LEVEL", "WARN", 1);
    neuron::log::SetConsoleSink([this](std::string_view line) { logs_ += line; });
  }
  void TearDown() override {
    EndEnv({"NEURON_RT_DEBUG_STREAM_BUFFER_SIZE"});
    neuron::log::SetConsoleSink(nullptr);
  }
  std::string logs_;
};

// Events waiting on `fd`, by poll(2) (what a client would do).
bool Readable(int fd) {
  pollfd p = {fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

TEST_F(DebugStreamTest, BufferSizeBoundsUnreadEvents) {
  struct Case {
    std::optional<std::string> size;
    int delivered;  // of 3 executions, each printing once
    int dropped;
  };
  const Case cases[] = {
      {std::nullopt, 3, 0},  // default 262144
      {"4", 3, 0},
      {"2", 2, 1},
      {"1", 1, 2},
  };
  absl::StatusOr<std::string> neff = neuron::testing::BuildTestNeff(kPrintHlo);
  ASSERT_TRUE(neff.ok()) << neff.status();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.size.value_or("(unset)"));
    if (c.size) {
      setenv("NEURON_RT_DEBUG_STREAM_BUFFER_SIZE", c.size->c_str(), 1);
    } else {
      unsetenv("NEURON_RT_DEBUG_STREAM_BUFFER_SIZE");
    }
    logs_.clear();
    ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS) << nrt_get_last_error();
    nrt_model_t* model = nullptr;
    ASSERT_EQ(nrt_load(neff->data(), neff->size(), 0, -1, &model), NRT_SUCCESS)
        << nrt_get_last_error();
    nrt_tensor_t *x = nullptr, *y = nullptr;
    ASSERT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 16, "x", &x), NRT_SUCCESS);
    ASSERT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 16, "y", &y), NRT_SUCCESS);
    const float xs[4] = {1, 2, 3, 4};
    ASSERT_EQ(nrt_tensor_write(x, xs, 0, sizeof xs), NRT_SUCCESS);
    nrt_tensor_set_t *in = nullptr, *out = nullptr;
    ASSERT_EQ(nrt_allocate_tensor_set(&in), NRT_SUCCESS);
    ASSERT_EQ(nrt_allocate_tensor_set(&out), NRT_SUCCESS);
    ASSERT_EQ(nrt_add_tensor_to_tensor_set(in, "x", x), NRT_SUCCESS);
    ASSERT_EQ(nrt_add_tensor_to_tensor_set(out, "y", y), NRT_SUCCESS);

    // Before a client connects, prints are not kept.
    ASSERT_EQ(nrt_execute(model, in, out), NRT_SUCCESS) << nrt_get_last_error();
    int fd = -1;
    ASSERT_EQ(nrt_debug_client_connect(0, &fd), NRT_SUCCESS) << nrt_get_last_error();
    int second = -1;
    EXPECT_EQ(nrt_debug_client_connect(0, &second), NRT_INVALID);  // one client per core
    EXPECT_FALSE(Readable(fd));
    for (int i = 0; i < 3; ++i) {
      ASSERT_EQ(nrt_execute(model, in, out), NRT_SUCCESS) << nrt_get_last_error();
    }

    int got = 0;
    while (Readable(fd)) {
      ndebug_stream_event_header_t header;
      void* payload = nullptr;
      ASSERT_EQ(nrt_debug_client_read_one_event(fd, &header, &payload), NRT_SUCCESS)
          << nrt_get_last_error();
      ++got;
      ASSERT_EQ(header.type, NDEBUG_STREAM_EVENT_TYPE_DEBUG_TENSOR_READ);
      ASSERT_EQ(header.data_size, sizeof(ndebug_stream_payload_debug_tensor_read_t) + 16);
      const auto* e = static_cast<const ndebug_stream_payload_debug_tensor_read_t*>(payload);
      EXPECT_STREQ(e->prefix, "x is ");
      EXPECT_EQ(e->logical_nc_id, 0u);
      EXPECT_STREQ(e->tensor_dtype, "f32");
      EXPECT_EQ(e->tensor_shape[0], 2u);
      EXPECT_EQ(e->tensor_shape[1], 2u);
      EXPECT_EQ(e->tensor_shape[2], 0u);
      ASSERT_EQ(e->tensor_data_size, 16u);
      float values[4];
      std::memcpy(values, e->tensor_data, sizeof values);
      EXPECT_EQ(values[3], 4.0f);
      free(payload);
    }
    EXPECT_EQ(got, c.delivered);
    ndebug_stream_event_header_t header;
    void* payload = nullptr;
    EXPECT_EQ(nrt_debug_client_read_one_event(fd, &header, &payload), NRT_FAILURE);  // drained
    nrt_debug_client_connect_close(fd);
    const std::string note = "debug stream of nc0: " + std::to_string(c.dropped) + " events dropped";
    if (c.dropped > 0) {
      EXPECT_NE(logs_.find(note), std::string::npos) << logs_;
    } else {
      EXPECT_EQ(logs_.find("events dropped"), std::string::npos) << logs_;
    }
    // Closed: the fd is no stream any more, and the core takes a new client.
    EXPECT_EQ(nrt_debug_client_read_one_event(fd, &header, &payload), NRT_INVALID);
    ASSERT_EQ(nrt_debug_client_connect(0, &second), NRT_SUCCESS);
    nrt_debug_client_connect_close(second);

    nrt_destroy_tensor_set(&in);
    nrt_destroy_tensor_set(&out);
    nrt_tensor_free(&x);
    nrt_tensor_free(&y);
    nrt_unload(model);
    nrt_close();
  }
}

}  // namespace
