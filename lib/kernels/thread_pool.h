// A tiny fixed pool for splitting large kernels across the host cores. Work
// is only handed out above a size threshold chosen by the caller, so small
// executions never pay for a thread wake-up.
#ifndef NEURON_LIB_KERNELS_THREAD_POOL_H_
#define NEURON_LIB_KERNELS_THREAD_POOL_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace neuron::kernels {

class ThreadPool {
 public:
  // The process-wide pool with (hardware threads - 1) workers, at least 1.
  static ThreadPool& Global();

  explicit ThreadPool(int workers);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int max_parallelism() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn(0) .. fn(parts-1), part 0 on the caller; returns when all are
  // done. parts is capped at max_parallelism(). Not reentrant: a nested
  // call from inside fn runs serially.
  void Run(int parts, const std::function<void(int)>& fn);

  // Another team of threads to run every later Run() on instead of this
  // pool's workers; it must call fn(0) .. fn(parts-1), each once, and
  // return when all are done. Set once oneDNN's OpenMP team exists, so the
  // kernels between two products run on the threads that just did the
  // product (still spinning, so no wake-up) instead of a second set of
  // threads competing with them for the cores.
  using TeamRunner = void (*)(int parts, const std::function<void(int)>& fn);
  static void SetTeamRunner(TeamRunner runner);

 private:
  void WorkerLoop(int index);
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  const std::function<void(int)>* fn_ = nullptr;
  int parts_ = 0;
  int pending_ = 0;
  unsigned generation_ = 0;
  bool stop_ = false;
  bool busy_ = false;
};

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_THREAD_POOL_H_
