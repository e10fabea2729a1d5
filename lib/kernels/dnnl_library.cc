#include "lib/kernels/dnnl_library.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>

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

struct Library {
  void* handle = nullptr;
  OmpSetThreadsFn set_threads = nullptr;
};

const Library& Load() {
  static const Library lib = [] {
    Library l;
    if (!kUseDnnl) return l;
    // oneDNN's OpenMP workers otherwise spin for a while after every
    // product, on the cores our own pool needs for the next step: the MLP
    // benchmark ran 3x slower that way on a busy host. libgomp reads this
    // when it loads; a user's own setting wins.
    if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr) {
      setenv("OMP_WAIT_POLICY", "passive", 0);
    }
    l.handle = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (l.handle != nullptr)
      l.set_threads = reinterpret_cast<OmpSetThreadsFn>(dlsym(l.handle, "omp_set_num_threads"));
    return l;
  }();
  return lib;
}

}  // namespace

void* DnnlHandle() { return Load().handle; }

void DnnlUseThreads(int threads) {
  static std::atomic<int> applied{-1};
  const Library& l = Load();
  if (l.set_threads != nullptr && applied.exchange(threads) != threads) l.set_threads(threads);
}

}  // namespace neuron::kernels
