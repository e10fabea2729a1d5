// The async API of nrt/nrt_async.h (execution units, sequence ids,
// completion handles, error trackers) and the async-exec callback and
// drain of nrt/nrt_experimental.h.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "lib/log/log.h"
#include "nrt/nrt.h"
#include "nrt/nrt_async.h"
#include "nrt/nrt_experimental.h"
#include "tests/nrt/nrt_test_env.h"
#include "tests/runtime/test_neff.h"

namespace {

constexpr const char* kAddMulHlo = R"(HloModule add_mul
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  sum = f32[2,3] add(a, b)
  product = f32[2,3] multiply(a, b)
  ROOT out = (f32[2,3], f32[2,3]) tuple(sum, product)
}
)";

// Generous: only there so a broken build fails instead of hanging.
constexpr int kWaitMs = 60'000;

// Waits (poll(2) on the completion handle) until `seq` completes.
bool WaitFor(nrta_seq_t seq) {
  int fd = -1;
  if (nrta_get_completion_handle(seq, &fd) != NRT_SUCCESS) return false;
  pollfd p{fd, POLLIN, 0};
  const int n = poll(&p, 1, kWaitMs);
  close(fd);
  if (n != 1 || (p.revents & POLLIN) == 0) return false;
  // Confirmed under the queue's lock: the kernel orders the eventfd's
  // write before poll(2) returns, but ThreadSanitizer cannot see that (the
  // worker writes a dup of the descriptor); the lock it sees.
  bool done = false;
  return nrta_is_completed(seq, &done) == NRT_SUCCESS && done;
}

// A gate the COMPUTE worker blocks on inside the async-exec callback, so
// requests pile up behind it; also counts and records the calls.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = true;
  int entered = 0;
  std::vector<uint64_t> job_ids;
  std::vector<NRT_STATUS> statuses;
  std::vector<uint32_t> model_ids;
  std::vector<uint32_t> vncs;

  static void Callback(void* params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                       NRT_STATUS status) {
    auto* g = static_cast<Gate*>(params);
    std::unique_lock<std::mutex> lock(g->mu);
    ++g->entered;
    g->job_ids.push_back(job_id);
    g->statuses.push_back(status);
    g->model_ids.push_back(model_id);
    g->vncs.push_back(vnc);
    g->cv.notify_all();
    g->cv.wait_for(lock, std::chrono::milliseconds(kWaitMs), [&] { return g->open; });
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu);
    open = false;
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu);
      open = true;
    }
    cv.notify_all();
  }
  bool WaitEntered(int n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::milliseconds(kWaitMs), [&] { return entered >= n; });
  }
};

class AsyncTest : public neuron::testing::NrtTestEnv {
 protected:
  void SetUp() override { StartEnv(); }
  void TearDown() override {
    for (nrt_tensor_t*& t : tensors_) nrt_tensor_free(&t);
    for (nrt_tensor_set_t*& s : sets_) nrt_destroy_tensor_set(&s);
    for (nrta_error_tracker_t* e : trackers_) nrta_error_tracker_destroy(e);
    if (model_ != nullptr) nrt_unload(model_);
    EndEnv({"NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS", "NEURON_RT_NUMERICAL_ERRORS_VERBOSITY"});
  }

  void Init() {
    ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS) << nrt_get_last_error();
  }

  void Load(const char* hlo, int vnc = 0) {
    absl::StatusOr<std::string> neff = neuron::testing::BuildTestNeff(hlo);
    ASSERT_TRUE(neff.ok()) << neff.status();
    ASSERT_EQ(nrt_load(neff->data(), neff->size(), vnc, -1, &model_), NRT_SUCCESS)
        << nrt_get_last_error();
  }

  nrt_tensor_t* Tensor(nrt_tensor_placement_t placement, int vnc, size_t size, const char* name) {
    nrt_tensor_t* t = nullptr;
    EXPECT_EQ(nrt_tensor_allocate(placement, vnc, size, name, &t), NRT_SUCCESS)
        << nrt_get_last_error();
    tensors_.push_back(t);
    return t;
  }

  nrt_tensor_set_t* Set(std::vector<std::pair<const char*, nrt_tensor_t*>> members) {
    nrt_tensor_set_t* s = nullptr;
    EXPECT_EQ(nrt_allocate_tensor_set(&s), NRT_SUCCESS);
    for (auto& [name, t] : members)
      EXPECT_EQ(nrt_add_tensor_to_tensor_set(s, name, t), NRT_SUCCESS);
    sets_.push_back(s);
    return s;
  }

  nrta_error_tracker_t* Tracker(uint32_t lnc = 0) {
    nrta_error_tracker_t* e = nullptr;
    EXPECT_EQ(nrta_error_tracker_create(lnc, &e), NRT_SUCCESS) << nrt_get_last_error();
    trackers_.push_back(e);
    return e;
  }

  // The add_mul model on core 0 with device tensors a, b, sum, product.
  void AddMulSetup() {
    Init();
    Load(kAddMulHlo);
    a_ = Tensor(NRT_TENSOR_PLACEMENT_DEVICE, 0, 24, "a");
    b_ = Tensor(NRT_TENSOR_PLACEMENT_DEVICE, 0, 24, "b");
    sum_ = Tensor(NRT_TENSOR_PLACEMENT_DEVICE, 0, 24, "sum");
    product_ = Tensor(NRT_TENSOR_PLACEMENT_DEVICE, 0, 24, "product");
    ins_ = Set({{"a", a_}, {"b", b_}});
    // The leaves of a tuple result are output0, output1 (the SDK's names).
    outs_ = Set({{"output0", sum_}, {"output1", product_}});
  }

  nrt_model_t* model_ = nullptr;
  nrt_tensor_t *a_ = nullptr, *b_ = nullptr, *sum_ = nullptr, *product_ = nullptr;
  nrt_tensor_set_t *ins_ = nullptr, *outs_ = nullptr;
  std::vector<nrt_tensor_t*> tensors_;
  std::vector<nrt_tensor_set_t*> sets_;
  std::vector<nrta_error_tracker_t*> trackers_;
};

