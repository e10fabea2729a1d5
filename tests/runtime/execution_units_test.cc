// The execution-unit engine on its own (no runtime, no C API): queue
// order, sequence numbering, eventfd completion handles, error trackers,
// the COMPUTE admission count and callback, drain and shutdown.
#include "lib/runtime/execution_units.h"

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "lib/runtime/status.h"

namespace neuron::runtime {
namespace {

constexpr int kWaitMs = 10000;

// Requests blocking until Open(), so others pile up behind them.
class Latch {
 public:
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

ExecutionUnits::Request Req(std::function<NRT_STATUS()> run) {
  ExecutionUnits::Request r;
  r.run = std::move(run);
  return r;
}

bool Readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN) != 0;
}

TEST(ExecutionUnitsTest, SequenceIdEncoding) {
  constexpr XuId id = MakeXuId(3, XuKind::kTensorOp, 2);
  static_assert(id == 0x0322);
  constexpr XuSeq seq = MakeSeq(id, 7);
  static_assert(seq == 0x0322000000000007ull);
  static_assert(SeqXuId(seq) == id && SeqNumber(seq) == 7);
  EXPECT_STREQ(XuKindName(XuKind::kCollectives), "COLLECTIVES");
}

TEST(ExecutionUnitsTest, RunsOneQueueInOrderAndNumbersFromOne) {
  ExecutionUnits units;
  EXPECT_EQ(units.LastCompleted(1, XuKind::kTensorWrite, 1),
            MakeSeq(MakeXuId(1, XuKind::kTensorWrite, 1), 0));
  std::mutex mu;
  std::vector<int> order;
  std::vector<XuSeq> seqs;
  for (int i = 0; i < 50; ++i) {
    auto record = [&, i] {
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(i);
      return NRT_SUCCESS;
    };
    absl::StatusOr<XuSeq> seq = units.Enqueue(1, XuKind::kTensorWrite, 1, Req(record));
    ASSERT_TRUE(seq.ok()) << seq.status();
    EXPECT_EQ(*seq, MakeSeq(MakeXuId(1, XuKind::kTensorWrite, 1), i + 1));
    seqs.push_back(*seq);
  }
  ASSERT_TRUE(units.Drain(1).ok());
  std::vector<int> want(50);
  for (int i = 0; i < 50; ++i) want[i] = i;
  EXPECT_EQ(order, want);
  for (XuSeq seq : seqs) EXPECT_EQ(units.IsCompleted(seq).value_or(false), true);
  EXPECT_EQ(units.LastCompleted(1, XuKind::kTensorWrite, 1), seqs.back());
  // Each queue numbers its own requests.
  absl::StatusOr<XuSeq> other =
      units.Enqueue(1, XuKind::kTensorWrite, 0, Req([] { return NRT_SUCCESS; }));
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(SeqNumber(*other), 1u);
}

TEST(ExecutionUnitsTest, RejectsBadQueuesCoresAndUnknownSequences) {
  ExecutionUnits units;
  auto noop = [] { return NRT_SUCCESS; };
  absl::StatusOr<XuSeq> s = units.Enqueue(0, XuKind::kCompute, 1, Req(noop));
  EXPECT_EQ(NrtStatusOf(s.status()), NRT_INVALID);
  EXPECT_EQ(s.status().message(),
            "queue 1 is not a queue of the COMPUTE unit (it has queue 0 only)");
  s = units.Enqueue(0, XuKind::kTensorRead, 2, Req(noop));
  EXPECT_EQ(s.status().message(),
            "queue 2 is not a queue of the TENSOR_READ unit (it has queues 0-1)");
  s = units.Enqueue(0, XuKind::kCollectives, 3, Req(noop));
  EXPECT_EQ(s.status().message(),
            "queue 3 is not a queue of the COLLECTIVES unit (it has queues 0-2)");
  EXPECT_TRUE(units.Enqueue(0, XuKind::kCollectives, 2, Req(noop)).ok());
  s = units.Enqueue(0, static_cast<XuKind>(9), 0, Req(noop));
  EXPECT_EQ(s.status().message(), "unknown execution unit 9");
  s = units.Enqueue(256, XuKind::kTensorRead, 0, Req(noop));
  EXPECT_EQ(s.status().message(), "logical core 256 is out of range");
  ExecutionUnits::Request r = Req(noop);
  r.tracker = std::make_shared<ErrorTracker>(1);
  s = units.Enqueue(0, XuKind::kTensorRead, 0, std::move(r));
  EXPECT_EQ(NrtStatusOf(s.status()), NRT_INVALID);

  const XuSeq never = MakeSeq(MakeXuId(0, XuKind::kTensorOp, 0), 1);
  EXPECT_EQ(NrtStatusOf(units.IsCompleted(never).status()), NRT_INVALID);
  EXPECT_EQ(NrtStatusOf(units.CompletionFd(never).status()), NRT_INVALID);
  absl::StatusOr<XuSeq> one = units.Enqueue(0, XuKind::kTensorOp, 0, Req(noop));
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(units.IsCompleted(*one).ok());
  EXPECT_FALSE(units.IsCompleted(*one + 1).ok());  // not scheduled yet
  EXPECT_FALSE(units.IsCompleted(*one - 1).ok());  // number 0
}

TEST(ExecutionUnitsTest, CompletionFdBecomesReadable) {
  ExecutionUnits units;
  Latch latch;
  auto blocked = [&] {
    latch.Wait();
    return NRT_SUCCESS;
  };
  absl::StatusOr<XuSeq> seq = units.Enqueue(0, XuKind::kTensorRead, 0, Req(blocked));
  ASSERT_TRUE(seq.ok());
  absl::StatusOr<int> fd = units.CompletionFd(*seq);
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_FALSE(Readable(*fd, 50));
  EXPECT_EQ(units.IsCompleted(*seq).value_or(true), false);
  latch.Open();
  EXPECT_TRUE(Readable(*fd, kWaitMs));
  EXPECT_EQ(units.IsCompleted(*seq).value_or(false), true);
  close(*fd);
  // For a finished request the handle is readable at once.
  absl::StatusOr<int> done = units.CompletionFd(*seq);
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(Readable(*done, 0));
  close(*done);
}

TEST(ExecutionUnitsTest, FailuresLandInTheTrackerAndTheRequestCompletes) {
  ExecutionUnits units;
  auto tracker = std::make_shared<ErrorTracker>(2);
  std::vector<XuSeq> seqs;
  for (NRT_STATUS status : {NRT_SUCCESS, NRT_EXEC_BAD_INPUT, NRT_SUCCESS, NRT_TIMEOUT}) {
    ExecutionUnits::Request r = Req([status] { return status; });
    r.tracker = tracker;
    absl::StatusOr<XuSeq> seq = units.Enqueue(2, XuKind::kTensorOp, 1, std::move(r));
    ASSERT_TRUE(seq.ok()) << seq.status();
    seqs.push_back(*seq);
  }
  ASSERT_TRUE(units.Drain(2).ok());
  std::vector<ErrorTracker::Error> errors = tracker->Take();
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].seq, seqs[1]);
  EXPECT_EQ(errors[0].status, NRT_EXEC_BAD_INPUT);
  EXPECT_EQ(errors[1].seq, seqs[3]);
  EXPECT_EQ(errors[1].status, NRT_TIMEOUT);
  EXPECT_TRUE(tracker->Take().empty());  // taken once
  EXPECT_EQ(units.IsCompleted(seqs[3]).value_or(false), true);
}

