#include "lib/kernels/thread_pool.h"

#include <algorithm>
#include <atomic>

namespace neuron::kernels {
namespace {

std::atomic<ThreadPool::TeamRunner> g_team_runner{nullptr};

}  // namespace

void ThreadPool::SetTeamRunner(TeamRunner runner) { g_team_runner = runner; }

ThreadPool& ThreadPool::Global() {
  static ThreadPool* pool = new ThreadPool(
      std::max(1, static_cast<int>(std::thread::hardware_concurrency()) - 1));
  return *pool;
}

ThreadPool::ThreadPool(int workers) {
  for (int i = 0; i < workers; ++i)
    workers_.emplace_back([this, i] { WorkerLoop(i + 1); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::WorkerLoop(int index) {
  unsigned seen = 0;
  while (true) {
    const std::function<void(int)>* fn;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (index >= parts_) continue;
      fn = fn_;
    }
    (*fn)(index);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_cv_.notify_all();
    }
  }
}

void ThreadPool::Run(int parts, const std::function<void(int)>& fn) {
  parts = std::min(parts, max_parallelism());
  if (TeamRunner team = g_team_runner.load(std::memory_order_acquire); team != nullptr && parts > 1) {
    team(parts, fn);
    return;
  }
  bool serial = parts <= 1;
  if (!serial) {
    std::lock_guard<std::mutex> lock(mu_);
    if (busy_) serial = true;
    else busy_ = true;
  }
  if (serial) {
    for (int i = 0; i < parts; ++i) fn(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    parts_ = parts;
    pending_ = parts - 1;
    ++generation_;
  }
  work_cv_.notify_all();
  fn(0);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return pending_ == 0; });
  busy_ = false;
}

}  // namespace neuron::kernels
