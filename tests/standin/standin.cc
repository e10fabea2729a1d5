// A stand-in libnrt.so.1 for tests/checks/foreign_runtime.sh: a runtime
// library that is not the project's, as the SDK's would be to the tools.
// It exports the SDK's functions, all 126 and nothing else (standin.map:
// no nrt_get_last_error, no nrt_tools_* extras; forwarders.inc and the map
// are written by gen_forwarders.py from include/nrt), and forwards each to
// the project's real library,
// opened from the path NRT_STANDIN_REAL names, counting the calls. At exit
// the counts go to the file NRT_STANDIN_COUNTS names, one "function count"
// a line, so the check can see which calls came through here.
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "nrt/ndebug_stream.h"
#include "nrt/nrt.h"
#include "nrt/nrt_async.h"
#include "nrt/nrt_async_sendrecv.h"
#include "nrt/nrt_experimental.h"
#include "nrt/nrt_profile.h"
#include "nrt/nrt_status.h"
#include "nrt/nrt_sys_trace.h"
#include "nrt/nrt_version.h"

namespace {

// The real library, opened at the first call (a failure is fatal: the
// check cannot go on without it).
void* Real(const char* name) {
  static void* handle = [] {
    const char* path = std::getenv("NRT_STANDIN_REAL");
    void* h = path != nullptr ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
    if (h == nullptr) {
      std::fprintf(stderr, "standin libnrt: cannot open NRT_STANDIN_REAL=%s: %s\n",
                   path != nullptr ? path : "(unset)", dlerror());
      std::abort();
    }
    return h;
  }();
  void* f = dlsym(handle, name);
  if (f == nullptr) {
    std::fprintf(stderr, "standin libnrt: the real library has no %s\n", name);
    std::abort();
  }
  return f;
}

struct Counter {
  const char* name;
  std::atomic<unsigned long> calls{0};
};

#define FORWARD(name, ret, params, args) Counter count_##name{#name};
#include "tests/standin/forwarders.inc"
#undef FORWARD

const Counter* const kCounters[] = {
#define FORWARD(name, ret, params, args) &count_##name,
#include "tests/standin/forwarders.inc"
#undef FORWARD
};

// Written at exit, as the tools return from main.
struct CountsAtExit {
  ~CountsAtExit() {
    const char* path = std::getenv("NRT_STANDIN_COUNTS");
    if (path == nullptr) return;
    FILE* f = std::fopen(path, "a");
    if (f == nullptr) return;
    for (const Counter* c : kCounters) {
      if (c->calls.load() != 0) std::fprintf(f, "%s %lu\n", c->name, c->calls.load());
    }
    std::fclose(f);
  }
} counts_at_exit;

}  // namespace

extern "C" {

#define FORWARD(name, ret, params, args)                                \
  ret name params {                                                     \
    count_##name.calls.fetch_add(1);                                    \
    static const auto real = reinterpret_cast<decltype(&::name)>(Real(#name)); \
    return real args;                                                   \
  }
#include "tests/standin/forwarders.inc"
#undef FORWARD

}  // extern "C"