TEST(ExecutionUnitsTest, TrackerDroppedWhileQueuedIsSafe) {
  ExecutionUnits units;
  Latch latch;
  std::weak_ptr<ErrorTracker> weak;
  {
    auto tracker = std::make_shared<ErrorTracker>(0);
    weak = tracker;
    ExecutionUnits::Request r = Req([&] {
      latch.Wait();
      return NRT_FAILURE;
    });
    r.tracker = tracker;
    ASSERT_TRUE(units.Enqueue(0, XuKind::kTensorWrite, 0, std::move(r)).ok());
  }
  EXPECT_FALSE(weak.expired());  // the queued request holds it
  latch.Open();
  ASSERT_TRUE(units.Drain(0).ok());
}

TEST(ExecutionUnitsTest, DrainWaitsForQueuedWorkOfItsCoreOnly) {
  ExecutionUnits units;
  Latch other_core;
  std::atomic<int> done{0};
  auto blocked = [&] {
    other_core.Wait();
    return NRT_SUCCESS;
  };
  auto count = [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ++done;
    return NRT_SUCCESS;
  };
  ASSERT_TRUE(units.Enqueue(1, XuKind::kTensorRead, 0, Req(blocked)).ok());
  for (int q = 0; q < 2; ++q) {
    for (int i = 0; i < 10; ++i) {
      EXPECT_TRUE(units.Enqueue(0, XuKind::kTensorOp, q, Req(count)).ok());
    }
  }
  ASSERT_TRUE(units.Drain(0).ok());  // core 1 stays blocked
  EXPECT_EQ(done.load(), 20);
  other_core.Open();
  ASSERT_TRUE(units.Drain(1).ok());
}

