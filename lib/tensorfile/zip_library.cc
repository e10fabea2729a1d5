#include "lib/tensorfile/zip_library.h"

#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "lib/support/shared_library.h"

namespace neuron::tensorfile {
namespace {

absl::Mutex mutex;
std::optional<absl::Status> loaded ABSL_GUARDED_BY(mutex);  // unset: not tried yet
ZipLibrary library;

absl::Status Load() {
  absl::StatusOr<void*> handle = OpenSharedLibrary({kZipSoname});
  if (!handle.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        kZipSoname, " cannot be loaded, so .npz files cannot be used (Debian package libzip4): ",
        handle.status().message()));
  }
  ZipLibrary found;
#define NEURON_ZIP_RESOLVE(fn)                                                   \
  if (absl::StatusOr<void*> f = FindSymbol(*handle, kZipSoname, #fn); f.ok()) {  \
    found.fn = reinterpret_cast<decltype(found.fn)>(*f);                         \
  } else {                                                                       \
    return f.status();                                                           \
  }
  NEURON_ZIP_FUNCTIONS(NEURON_ZIP_RESOLVE)
#undef NEURON_ZIP_RESOLVE
  library = found;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<const ZipLibrary*> LoadZip() {
  absl::MutexLock lock(&mutex);
  if (!loaded.has_value()) loaded = Load();
  if (!loaded->ok()) return *loaded;
  return &library;
}

const ZipLibrary& Zip() { return library; }

}  // namespace neuron::tensorfile