TEST_F(AsyncTest, NeedsTheRuntime) {
  // Before any nrt_init this process made: UNINITIALIZED; after an earlier
  // test's nrt_close: CLOSED.
  auto not_running = [](NRT_STATUS s) { return s == NRT_UNINITIALIZED || s == NRT_CLOSED; };
  nrta_seq_t seq = 0;
  EXPECT_TRUE(not_running(nrta_get_sequence(0, NRTA_XU_COMPUTE, 0, &seq)));
  nrta_error_tracker_t* e = nullptr;
  EXPECT_TRUE(not_running(nrta_error_tracker_create(0, &e)));
  EXPECT_EQ(e, nullptr);
  EXPECT_TRUE(not_running(nrt_async_drain_queued_execs(0)));
  EXPECT_TRUE(not_running(nrt_register_async_exec_callback(nullptr, nullptr)));
  Init();
  nrt_close();
  EXPECT_EQ(nrta_get_sequence(0, NRTA_XU_COMPUTE, 0, &seq), NRT_CLOSED);
  bool done = false;
  EXPECT_EQ(nrta_is_completed(1, &done), NRT_CLOSED);
  int fd = -1;
  EXPECT_EQ(nrta_get_completion_handle(1, &fd), NRT_CLOSED);
  float buf[2];
  EXPECT_EQ(nrta_tensor_read(buf, nullptr, 0, 0, 0, nullptr, &seq), NRT_CLOSED);
  EXPECT_EQ(nrt_async_drain_queued_execs(0), NRT_CLOSED);
}

TEST_F(AsyncTest, WriteExecuteReadChain) {
  AddMulSetup();
  nrta_error_tracker_t* err = Tracker();
  const float a[6] = {1, 2, 3, 4, 5, 6};
  const float b[6] = {10, 20, 30, 40, 50, 60};
  nrta_seq_t wa = 0, wb = 0, ex = 0, rs = 0, rp = 0;
  // Different units are not ordered with each other: each consumer is
  // scheduled once its producer completed.
  ASSERT_EQ(nrta_tensor_write(a_, a, 0, sizeof a, 0, err, &wa), NRT_SUCCESS)
      << nrt_get_last_error();
  ASSERT_EQ(nrta_tensor_write(b_, b, 0, sizeof b, 0, err, &wb), NRT_SUCCESS)
      << nrt_get_last_error();
  ASSERT_TRUE(WaitFor(wb));
  bool done = false;
  ASSERT_EQ(nrta_is_completed(wa, &done), NRT_SUCCESS);
  EXPECT_TRUE(done) << "requests of one queue complete in order";
  ASSERT_EQ(nrta_execute_schedule(model_, ins_, outs_, 0, err, &ex), NRT_SUCCESS)
      << nrt_get_last_error();
  ASSERT_TRUE(WaitFor(ex));
  float sum[6] = {}, product[6] = {};
  ASSERT_EQ(nrta_tensor_read(sum, sum_, 0, sizeof sum, 1, err, &rs), NRT_SUCCESS);
  ASSERT_EQ(nrta_tensor_read(product, product_, 0, sizeof product, 1, err, &rp), NRT_SUCCESS);
  ASSERT_TRUE(WaitFor(rp));
  ASSERT_EQ(nrta_is_completed(rs, &done), NRT_SUCCESS);
  EXPECT_TRUE(done);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(sum[i], a[i] + b[i]) << i;
    EXPECT_EQ(product[i], a[i] * b[i]) << i;
  }
  // A second round on the same queues, with a device-to-device copy.
  const float a2[6] = {-1, -2, -3, -4, -5, -6};
  ASSERT_EQ(nrta_tensor_write(a_, a2, 0, sizeof a2, 0, err, &wa), NRT_SUCCESS);
  ASSERT_TRUE(WaitFor(wa));
  ASSERT_EQ(nrta_execute_schedule(model_, ins_, outs_, 0, err, &ex), NRT_SUCCESS);
  ASSERT_TRUE(WaitFor(ex));
  nrta_seq_t cp = 0;
  ASSERT_EQ(nrta_tensor_copy(sum_, 0, a_, 0, 24, 1, err, &cp), NRT_SUCCESS) << nrt_get_last_error();
  ASSERT_TRUE(WaitFor(cp));
  float copied[6] = {};
  ASSERT_EQ(nrta_tensor_read(copied, a_, 0, sizeof copied, 1, err, &rs), NRT_SUCCESS);
  ASSERT_TRUE(WaitFor(rs));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(copied[i], a2[i] + b[i]) << i;

  const nrta_error_t* list = nullptr;
  size_t count = 99;
  ASSERT_EQ(nrta_error_tracker_get_list(err, &list, &count), NRT_SUCCESS);
  EXPECT_EQ(count, 0u);
}

