// The C API's contract for bad calls, as one table: each row is a call of
// an exported function with one class of invalid argument (NULL, out of
// range, an offset + size that wraps past 2^64, the wrong state: before
// nrt_init, after nrt_close, a model whose runtime was closed) and the
// exact status it must return. null_args_test.cc checks that every
// function refuses NULLs at all; this pins down which status each gives.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nrt/nrt.h"
#include "nrt/nrt_async.h"
#include "nrt/nrt_experimental.h"
#include "tests/nrt/nrt_test_env.h"
#include "tests/runtime/test_neff.h"

namespace {

// What a running runtime offers a row: a model of kAddHlo on vnc 0 with
// its tensor sets filled, two device tensors and a host tensor of 64 bytes.
struct Handles {
  nrt_model_t* model = nullptr;
  nrt_tensor_set_t* ins = nullptr;
  nrt_tensor_set_t* outs = nullptr;
  nrt_tensor_t* device = nullptr;
  nrt_tensor_t* other = nullptr;
  nrt_tensor_t* host = nullptr;
  nrta_error_tracker_t* tracker = nullptr;
  std::string neff;
  char buf[64] = {};
};

struct Row {
  const char* function;
  const char* invalid;  // the class of bad argument, for the failure message
  std::function<NRT_STATUS(Handles&)> call;
  NRT_STATUS expected;
};

constexpr size_t kWrap = SIZE_MAX - 15;  // 16 + kWrap wraps to 0

// Calls with bad arguments while the runtime runs and the handles are good.
std::vector<Row> ArgumentRows() {
  return {
      {"nrt_init", "already initialized",
       [](Handles&) { return nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""); }, NRT_INVALID},
      {"nrt_load", "NULL NEFF", [](Handles& h) { return nrt_load(nullptr, 8, -1, -1, &h.model); },
       NRT_INVALID},
      {"nrt_load", "NULL model pointer",
       [](Handles& h) { return nrt_load(h.neff.data(), h.neff.size(), -1, -1, nullptr); },
       NRT_INVALID},
      {"nrt_load", "vnc -2",
       [](Handles& h) {
         nrt_model_t* m = nullptr;
         return nrt_load(h.neff.data(), h.neff.size(), -2, -1, &m);
       },
       NRT_INVALID},
      {"nrt_load", "vnc INT32_MIN",
       [](Handles& h) {
         nrt_model_t* m = nullptr;
         return nrt_load(h.neff.data(), h.neff.size(), INT32_MIN, -1, &m);
       },
       NRT_INVALID},
      {"nrt_load", "vnc past the held cores",
       [](Handles& h) {
         nrt_model_t* m = nullptr;
         return nrt_load(h.neff.data(), h.neff.size(), 2, -1, &m);
       },
       NRT_INVALID},
      {"nrt_load", "vnc_count 2",
       [](Handles& h) {
         nrt_model_t* m = nullptr;
         return nrt_load(h.neff.data(), h.neff.size(), 0, 2, &m);
       },
       NRT_INVALID},
      {"nrt_load", "truncated NEFF",
       [](Handles& h) {
         nrt_model_t* m = nullptr;
         return nrt_load(h.neff.data(), h.neff.size() / 2, 0, -1, &m);
       },
       NRT_INVALID},
      {"nrt_load_collectives", "vnc -2",
       [](Handles& h) {
         nrt_model_t* m = nullptr;
         return nrt_load_collectives(h.neff.data(), h.neff.size(), -2, -1, 0, 1, &m);
       },
       NRT_INVALID},
      {"nrt_unload", "NULL model", [](Handles&) { return nrt_unload(nullptr); },
       NRT_INVALID_HANDLE},
      {"nrt_execute", "NULL model",
       [](Handles& h) { return nrt_execute(nullptr, h.ins, h.outs); }, NRT_INVALID_HANDLE},
      {"nrt_execute", "NULL input set",
       [](Handles& h) { return nrt_execute(h.model, nullptr, h.outs); }, NRT_INVALID},
      {"nrt_execute", "input set missing an input",
       [](Handles& h) { return nrt_execute(h.model, h.outs, h.outs); }, NRT_INVALID},
      {"nrt_execute_repeat", "repeat_count 0",
       [](Handles& h) { return nrt_execute_repeat(h.model, h.ins, h.outs, 0); }, NRT_INVALID},
      {"nrt_execute_repeat", "repeat_count -3",
       [](Handles& h) { return nrt_execute_repeat(h.model, h.ins, h.outs, -3); }, NRT_INVALID},
      {"nrt_execute_repeat", "repeat_count INT_MIN",
       [](Handles& h) { return nrt_execute_repeat(h.model, h.ins, h.outs, INT32_MIN); },
       NRT_INVALID},
      {"nrt_get_model_vnc_count", "NULL count",
       [](Handles& h) { return nrt_get_model_vnc_count(h.model, nullptr); }, NRT_INVALID},
      {"nrt_get_model_tensor_info", "NULL model",
       [](Handles&) {
         nrt_tensor_info_array_t* info = nullptr;
         return nrt_get_model_tensor_info(nullptr, &info);
       },
       NRT_INVALID_HANDLE},
      {"nrt_get_tensor_from_tensor_set", "unknown name",
       [](Handles& h) {
         nrt_tensor_t* t = nullptr;
         return nrt_get_tensor_from_tensor_set(h.ins, "nope", &t);
       },
       NRT_FAILURE},
      {"nrt_add_tensor_to_tensor_set", "NULL name",
       [](Handles& h) { return nrt_add_tensor_to_tensor_set(h.ins, nullptr, h.device); },
       NRT_INVALID},
      {"nrt_tensor_allocate", "NULL tensor pointer",
       [](Handles&) { return nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 8, "t", nullptr); },
       NRT_INVALID},
      {"nrt_tensor_allocate", "unknown placement",
       [](Handles&) {
         nrt_tensor_t* t = nullptr;
         return nrt_tensor_allocate(static_cast<nrt_tensor_placement_t>(42), 0, 8, "t", &t);
       },
       NRT_INVALID},
      {"nrt_tensor_allocate", "vnc -1 on the device",
       [](Handles&) {
         nrt_tensor_t* t = nullptr;
         return nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, -1, 8, "t", &t);
       },
       NRT_INVALID},
      {"nrt_tensor_allocate", "vnc past the held cores",
       [](Handles&) {
         nrt_tensor_t* t = nullptr;
         return nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 2, 8, "t", &t);
       },
       NRT_INVALID},
      {"nrt_tensor_allocate", "device size SIZE_MAX",
       [](Handles&) {
         nrt_tensor_t* t = nullptr;
         return nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, SIZE_MAX, "t", &t);
       },
       NRT_RESOURCE},
      {"nrt_tensor_allocate", "host size SIZE_MAX",
       [](Handles&) {
         nrt_tensor_t* t = nullptr;
         return nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, 0, SIZE_MAX, "t", &t);
       },
       NRT_RESOURCE},
      {"nrt_tensor_allocate", "virtual size SIZE_MAX - 62",
       [](Handles&) {
         nrt_tensor_t* t = nullptr;
         return nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_VIRTUAL, 0, SIZE_MAX - 62, "t", &t);
       },
       NRT_RESOURCE},
      {"nrt_tensor_read", "NULL tensor",
       [](Handles& h) { return nrt_tensor_read(nullptr, h.buf, 0, 8); }, NRT_INVALID_HANDLE},
      {"nrt_tensor_read", "NULL buffer",
       [](Handles& h) { return nrt_tensor_read(h.device, nullptr, 0, 8); }, NRT_INVALID},
      {"nrt_tensor_read", "past the end",
       [](Handles& h) { return nrt_tensor_read(h.device, h.buf, 60, 8); }, NRT_INVALID},
      {"nrt_tensor_read", "wrapping offset + size",
       [](Handles& h) { return nrt_tensor_read(h.host, h.buf, 16, kWrap); }, NRT_INVALID},
      {"nrt_tensor_write", "NULL tensor",
       [](Handles& h) { return nrt_tensor_write(nullptr, h.buf, 0, 8); }, NRT_INVALID_HANDLE},
      {"nrt_tensor_write", "offset past the end",
       [](Handles& h) { return nrt_tensor_write(h.device, h.buf, 65, 0); }, NRT_INVALID},
      {"nrt_tensor_write", "wrapping offset + size",
       [](Handles& h) { return nrt_tensor_write(h.device, h.buf, 16, kWrap); }, NRT_INVALID},
      {"nrt_tensor_write_batch", "NULL batches",
       [](Handles&) { return nrt_tensor_write_batch(nullptr, 1, false); }, NRT_INVALID},
      {"nrt_tensor_read_batch", "NULL tensor in a batch",
       [](Handles& h) {
         nrt_tensor_batch_op_t op{0, 8, h.buf};
         nrt_tensor_batch_t batch{nullptr, &op, 1};
         return nrt_tensor_read_batch(&batch, 1, false);
       },
       NRT_INVALID_HANDLE},
      {"nrt_tensor_write_batch", "wrapping offset + size",
       [](Handles& h) {
         nrt_tensor_batch_op_t op{16, kWrap, h.buf};
         nrt_tensor_batch_t batch{h.host, &op, 1};
         return nrt_tensor_write_batch(&batch, 1, false);
       },
       NRT_INVALID},
      {"nrt_tensor_copy", "NULL source",
       [](Handles& h) { return nrt_tensor_copy(nullptr, 0, h.device, 0, 8); }, NRT_INVALID_HANDLE},
      {"nrt_tensor_copy", "wrapping source range",
       [](Handles& h) { return nrt_tensor_copy(h.device, 16, h.other, 0, kWrap); }, NRT_INVALID},
      {"nrt_tensor_copy", "wrapping destination range",
       [](Handles& h) { return nrt_tensor_copy(h.host, 0, h.device, 16, kWrap); }, NRT_INVALID},
      {"nrt_tensor_memset", "wrapping offset + size",
       [](Handles& h) { return nrt_tensor_memset(h.device, 16, 0, kWrap); }, NRT_INVALID},
      {"nrt_tensor_allocate_slice", "NULL slice pointer",
       [](Handles& h) { return nrt_tensor_allocate_slice(h.device, 0, 8, "s", nullptr); },
       NRT_INVALID},
      {"nrt_tensor_allocate_slice", "wrapping offset + size",
       [](Handles& h) {
         nrt_tensor_t* s = nullptr;
         return nrt_tensor_allocate_slice(h.device, 16, kWrap, "s", &s);
       },
       NRT_INVALID},
      {"nrt_tensor_attach_buffer", "NULL buffer with a size",
       [](Handles& h) { return nrt_tensor_attach_buffer(h.other, nullptr, 8); }, NRT_INVALID},
      {"nrt_tensor_get_device_allocation_info", "host tensor",
       [](Handles& h) {
         nrt_tensor_device_allocation_info_t info;
         return nrt_tensor_get_device_allocation_info(h.host, &info);
       },
       NRT_INVALID},
      {"nrt_get_vnc_memory_stats", "vnc past the held cores",
       [](Handles&) {
         nrt_vnc_memory_stats_t stats;
         size_t out = 0;
         return nrt_get_vnc_memory_stats(2, &stats, sizeof stats, &out);
       },
       NRT_INVALID},
      {"nrta_tensor_write", "wrapping offset + size",
       [](Handles& h) {
         nrta_seq_t seq = 0;
         return nrta_tensor_write(h.device, h.buf, 16, kWrap, 0, h.tracker, &seq);
       },
       NRT_INVALID},
      {"nrta_tensor_read", "wrapping offset + size",
       [](Handles& h) {
         nrta_seq_t seq = 0;
         return nrta_tensor_read(h.buf, h.device, 16, kWrap, 0, h.tracker, &seq);
       },
       NRT_INVALID},
      {"nrta_tensor_copy", "wrapping offset + size",
       [](Handles& h) {
         nrta_seq_t seq = 0;
         return nrta_tensor_copy(h.device, 16, h.other, 0, kWrap, 0, h.tracker, &seq);
       },
       NRT_INVALID},
      {"nrta_tensor_write", "queue out of range",
       [](Handles& h) {
         nrta_seq_t seq = 0;
         return nrta_tensor_write(h.device, h.buf, 0, 8, 7, h.tracker, &seq);
       },
       NRT_INVALID},
      {"nrta_execute_schedule", "NULL model",
       [](Handles& h) {
         nrta_seq_t seq = 0;
         return nrta_execute_schedule(nullptr, h.ins, h.outs, 0, h.tracker, &seq);
       },
       NRT_INVALID_HANDLE},
      {"nrta_error_tracker_create", "lnc past the held cores",
       [](Handles&) {
         nrta_error_tracker_t* t = nullptr;
         return nrta_error_tracker_create(2, &t);
       },
       NRT_INVALID},
  };
}

