#include "lib/kernels/dnnl_library.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <functional>

#include "lib/kernels/thread_pool.h"

namespace neuron::kernels {
namespace {

// Sanitizer builds stay off oneDNN: its OpenMP worker threads make
// LeakSanitizer's stop-the-world tracer crash at exit.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUseDnnl = false;
#else
constexpr bool kUseDnnl = true;
#endif

using OmpSetThreadsFn = void (*)(int);
using OmpIntFn = int (*)();
using GompParallelFn = void (*)(void (*)(void*), void*, unsigned, unsigned);

struct Library {
  void* handle = nullptr;
  OmpSetThreadsFn set_threads = nullptr;
  // libgomp's entry points, for running the pool's work on its team.
  GompParallelFn parallel = nullptr;
  OmpIntFn thread_num = nullptr, num_threads = nullptr;
};

const Library& Load();

struct TeamJob {
  const std::function<void(int)>* fn;
  int parts;
};

// One OpenMP region: thread t does parts t, t + team size, ... (a nested
// region gets a team of one, which then does them all).
void TeamBody(void* arg) {
  const Library& l = Load();
  const TeamJob& job = *static_cast<const TeamJob*>(arg);
  const int team = l.num_threads();
  for (int p = l.thread_num(); p < job.parts; p += team) (*job.fn)(p);
}

void RunOnOmpTeam(int parts, const std::function<void(int)>& fn) {
  TeamJob job{&fn, parts};
  Load().parallel(TeamBody, &job, static_cast<unsigned>(parts), 0);
}

const Library& Load() {
  static const Library lib = [] {
    Library l;
    if (!kUseDnnl) return l;
    // After a product oneDNN's OpenMP workers spin before they sleep.
    // The pool's work runs on that same team (below), so a short spin
    // is what makes the next step start at once; libgomp's default
    // (300,000 rounds) would keep a core busy for milliseconds after the
    // last product, and sleeping at once ("passive") made every product
    // pay a wake-up and futex barriers (the MLP benchmark ran 13% slower).
    // libgomp reads this when it loads; a user's own setting wins.
    if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr) {
      setenv("GOMP_SPINCOUNT", "30000", 0);
    }
    l.handle = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (l.handle == nullptr) return l;
    l.set_threads = reinterpret_cast<OmpSetThreadsFn>(dlsym(l.handle, "omp_set_num_threads"));
    l.parallel = reinterpret_cast<GompParallelFn>(dlsym(l.handle, "GOMP_parallel"));
    l.thread_num = reinterpret_cast<OmpIntFn>(dlsym(l.handle, "omp_get_thread_num"));
    l.num_threads = reinterpret_cast<OmpIntFn>(dlsym(l.handle, "omp_get_num_threads"));
    return l;
  }();
  return lib;
}

}  // namespace

void* DnnlHandle() {
  const Library& l = Load();
  // From the first product on, the pool's work shares oneDNN's team.
  static const bool team = [&l] {
    if (l.parallel == nullptr || l.thread_num == nullptr || l.num_threads == nullptr) return false;
    ThreadPool::SetTeamRunner(RunOnOmpTeam);
    return true;
  }();
  (void)team;
  return l.handle;
}

void DnnlUseThreads(int threads) {
  static std::atomic<int> applied{-1};
  const Library& l = Load();
  if (l.set_threads != nullptr && applied.exchange(threads) != threads) l.set_threads(threads);
}

}  // namespace neuron::kernels