TEST_F(AsyncTest, SequenceIds) {
  AddMulSetup();
  const float data[6] = {};
  nrta_seq_t s[3] = {};
  nrta_seq_t last = 12345;
  // Nothing finished yet: sequence number 0 of that unit's id.
  ASSERT_EQ(nrta_get_sequence(0, NRTA_XU_TENSOR_WRITE, 0, &last), NRT_SUCCESS)
      << nrt_get_last_error();
  EXPECT_EQ(NRTA_SEQ_GET_SEQ_NUM(last), 0u);
  const uint64_t write_q0 = NRTA_SEQ_GET_XU_ID(last);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(nrta_tensor_write(a_, data, 0, sizeof data, 0, nullptr, &s[i]), NRT_SUCCESS);
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(NRTA_SEQ_GET_XU_ID(s[i]), write_q0);
    EXPECT_EQ(NRTA_SEQ_GET_SEQ_NUM(s[i]), static_cast<uint64_t>(i + 1));
  }
  ASSERT_TRUE(WaitFor(s[2]));
  ASSERT_EQ(nrta_get_sequence(0, NRTA_XU_TENSOR_WRITE, 0, &last), NRT_SUCCESS);
  EXPECT_EQ(last, s[2]);

  // Each unit and queue has its own id and its own numbering.
  nrta_seq_t other = 0, on_core1 = 0, read = 0;
  ASSERT_EQ(nrta_tensor_write(a_, data, 0, sizeof data, 1, nullptr, &other), NRT_SUCCESS);
  EXPECT_NE(NRTA_SEQ_GET_XU_ID(other), write_q0);
  EXPECT_EQ(NRTA_SEQ_GET_SEQ_NUM(other), 1u);
  float back[6];
  // b_, not a_, which queue 1's write may be writing meanwhile.
  ASSERT_EQ(nrta_tensor_read(back, b_, 0, sizeof back, 0, nullptr, &read), NRT_SUCCESS);
  EXPECT_NE(NRTA_SEQ_GET_XU_ID(read), write_q0);
  EXPECT_EQ(NRTA_SEQ_GET_SEQ_NUM(read), 1u);
  nrt_tensor_t* c1 = Tensor(NRT_TENSOR_PLACEMENT_DEVICE, 1, 24, "c1");
  ASSERT_EQ(nrta_tensor_write(c1, data, 0, sizeof data, 0, nullptr, &on_core1), NRT_SUCCESS);
  EXPECT_NE(NRTA_SEQ_GET_XU_ID(on_core1), write_q0);
  EXPECT_EQ(NRTA_SEQ_GET_SEQ_NUM(on_core1), 1u);
  ASSERT_TRUE(WaitFor(other));
  ASSERT_TRUE(WaitFor(read));
  ASSERT_TRUE(WaitFor(on_core1));
  ASSERT_EQ(nrta_get_sequence(1, NRTA_XU_TENSOR_WRITE, 0, &last), NRT_SUCCESS);
  EXPECT_EQ(last, on_core1);

  // Unknown and future sequence ids, bad units, queues and cores.
  bool done = true;
  EXPECT_EQ(nrta_is_completed(s[2] + 1, &done), NRT_INVALID);
  EXPECT_EQ(nrta_is_completed(s[0] - 1, &done), NRT_INVALID);  // number 0
  EXPECT_EQ(nrta_is_completed(0xffffull << 48 | 1, &done), NRT_INVALID);
  int fd = -1;
  EXPECT_EQ(nrta_get_completion_handle(s[2] + 7, &fd), NRT_INVALID);
  EXPECT_EQ(fd, -1);
  EXPECT_EQ(nrta_get_sequence(0, NRTA_XU_COMPUTE, 1, &last), NRT_INVALID);
  EXPECT_NE(std::string(nrt_get_last_error()).find("queue 1"), std::string::npos)
      << nrt_get_last_error();
  EXPECT_EQ(nrta_get_sequence(0, NRTA_XU_TENSOR_READ, 4, &last), NRT_INVALID);
  EXPECT_EQ(nrta_get_sequence(0, NRTA_XU_TYPE_NUM, 0, &last), NRT_INVALID);
  EXPECT_EQ(nrta_get_sequence(7, NRTA_XU_TENSOR_READ, 0, &last), NRT_INVALID);
  EXPECT_EQ(nrta_get_sequence(0, NRTA_XU_TENSOR_READ, 0, nullptr), NRT_INVALID);
  EXPECT_EQ(nrta_tensor_write(a_, data, 0, sizeof data, -1, nullptr, &other), NRT_INVALID);
  EXPECT_EQ(nrta_execute_schedule(model_, ins_, outs_, 1, nullptr, &other), NRT_INVALID);
  EXPECT_NE(std::string(nrt_get_last_error()).find("queue 1"), std::string::npos)
      << nrt_get_last_error();
}