// Calls that need a running runtime, made when there is none: before
// nrt_init (or after an earlier test's nrt_close) and after nrt_close.
std::vector<Row> StateRows(NRT_STATUS not_running) {
  return {
      {"nrt_load", "no runtime",
       [](Handles& h) {
         nrt_model_t* m = nullptr;
         return nrt_load(h.neff.data(), h.neff.size(), -1, -1, &m);
       },
       not_running},
      {"nrt_tensor_allocate", "no runtime",
       [](Handles&) {
         nrt_tensor_t* t = nullptr;
         return nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 8, "t", &t);
       },
       not_running},
      {"nrt_get_vnc_memory_stats", "no runtime",
       [](Handles&) {
         nrt_vnc_memory_stats_t stats;
         size_t out = 0;
         return nrt_get_vnc_memory_stats(0, &stats, sizeof stats, &out);
       },
       not_running},
      {"nrta_error_tracker_create", "no runtime",
       [](Handles&) {
         nrta_error_tracker_t* t = nullptr;
         return nrta_error_tracker_create(0, &t);
       },
       not_running},
      {"nrt_async_drain_queued_execs", "no runtime",
       [](Handles&) { return nrt_async_drain_queued_execs(0); }, not_running},
  };
}

class InvalidArgsTest : public neuron::testing::NrtTestEnv {
 protected:
  void SetUp() override {
    StartEnv();
    absl::StatusOr<std::string> neff = neuron::testing::BuildTestNeff(neuron::testing::kAddHlo);
    ASSERT_TRUE(neff.ok()) << neff.status();
    h_.neff = *neff;
  }
  void TearDown() override {
    nrta_error_tracker_destroy(h_.tracker);
    nrt_tensor_free(&h_.device);
    nrt_tensor_free(&h_.other);
    nrt_tensor_free(&h_.host);
    nrt_destroy_tensor_set(&h_.ins);
    nrt_destroy_tensor_set(&h_.outs);
    if (h_.model != nullptr) nrt_unload(h_.model);
    EndEnv();
  }

