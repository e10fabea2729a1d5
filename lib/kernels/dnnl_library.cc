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

// ThreadSanitizer builds keep the pool's work on the pool's own workers:
// libgomp is not instrumented, so work handed to its team and back looks
// unsynchronised to the tool, which would then report every kernel that
// splits its work.
#if defined(__SANITIZE_THREAD__)
constexpr bool kPoolOnOmpTeam = false;
#else
constexpr bool kPoolOnOmpTeam = true;
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
    if (!kPoolOnOmpTeam || l.parallel == nullptr || l.thread_num == nullptr || l.num_threads == nullptr) return false;
    ThreadPool::SetTeamRunner(RunOnOmpTeam);
    return true;
  }();
  (void)team;
  return l.handle;
}

namespace {

template <typename Fn>
bool Resolve(void* h, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(h, name));
  return fn != nullptr;
}

}  // namespace

const DnnlApi* Dnnl() {
  static const DnnlApi* api = []() -> const DnnlApi* {
    void* h = DnnlHandle();
    if (h == nullptr) return nullptr;
    static DnnlApi a;
    bool ok = Resolve(h, "dnnl_memory_desc_init_by_strides", a.memory_desc_init_by_strides) &&
              Resolve(h, "dnnl_memory_desc_init_by_tag", a.memory_desc_init_by_tag) &&
              Resolve(h, "dnnl_memory_desc_equal", a.memory_desc_equal) &&
              Resolve(h, "dnnl_matmul_desc_init", a.matmul_desc_init) &&
              Resolve(h, "dnnl_dilated_convolution_forward_desc_init",
                      a.dilated_convolution_forward_desc_init) &&
              Resolve(h, "dnnl_reorder_primitive_desc_create", a.reorder_primitive_desc_create) &&
              Resolve(h, "dnnl_primitive_attr_create", a.primitive_attr_create) &&
              Resolve(h, "dnnl_primitive_attr_destroy", a.primitive_attr_destroy) &&
              Resolve(h, "dnnl_primitive_attr_set_scratchpad_mode",
                      a.primitive_attr_set_scratchpad_mode) &&
              Resolve(h, "dnnl_primitive_desc_create", a.primitive_desc_create) &&
              Resolve(h, "dnnl_primitive_desc_query", a.primitive_desc_query) &&
              Resolve(h, "dnnl_primitive_desc_query_md", a.primitive_desc_query_md) &&
              Resolve(h, "dnnl_primitive_desc_destroy", a.primitive_desc_destroy) &&
              Resolve(h, "dnnl_primitive_create", a.primitive_create) &&
              Resolve(h, "dnnl_primitive_destroy", a.primitive_destroy) &&
              Resolve(h, "dnnl_primitive_execute", a.primitive_execute) &&
              Resolve(h, "dnnl_memory_desc_get_size", a.memory_desc_get_size) &&
              Resolve(h, "dnnl_engine_create", a.engine_create) &&
              Resolve(h, "dnnl_stream_create", a.stream_create) &&
              Resolve(h, "dnnl_stream_wait", a.stream_wait) &&
              Resolve(h, "dnnl_memory_create", a.memory_create) &&
              Resolve(h, "dnnl_memory_destroy", a.memory_destroy);
    if (!ok || a.engine_create(&a.engine, dnnl_cpu, 0) != dnnl_success) return nullptr;
    return &a;
  }();
  return api;
}

bool DnnlExecute(const_dnnl_primitive_t primitive, const DnnlArg* args, int nargs, int threads) {
  const DnnlApi* api = Dnnl();
  if (api == nullptr || nargs > 8) return false;
  // The stream is never destroyed: a thread_local destructor at exit could
  // run after oneDNN's own statics are gone.
  thread_local dnnl_stream_t stream = nullptr;
  if (stream == nullptr &&
      api->stream_create(&stream, api->engine, dnnl_stream_default_flags) != dnnl_success) {
    stream = nullptr;
    return false;
  }
  dnnl_memory_t mem[8] = {};
  dnnl_exec_arg_t exec[8];
  bool ok = true;
  for (int i = 0; i < nargs && ok; ++i) {
    ok = api->memory_create(&mem[i], args[i].desc, api->engine, const_cast<void*>(args[i].data)) ==
         dnnl_success;
    exec[i] = {args[i].kind, mem[i]};
  }
  if (ok) {
    DnnlUseThreads(threads);
    ok = api->primitive_execute(primitive, stream, nargs, exec) == dnnl_success &&
         api->stream_wait(stream) == dnnl_success;
  }
  for (dnnl_memory_t m : mem)
    if (m != nullptr) api->memory_destroy(m);
  return ok;
}

void DnnlUseThreads(int threads) {
  // OpenMP keeps the team size per calling thread: each thread that runs
  // kernels (one per simulated core) sets its own, once per change, and
  // nothing here is shared between cores executing at once.
  thread_local int applied = -1;
  if (applied == threads) return;
  const Library& l = Load();
  if (l.set_threads == nullptr) return;
  l.set_threads(threads);
  applied = threads;
}

}  // namespace neuron::kernels