TEST_F(AsyncTest, ScheduleTimeChecks) {
  AddMulSetup();
  float buf[8] = {};
  nrta_seq_t seq = 0;
  EXPECT_EQ(nrta_tensor_write(nullptr, buf, 0, 4, 0, nullptr, &seq), NRT_INVALID_HANDLE);
  EXPECT_EQ(nrta_tensor_write(a_, nullptr, 0, 4, 0, nullptr, &seq), NRT_INVALID);
  EXPECT_EQ(nrta_tensor_write(a_, buf, 4, 24, 0, nullptr, &seq), NRT_INVALID);
  EXPECT_NE(std::string(nrt_get_last_error()).find("nrta_tensor_write"), std::string::npos);
  EXPECT_EQ(nrta_tensor_read(buf, a_, 25, 0, 0, nullptr, &seq), NRT_INVALID);
  EXPECT_EQ(nrta_tensor_read(buf, a_, ~0ull, 2, 0, nullptr, &seq), NRT_INVALID);
  nrt_tensor_t* empty = nullptr;
  ASSERT_EQ(nrt_tensor_allocate_empty("empty", &empty), NRT_SUCCESS);
  tensors_.push_back(empty);
  EXPECT_EQ(nrta_tensor_read(buf, empty, 0, 4, 0, nullptr, &seq), NRT_INVALID);
  nrt_tensor_t* c1 = Tensor(NRT_TENSOR_PLACEMENT_DEVICE, 1, 24, "c1");
  EXPECT_EQ(nrta_tensor_copy(a_, 0, c1, 0, 24, 0, nullptr, &seq), NRT_INVALID);
  EXPECT_NE(std::string(nrt_get_last_error()).find("different cores"), std::string::npos);
  EXPECT_EQ(nrta_tensor_copy(a_, 8, b_, 0, 24, 0, nullptr, &seq), NRT_INVALID);
  // A tracker of another core.
  nrta_error_tracker_t* err1 = Tracker(1);
  EXPECT_EQ(nrta_tensor_write(a_, buf, 0, 4, 0, err1, &seq), NRT_INVALID);
  nrta_error_tracker_t* bad = nullptr;
  EXPECT_EQ(nrta_error_tracker_create(9, &bad), NRT_INVALID);
  EXPECT_EQ(nrta_error_tracker_get_list(nullptr, nullptr, nullptr), NRT_INVALID_HANDLE);

  EXPECT_EQ(nrta_execute_schedule(nullptr, ins_, outs_, 0, nullptr, &seq), NRT_INVALID_HANDLE);
  EXPECT_EQ(nrta_execute_schedule(model_, nullptr, outs_, 0, nullptr, &seq), NRT_INVALID);
  nrt_tensor_set_t* partial = Set({{"a", a_}});
  EXPECT_EQ(nrta_execute_schedule(model_, partial, outs_, 0, nullptr, &seq), NRT_INVALID);
  EXPECT_NE(std::string(nrt_get_last_error()).find("'b'"), std::string::npos)
      << nrt_get_last_error();
  nrt_tensor_t* small = Tensor(NRT_TENSOR_PLACEMENT_HOST, 0, 8, "small");
  nrt_tensor_set_t* short_out = Set({{"output0", small}, {"output1", product_}});
  EXPECT_EQ(nrta_execute_schedule(model_, ins_, short_out, 0, nullptr, &seq), NRT_INVALID);
  nrt_cc_context_t* no_ctx = nullptr;
  EXPECT_EQ(nrta_cc_schedule(&no_ctx, 0, nullptr, &seq), NRT_INVALID_HANDLE);
  EXPECT_EQ(nrta_cc_schedule(nullptr, 0, nullptr, &seq), NRT_INVALID_HANDLE);

  // None of that queued anything.
  nrta_seq_t last = 0;
  ASSERT_EQ(nrta_get_sequence(0, NRTA_XU_TENSOR_WRITE, 0, &last), NRT_SUCCESS);
  EXPECT_EQ(NRTA_SEQ_GET_SEQ_NUM(last), 0u);
  bool done = true;
  EXPECT_EQ(nrta_is_completed(last + 1, &done), NRT_INVALID);

  // Host tensors run on the first held core (or the tracker's).
  nrt_tensor_t* host = Tensor(NRT_TENSOR_PLACEMENT_HOST, 0, 16, "host");
  const float four[4] = {1, 2, 3, 4};
  ASSERT_EQ(nrta_tensor_write(host, four, 0, sizeof four, 1, err1, &seq), NRT_SUCCESS)
      << nrt_get_last_error();
  ASSERT_TRUE(WaitFor(seq));
  ASSERT_EQ(nrta_get_sequence(1, NRTA_XU_TENSOR_WRITE, 1, &last), NRT_SUCCESS);
  EXPECT_EQ(last, seq);
  float back[4] = {};
  ASSERT_EQ(nrt_tensor_read(host, back, 0, sizeof back), NRT_SUCCESS);
  EXPECT_EQ(back[3], 4.0f);
}

