#include "lib/plot/plplot_library.h"

#include "absl/strings/str_cat.h"
#include "lib/support/shared_library.h"

namespace neuron::plot {
namespace {

PlplotLibrary library;

absl::Status Load() {
  // Debian 12's soname first; the development link for another release.
  absl::StatusOr<void*> handle = OpenSharedLibrary({"libplplot.so.17", "libplplot.so"});
  if (!handle.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "PLplot is not installed (Debian package libplplot17): ", handle.status().message()));
  }
#define NEURON_PLPLOT_RESOLVE(name)                                          \
  if (absl::StatusOr<void*> f = FindSymbol(*handle, "PLplot", #name); f.ok()) { \
    library.name = reinterpret_cast<decltype(library.name)>(*f);             \
  } else {                                                                   \
    return f.status();                                                       \
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
