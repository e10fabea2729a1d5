#include "lib/plot/plplot_library.h"

#include <dlfcn.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace neuron::plot {
namespace {

// Debian 12's soname first; the development link for another release.
constexpr const char* kSonames[] = {"libplplot.so.17", "libplplot.so"};

PlplotLibrary library;

absl::Status Load() {
  void* handle = nullptr;
  std::string why;
  for (const char* name : kSonames) {
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) break;
    if (why.empty()) why = dlerror();
  }
  if (handle == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("PLplot is not installed (Debian package libplplot17): ", why));
  }
#define NEURON_PLPLOT_RESOLVE(name)                                                       \
  library.name = reinterpret_cast<decltype(library.name)>(dlsym(handle, #name));          \
  if (library.name == nullptr) {                                                          \
    return absl::FailedPreconditionError(absl::StrCat("PLplot lacks " #name ": ", dlerror())); \
  }
  NEURON_PLPLOT_FUNCTIONS(NEURON_PLPLOT_RESOLVE)
#undef NEURON_PLPLOT_RESOLVE
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<const PlplotLibrary*> LoadPlplot() {
  static const absl::Status loaded = Load();
  if (!loaded.ok()) return loaded;
  return &library;
}

const PlplotLibrary& Pl() { return library; }

}  // namespace neuron::plot