TEST_F(AsyncTest, CompletionHandlePolls) {
  AddMulSetup();
  Gate gate;
  ASSERT_EQ(nrt_register_async_exec_callback(&Gate::Callback, &gate), NRT_SUCCESS);
  gate.Close();
  nrta_seq_t ex = 0;
  ASSERT_EQ(nrta_execute_schedule(model_, ins_, outs_, 0, nullptr, &ex), NRT_SUCCESS)
      << nrt_get_last_error();
  int fd = -1;
  ASSERT_EQ(nrta_get_completion_handle(ex, &fd), NRT_SUCCESS) << nrt_get_last_error();
  ASSERT_GE(fd, 0);
  // Held in the callback: not complete, the handle not readable.
  ASSERT_TRUE(gate.WaitEntered(1));
  pollfd p{fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0);
  bool done = true;
  ASSERT_EQ(nrta_is_completed(ex, &done), NRT_SUCCESS);
  EXPECT_FALSE(done);
  // A handle closed early does no harm.
  int early = -1;
  ASSERT_EQ(nrta_get_completion_handle(ex, &early), NRT_SUCCESS);
  close(early);
  gate.Open();
  p.revents = 0;
  ASSERT_EQ(poll(&p, 1, kWaitMs), 1);
  EXPECT_TRUE(p.revents & POLLIN);
  close(fd);
  ASSERT_EQ(nrta_is_completed(ex, &done), NRT_SUCCESS);
  EXPECT_TRUE(done);
  // Handles for finished requests are readable at once; they close on exec.
  ASSERT_EQ(nrta_get_completion_handle(ex, &fd), NRT_SUCCESS);
  p = {fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 1);
  EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
  close(fd);
}

TEST_F(AsyncTest, RunTimeFailureLandsInTracker) {
  // Non-finite outputs are reported (NRT_EXEC_COMPLETED_WITH_NUM_ERR).
  setenv("NEURON_RT_NUMERICAL_ERRORS_VERBOSITY", "critical", 1);
  Init();
  Load(neuron::testing::kLogHlo);
  nrt_tensor_t* x = Tensor(NRT_TENSOR_PLACEMENT_DEVICE, 0, 16, "x");
  nrt_tensor_t* r = Tensor(NRT_TENSOR_PLACEMENT_DEVICE, 0, 16, "r");
  nrt_tensor_info_array_t* info = nullptr;
  ASSERT_EQ(nrt_get_model_tensor_info(model_, &info), NRT_SUCCESS);
  const std::string in_name = info->tensor_array[0].name;
  const std::string out_name = info->tensor_array[1].name;
  nrt_free_model_tensor_info(info);
  nrt_tensor_set_t* ins = Set({{in_name.c_str(), x}});
  nrt_tensor_set_t* outs = Set({{out_name.c_str(), r}});
  nrta_error_tracker_t* err = Tracker();

  const float good[4] = {1, 2, 4, 8}, bad[4] = {-1, 2, 4, 8};
  nrta_seq_t w = 0, e1 = 0, e2 = 0, e3 = 0;
  ASSERT_EQ(nrta_tensor_write(x, good, 0, sizeof good, 0, err, &w), NRT_SUCCESS);
  ASSERT_TRUE(WaitFor(w));
  ASSERT_EQ(nrta_execute_schedule(model_, ins, outs, 0, err, &e1), NRT_SUCCESS);
  ASSERT_TRUE(WaitFor(e1));
  ASSERT_EQ(nrta_tensor_write(x, bad, 0, sizeof bad, 0, err, &w), NRT_SUCCESS);
  ASSERT_TRUE(WaitFor(w));
  ASSERT_EQ(nrta_execute_schedule(model_, ins, outs, 0, err, &e2), NRT_SUCCESS);
  ASSERT_EQ(nrta_execute_schedule(model_, ins, outs, 0, nullptr, &e3), NRT_SUCCESS);
  ASSERT_TRUE(WaitFor(e3));
  bool done = false;
  ASSERT_EQ(nrta_is_completed(e2, &done), NRT_SUCCESS);
  EXPECT_TRUE(done) << "a failed request still completes";

  const nrta_error_t* list = nullptr;
  size_t count = 0;
  ASSERT_EQ(nrta_error_tracker_get_list(err, &list, &count), NRT_SUCCESS);
  ASSERT_EQ(count, 1u) << "only e2 failed and had this tracker";
  EXPECT_EQ(list[0].seq_id, e2);
  EXPECT_EQ(list[0].error_code, static_cast<uint64_t>(NRT_EXEC_COMPLETED_WITH_NUM_ERR));
  // Errors are handed out once.
  ASSERT_EQ(nrta_error_tracker_get_list(err, &list, &count), NRT_SUCCESS);
  EXPECT_EQ(count, 0u);

  // Outputs were written despite the report: log(8) * 8 in the last place.
  float out[4] = {};
  ASSERT_EQ(nrt_tensor_read(r, out, 0, sizeof out), NRT_SUCCESS);
  EXPECT_NEAR(out[3], std::log(8.0f) * 8, 1e-4);
  EXPECT_TRUE(std::isnan(out[0]));
}

