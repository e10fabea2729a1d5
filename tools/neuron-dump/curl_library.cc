#include "tools/neuron-dump/curl_library.h"

#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "lib/support/shared_library.h"

namespace neuron::dump {
namespace {

absl::Mutex mutex;
const char* soname ABSL_GUARDED_BY(mutex) = kCurlSoname;
std::optional<absl::Status> loaded ABSL_GUARDED_BY(mutex);  // unset: not tried yet
CurlLibrary library;

absl::Status Load(const char* name) {
  absl::StatusOr<void*> handle = OpenSharedLibrary({name});
  if (!handle.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        name, " cannot be loaded, so nothing can be sent over HTTP (Debian package libcurl4): ",
        handle.status().message()));
  }
  CurlLibrary found;
#define NEURON_CURL_RESOLVE(fn)                                                  \
  if (absl::StatusOr<void*> f = FindSymbol(*handle, name, #fn); f.ok()) {        \
    found.fn = reinterpret_cast<decltype(found.fn)>(*f);                         \
  } else {                                                                       \
    return f.status();                                                           \
  }
  NEURON_CURL_FUNCTIONS(NEURON_CURL_RESOLVE)
#undef NEURON_CURL_RESOLVE
  if (const CURLcode rc = found.curl_global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK) {
    return absl::InternalError(
        absl::StrCat(name, " cannot initialise: ", found.curl_easy_strerror(rc)));
  }
  library = found;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<const CurlLibrary*> LoadCurl() {
  absl::MutexLock lock(&mutex);
  if (!loaded.has_value()) loaded = Load(soname);
  if (!loaded->ok()) return *loaded;
  return &library;
}

const CurlLibrary& Curl() { return library; }

void SetCurlSonameForTesting(const char* name) {
  absl::MutexLock lock(&mutex);
  soname = name != nullptr ? name : kCurlSoname;
  loaded.reset();
}

}  // namespace neuron::dump