TEST(ExecutionUnitsTest, ComputeAdmissionCallbackAndDrainFromCallback) {
  ExecutionUnits units;
  Latch latch;
  std::mutex mu;
  std::vector<XuSeq> called;
  std::vector<uint32_t> models;
  absl::Status drain_in_callback;
  std::atomic<bool> completed_before_callback{false};
  units.SetExecCallback([&](uint32_t model_id, int core, XuSeq seq, NRT_STATUS status) {
    EXPECT_EQ(core, 0);
    EXPECT_EQ(status, NRT_SUCCESS);
    // The request is not complete until its callback returns.
    if (units.IsCompleted(seq).value_or(true)) completed_before_callback = true;
    std::lock_guard<std::mutex> lock(mu);
    called.push_back(seq);
    models.push_back(model_id);
    drain_in_callback = units.Drain(0);
  });
  auto request = [&](uint32_t model_id) {
    ExecutionUnits::Request r = Req([&] {
      latch.Wait();
      return NRT_SUCCESS;
    });
    r.model_id = model_id;
    r.compute_limit = 2;
    return r;
  };
  absl::StatusOr<XuSeq> first = units.Enqueue(0, XuKind::kCompute, 0, request(7));
  absl::StatusOr<XuSeq> second = units.Enqueue(0, XuKind::kCompute, 0, request(8));
  ASSERT_TRUE(first.ok() && second.ok());
  absl::StatusOr<XuSeq> third = units.Enqueue(0, XuKind::kCompute, 0, request(9));
  EXPECT_EQ(NrtStatusOf(third.status()), NRT_QUEUE_FULL);
  EXPECT_EQ(third.status().message(),
            "the COMPUTE queue of logical core 0 already holds 2 requests "
            "(NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS=2)");
  latch.Open();
  ASSERT_TRUE(units.Drain(0).ok());
  EXPECT_FALSE(completed_before_callback.load());
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(called, (std::vector<XuSeq>{*first, *second}));
    EXPECT_EQ(models, (std::vector<uint32_t>{7, 8}));
    EXPECT_EQ(NrtStatusOf(drain_in_callback), NRT_INVALID);
  }
  // Slots are free again once requests finished.
  absl::StatusOr<XuSeq> again = units.Enqueue(0, XuKind::kCompute, 0, request(9));
  EXPECT_TRUE(again.ok()) << again.status();
  ASSERT_TRUE(units.Drain(0).ok());
}

TEST(ExecutionUnitsTest, ShutdownRunsQueuedWorkThenStartsOver) {
  ExecutionUnits units;
  std::atomic<int> ran{0};
  bool called = false;
  units.SetExecCallback([&](uint32_t, int, XuSeq, NRT_STATUS) { called = true; });
  XuSeq last = 0;
  auto count = [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ++ran;
    return NRT_SUCCESS;
  };
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<XuSeq> seq = units.Enqueue(0, XuKind::kTensorWrite, 1, Req(count));
    ASSERT_TRUE(seq.ok());
    last = *seq;
  }
  units.Shutdown();
  EXPECT_EQ(ran.load(), 10);
  // The queues are forgotten: their ids name nothing, numbering restarts,
  // and the callback is gone.
  EXPECT_FALSE(units.IsCompleted(last).ok());
  absl::StatusOr<XuSeq> fresh =
      units.Enqueue(0, XuKind::kTensorWrite, 1, Req([] { return NRT_SUCCESS; }));
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(SeqNumber(*fresh), 1u);
  ASSERT_TRUE(units.Enqueue(0, XuKind::kCompute, 0, Req([] { return NRT_SUCCESS; })).ok());
  ASSERT_TRUE(units.Drain(0).ok());
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace neuron::runtime