TEST_F(AsyncTest, ComputeQueueFull) {
  setenv("NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS", "2", 1);
  AddMulSetup();
  Gate gate;
  ASSERT_EQ(nrt_register_async_exec_callback(&Gate::Callback, &gate), NRT_SUCCESS);
  gate.Close();
  nrta_seq_t first = 0, second = 0, third = 0;
  ASSERT_EQ(nrta_execute_schedule(model_, ins_, outs_, 0, nullptr, &first), NRT_SUCCESS);
  ASSERT_TRUE(gate.WaitEntered(1));
  // One running (held in the callback), one waiting: full.
  ASSERT_EQ(nrta_execute_schedule(model_, ins_, outs_, 0, nullptr, &second), NRT_SUCCESS);
  EXPECT_EQ(nrta_execute_schedule(model_, ins_, outs_, 0, nullptr, &third), NRT_QUEUE_FULL);
  EXPECT_NE(std::string(nrt_get_last_error()).find("NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS"),
            std::string::npos);
  // A refused request took no sequence number.
  EXPECT_EQ(NRTA_SEQ_GET_SEQ_NUM(second), 2u);
  // Other units are not bounded by it, and a synchronous execution still runs.
  nrta_seq_t w = 0;
  const float ones[6] = {1, 1, 1, 1, 1, 1};
  ASSERT_EQ(nrta_tensor_write(a_, ones, 0, sizeof ones, 0, nullptr, &w), NRT_SUCCESS);
  ASSERT_TRUE(WaitFor(w));
  ASSERT_EQ(nrt_execute(model_, ins_, outs_), NRT_SUCCESS) << nrt_get_last_error();
  gate.Open();
  ASSERT_TRUE(WaitFor(second));
  ASSERT_EQ(nrta_execute_schedule(model_, ins_, outs_, 0, nullptr, &third), NRT_SUCCESS)
      << nrt_get_last_error();
  EXPECT_EQ(NRTA_SEQ_GET_SEQ_NUM(third), 3u);
  ASSERT_TRUE(WaitFor(third));
}

TEST_F(AsyncTest, ComputeQueueFullAtOne) {
  setenv("NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS", "1", 1);
  AddMulSetup();
  Gate gate;
  ASSERT_EQ(nrt_register_async_exec_callback(&Gate::Callback, &gate), NRT_SUCCESS);
  gate.Close();
  nrta_seq_t first = 0, second = 0;
  ASSERT_EQ(nrta_execute_schedule(model_, ins_, outs_, 0, nullptr, &first), NRT_SUCCESS);
  EXPECT_EQ(nrta_execute_schedule(model_, ins_, outs_, 0, nullptr, &second), NRT_QUEUE_FULL);
  gate.Open();
  ASSERT_TRUE(WaitFor(first));
  // Back-to-back after completion: the bound never deadlocks the worker.
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(nrta_execute_schedule(model_, ins_, outs_, 0, nullptr, &second), NRT_SUCCESS)
        << i << ": " << nrt_get_last_error();
    ASSERT_TRUE(WaitFor(second));
  }
}

TEST_F(AsyncTest, CallbackFiresPerExecution) {
  AddMulSetup();
  Gate gate;
  ASSERT_EQ(nrt_register_async_exec_callback(&Gate::Callback, &gate), NRT_SUCCESS);
  nrt_model_info_t info{};
  ASSERT_EQ(nrt_get_model_info(model_, &info, sizeof info, nullptr), NRT_SUCCESS);
  nrta_seq_t s[3] = {};
  for (nrta_seq_t& seq : s) {
    ASSERT_EQ(nrta_execute_schedule(model_, ins_, outs_, 0, nullptr, &seq), NRT_SUCCESS);
  }
  // No callback for tensor requests.
  nrta_seq_t w = 0;
  const float zeros[6] = {};
  ASSERT_EQ(nrta_tensor_write(a_, zeros, 0, sizeof zeros, 0, nullptr, &w), NRT_SUCCESS);
  ASSERT_TRUE(WaitFor(w));
  ASSERT_EQ(nrt_async_drain_queued_execs(0), NRT_SUCCESS) << nrt_get_last_error();
  std::lock_guard<std::mutex> lock(gate.mu);
  ASSERT_EQ(gate.job_ids.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(gate.job_ids[i], s[i]);
    EXPECT_EQ(gate.statuses[i], NRT_SUCCESS);
    EXPECT_EQ(gate.vncs[i], 0u);
    EXPECT_EQ(gate.model_ids[i], gate.model_ids[0]);
  }
  EXPECT_NE(gate.model_ids[0], 0u);
}

