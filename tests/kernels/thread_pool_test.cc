// The pool's contract (every part once, nested calls serial) on its own
// workers and on oneDNN's OpenMP team, which takes the pool's work once a
// product has loaded oneDNN.
#include "lib/kernels/thread_pool.h"

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "lib/kernels/dnnl_library.h"

namespace neuron::kernels {
namespace {

// Runs Run(parts, ...) with a nested Run inside each part and checks how
// often each outer and inner part ran.
void CheckEveryPartOnce(int parts) {
  std::vector<std::atomic<int>> outer(parts), inner(parts * 3);
  ThreadPool::Global().Run(parts, [&](int p) {
    outer[p].fetch_add(1);
    ThreadPool::Global().Run(3, [&](int q) { inner[p * 3 + q].fetch_add(1); });
  });
  // Parts beyond max_parallelism() are not run (Run's contract).
  const int cap = ThreadPool::Global().max_parallelism();
  for (int p = 0; p < parts; ++p) {
    EXPECT_EQ(outer[p].load(), p < cap ? 1 : 0) << "part " << p;
    for (int q = 0; q < 3; ++q)
      EXPECT_EQ(inner[p * 3 + q].load(), p < cap && q < cap ? 1 : 0) << "part " << p << "." << q;
  }
}

int g_team_calls = 0;

void CountingTeam(int parts, const std::function<void(int)>& fn) {
  ++g_team_calls;
  for (int p = parts - 1; p >= 0; --p) fn(p);
}

TEST(ThreadPool, EveryPartOnceOnItsWorkers) {
  ThreadPool::SetTeamRunner(nullptr);
  CheckEveryPartOnce(2);
  CheckEveryPartOnce(1);
}

TEST(ThreadPool, ATeamRunnerTakesTheWork) {
  g_team_calls = 0;
  ThreadPool::SetTeamRunner(CountingTeam);
  std::vector<int> seen;
  ThreadPool::Global().Run(2, [&](int p) { seen.push_back(p); });
  ThreadPool::SetTeamRunner(nullptr);
  if (ThreadPool::Global().max_parallelism() < 2) {
    GTEST_SKIP() << "one CPU: Run stays serial";
  }
  EXPECT_EQ(g_team_calls, 1);
  EXPECT_EQ(seen, (std::vector<int>{1, 0}));
}

TEST(ThreadPool, OneDnnTeamRunsEveryPartOnce) {
  if (DnnlHandle() == nullptr) {
    GTEST_SKIP() << "libdnnl.so.2 is not installed (or a sanitizer build)";
  }
  CheckEveryPartOnce(2);
  // The parts ran on more than one thread when there are two CPUs.
  std::mutex mu;
  std::set<std::thread::id> threads;
  ThreadPool::Global().Run(2, [&](int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::lock_guard<std::mutex> lock(mu);
    threads.insert(std::this_thread::get_id());
  });
  if (ThreadPool::Global().max_parallelism() >= 2) {
    EXPECT_EQ(threads.size(), 2u);
  }
}

}  // namespace
}  // namespace neuron::kernels