  // nrt_init, then every handle of Handles.
  void Start() {
    ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS) << nrt_get_last_error();
    ASSERT_EQ(nrt_load(h_.neff.data(), h_.neff.size(), 0, -1, &h_.model), NRT_SUCCESS)
        << nrt_get_last_error();
    ASSERT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "device", &h_.device),
              NRT_SUCCESS);
    ASSERT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "other", &h_.other),
              NRT_SUCCESS);
    ASSERT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, 0, 64, "host", &h_.host),
              NRT_SUCCESS);
    ASSERT_EQ(nrt_allocate_tensor_set(&h_.ins), NRT_SUCCESS);
    ASSERT_EQ(nrt_allocate_tensor_set(&h_.outs), NRT_SUCCESS);
    nrt_tensor_info_array_t* info = nullptr;
    ASSERT_EQ(nrt_get_model_tensor_info(h_.model, &info), NRT_SUCCESS);
    for (uint64_t i = 0; i < info->tensor_count; ++i) {
      const nrt_tensor_info_t& t = info->tensor_array[i];
      nrt_tensor_set_t* set = t.usage == NRT_TENSOR_USAGE_INPUT ? h_.ins : h_.outs;
      ASSERT_EQ(nrt_add_tensor_to_tensor_set(set, t.name, h_.device), NRT_SUCCESS);
    }
    nrt_free_model_tensor_info(info);
    ASSERT_EQ(nrta_error_tracker_create(0, &h_.tracker), NRT_SUCCESS) << nrt_get_last_error();
  }

  // Runs every row; each must return its status and leave a reason.
  void Expect(const std::vector<Row>& rows, const char* state) {
    for (const Row& row : rows) {
      const NRT_STATUS got = row.call(h_);
      EXPECT_EQ(got, row.expected) << state << ": " << row.function << " with " << row.invalid
                                   << ": " << nrt_get_last_error();
      EXPECT_NE(std::string(nrt_get_last_error()), "")
          << state << ": " << row.function << " with " << row.invalid << " gave no reason";
    }
  }

  Handles h_;
};