TEST_F(AsyncTest, DrainWaitsForEveryUnitOfTheCore) {
  AddMulSetup();
  Gate gate;
  ASSERT_EQ(nrt_register_async_exec_callback(&Gate::Callback, &gate), NRT_SUCCESS);
  gate.Close();
  std::vector<float> big(6, 2.0f);
  nrta_seq_t ex = 0, w = 0;
  ASSERT_EQ(nrta_execute_schedule(model_, ins_, outs_, 0, nullptr, &ex), NRT_SUCCESS);
  // Queues are not ordered with each other or the execution: each writes
  // its own half of a tensor the model does not use.
  nrt_tensor_t* spare = Tensor(NRT_TENSOR_PLACEMENT_DEVICE, 0, 24, "spare");
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(nrta_tensor_write(spare, big.data(), (i % 2) * 12, 12, i % 2, nullptr, &w),
              NRT_SUCCESS);
  }
  EXPECT_EQ(nrt_async_drain_queued_execs(5), NRT_INVALID);
  std::atomic<bool> drained{false};
  std::thread drainer([&] {
    EXPECT_EQ(nrt_async_drain_queued_execs(0), NRT_SUCCESS);
    drained = true;
  });
  ASSERT_TRUE(gate.WaitEntered(1));
  bool done = true;
  ASSERT_EQ(nrta_is_completed(ex, &done), NRT_SUCCESS);
  EXPECT_FALSE(done);
  EXPECT_FALSE(drained.load()) << "drain returned while an execution was held";
  gate.Open();
  drainer.join();
  EXPECT_TRUE(drained.load());
  // Everything of core 0 had completed when drain returned.
  ASSERT_EQ(nrta_is_completed(ex, &done), NRT_SUCCESS);
  EXPECT_TRUE(done);
  for (int q = 0; q < 2; ++q) {
    nrta_seq_t last = 0;
    ASSERT_EQ(nrta_get_sequence(0, NRTA_XU_TENSOR_WRITE, q, &last), NRT_SUCCESS);
    EXPECT_EQ(NRTA_SEQ_GET_SEQ_NUM(last), 10u) << "queue " << q;
  }
  // Draining an idle core returns at once.
  EXPECT_EQ(nrt_async_drain_queued_execs(1), NRT_SUCCESS);
}

TEST_F(AsyncTest, CloseWithRequestsPendingRunsThem) {
  AddMulSetup();
  nrta_error_tracker_t* err = Tracker();
  Gate gate;
  ASSERT_EQ(nrt_register_async_exec_callback(&Gate::Callback, &gate), NRT_SUCCESS);
  const float a[6] = {1, 2, 3, 4, 5, 6};
  ASSERT_EQ(nrta_tensor_write(a_, a, 0, sizeof a, 0, err, nullptr), NRT_SUCCESS);
  ASSERT_EQ(nrta_tensor_write(b_, a, 0, sizeof a, 0, err, nullptr), NRT_SUCCESS);
  // The reads are of a tensor nothing else writes meanwhile: queues are
  // not ordered with each other.
  nrt_tensor_t* quiet = Tensor(NRT_TENSOR_PLACEMENT_DEVICE, 0, 24, "quiet");
  const float sevens[6] = {7, 7, 7, 7, 7, 7};
  ASSERT_EQ(nrt_tensor_write(quiet, sevens, 0, sizeof sevens), NRT_SUCCESS);
  std::vector<float> reads(6 * 50, 0.0f);
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(nrta_tensor_read(&reads[6 * i], quiet, 0, 24, i % 2, err, nullptr), NRT_SUCCESS);
  }
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(nrta_execute_schedule(model_, ins_, outs_, 0, err, nullptr), NRT_SUCCESS);
  }
  nrt_close();  // drains: every request above runs first
  {
    std::lock_guard<std::mutex> lock(gate.mu);
    EXPECT_EQ(gate.entered, 4);
  }
  // Every read ran.
  for (int i = 0; i < 50; ++i) EXPECT_EQ(reads[6 * i + 5], 7.0f) << i;
  // The tracker outlives the runtime; nothing failed.
  const nrta_error_t* list = nullptr;
  size_t count = 99;
  ASSERT_EQ(nrta_error_tracker_get_list(err, &list, &count), NRT_SUCCESS);
  EXPECT_EQ(count, 0u);
  // After close, and again after a fresh init, everything starts over.
  nrta_seq_t seq = 0;
  EXPECT_EQ(nrta_tensor_write(a_, a, 0, sizeof a, 0, nullptr, &seq), NRT_CLOSED);
  Init();
  nrt_tensor_t* t = Tensor(NRT_TENSOR_PLACEMENT_DEVICE, 0, 24, "t");
  ASSERT_EQ(nrta_tensor_write(t, a, 0, sizeof a, 0, nullptr, &seq), NRT_SUCCESS);
  EXPECT_EQ(NRTA_SEQ_GET_SEQ_NUM(seq), 1u);
  ASSERT_TRUE(WaitFor(seq));
}

