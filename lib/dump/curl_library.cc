#include "lib/dump/curl_library.h"

#include <dlfcn.h>

#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace neuron::dump {
namespace {

absl::Mutex mutex;
const char* soname ABSL_GUARDED_BY(mutex) = kCurlSoname;
std::optional<absl::Status> loaded ABSL_GUARDED_BY(mutex);  // unset: not tried yet
CurlLibrary library;

absl::Status Load(const char* name) {
  void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        name, " cannot be loaded, so nothing can be sent over HTTP (Debian package libcurl4): ",
        dlerror()));
  }
  CurlLibrary found;
#define NEURON_CURL_RESOLVE(fn)                                                              \
  found.fn = reinterpret_cast<decltype(found.fn)>(dlsym(handle, #fn));                       \
  if (found.fn == nullptr) {                                                                 \
    return absl::FailedPreconditionError(absl::StrCat(name, " lacks " #fn ": ", dlerror())); \
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