TEST_F(InvalidArgsTest, BadArgumentsGetTheirStatus) {
  Start();
  Expect(ArgumentRows(), "running");
  // None of it broke the handles: the model still runs.
  EXPECT_EQ(nrt_execute(h_.model, h_.ins, h_.outs), NRT_SUCCESS) << nrt_get_last_error();
}

TEST_F(InvalidArgsTest, BeforeInit) {
  // This process may have closed a runtime already (an earlier test).
  std::vector<Row> rows = StateRows(NRT_UNINITIALIZED);
  for (Row& row : rows) {
    const NRT_STATUS got = row.call(h_);
    EXPECT_TRUE(got == NRT_UNINITIALIZED || got == NRT_CLOSED)
        << row.function << " before nrt_init: " << got;
  }
}

TEST_F(InvalidArgsTest, AfterClose) {
  Start();
  nrt_close();
  Expect(StateRows(NRT_CLOSED), "after nrt_close");
  // Device tensors lost their storage with the runtime.
  Expect({{"nrt_tensor_write", "device tensor after close",
           [](Handles& h) { return nrt_tensor_write(h.device, h.buf, 0, 8); }, NRT_INVALID},
          {"nrt_execute", "after close",
           [](Handles& h) { return nrt_execute(h.model, h.ins, h.outs); }, NRT_CLOSED}},
         "after nrt_close");
}

// A model loaded before nrt_close is unloaded by it; its handle stays
// valid for nrt_unload only.
TEST_F(InvalidArgsTest, ModelOfAClosedRuntime) {
  Start();
  nrt_close();
  ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS) << nrt_get_last_error();
  Expect({{"nrt_execute", "unloaded model",
           [](Handles& h) { return nrt_execute(h.model, h.ins, h.outs); }, NRT_INVALID_HANDLE},
          {"nrt_get_model_tensor_info", "unloaded model",
           [](Handles& h) {
             nrt_tensor_info_array_t* info = nullptr;
             return nrt_get_model_tensor_info(h.model, &info);
           },
           NRT_INVALID_HANDLE},
          {"nrta_execute_schedule", "unloaded model",
           [](Handles& h) {
             nrta_seq_t seq = 0;
             return nrta_execute_schedule(h.model, h.ins, h.outs, 0, nullptr, &seq);
           },
           NRT_INVALID_HANDLE}},
         "after nrt_close and nrt_init");
  EXPECT_EQ(nrt_unload(h_.model), NRT_SUCCESS);
  h_.model = nullptr;
}

}  // namespace