// A program that exits with work queued and without nrt_close exits
// normally: workers still running at exit must not abort or crash it.
TEST_F(AsyncTest, ExitWithoutClose) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        if (nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "") != NRT_SUCCESS) std::exit(2);
        nrt_tensor_t* t = nullptr;
        if (nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, 0, 4096, "t", &t) != NRT_SUCCESS) {
          std::exit(3);
        }
        static char buf[2048];
        for (int i = 0; i < 100; ++i) {
          // Each queue its own half: queues are not ordered with each other.
          if (nrta_tensor_write(t, buf, (i % 2) * sizeof buf, sizeof buf, i % 2, nullptr,
                                nullptr) != NRT_SUCCESS) {
            std::exit(4);
          }
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(AsyncTest, CloseWithNothingStarted) {
  Init();
  nrt_close();
  nrt_close();
}

TEST_F(AsyncTest, ErrorTrackerIsThreadSafe) {
  AddMulSetup();
  nrta_error_tracker_t* err = Tracker();
  // Threads scheduling on the queues and reading the list at once.
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  const float v[6] = {};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        nrta_seq_t seq = 0;
        // Each queue its own half of a_: queues are not ordered with each other.
        if (nrta_tensor_write(a_, v, (t % 2) * 12, 12, t % 2, err, &seq) != NRT_SUCCESS) {
          ++failures;
        }
        const nrta_error_t* list = nullptr;
        size_t count = 0;
        if (nrta_error_tracker_get_list(err, &list, &count) != NRT_SUCCESS) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_EQ(nrt_async_drain_queued_execs(0), NRT_SUCCESS);
  for (int q = 0; q < 2; ++q) {  // two threads per queue
    nrta_seq_t last = 0;
    ASSERT_EQ(nrta_get_sequence(0, NRTA_XU_TENSOR_WRITE, q, &last), NRT_SUCCESS);
    EXPECT_EQ(NRTA_SEQ_GET_SEQ_NUM(last), 100u);
  }
}

// A tensor that shrinks after an execution was checked and queued: the
// run fails, into the tracker, and the request still completes.
TEST_F(AsyncTest, TensorChangedBeforeTheRunFailsIntoTracker) {
  AddMulSetup();
  Gate gate;
  ASSERT_EQ(nrt_register_async_exec_callback(&Gate::Callback, &gate), NRT_SUCCESS);
  gate.Close();
  nrta_error_tracker_t* err = Tracker();
  nrta_seq_t s1 = 0, s2 = 0;
  ASSERT_EQ(nrta_execute_schedule(model_, ins_, outs_, 0, err, &s1), NRT_SUCCESS);
  ASSERT_TRUE(gate.WaitEntered(1));
  ASSERT_EQ(nrta_execute_schedule(model_, ins_, outs_, 0, err, &s2), NRT_SUCCESS);
  float tiny[2];
  ASSERT_EQ(nrt_tensor_attach_buffer(sum_, tiny, sizeof tiny), NRT_SUCCESS);
  gate.Open();
  ASSERT_TRUE(WaitFor(s2));
  const nrta_error_t* list = nullptr;
  size_t count = 0;
  ASSERT_EQ(nrta_error_tracker_get_list(err, &list, &count), NRT_SUCCESS);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(list[0].seq_id, s2);
  EXPECT_EQ(list[0].error_code, static_cast<uint64_t>(NRT_INVALID));
  std::lock_guard<std::mutex> lock(gate.mu);
  ASSERT_EQ(gate.statuses.size(), 2u);
  EXPECT_EQ(gate.statuses[0], NRT_SUCCESS);
  EXPECT_EQ(gate.statuses[1], NRT_INVALID);
}

// The same failure after the tracker was destroyed: nothing to record
// into, and no crash.
TEST_F(AsyncTest, DestroyingATrackerWithRequestsQueued) {
  AddMulSetup();
  Gate gate;
  ASSERT_EQ(nrt_register_async_exec_callback(&Gate::Callback, &gate), NRT_SUCCESS);
  gate.Close();
  nrta_error_tracker_t* err = nullptr;
  ASSERT_EQ(nrta_error_tracker_create(0, &err), NRT_SUCCESS);
  nrta_seq_t s1 = 0, s2 = 0;
  ASSERT_EQ(nrta_execute_schedule(model_, ins_, outs_, 0, err, &s1), NRT_SUCCESS);
  ASSERT_TRUE(gate.WaitEntered(1));
  ASSERT_EQ(nrta_execute_schedule(model_, ins_, outs_, 0, err, &s2), NRT_SUCCESS);
  float tiny[2];
  ASSERT_EQ(nrt_tensor_attach_buffer(sum_, tiny, sizeof tiny), NRT_SUCCESS);
  nrta_error_tracker_destroy(err);
  gate.Open();
  ASSERT_TRUE(WaitFor(s2));
  std::lock_guard<std::mutex> lock(gate.mu);
  ASSERT_EQ(gate.statuses.size(), 2u);
  EXPECT_EQ(gate.statuses[1], NRT_INVALID);
}

}  // namespace
