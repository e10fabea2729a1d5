#include "lib/support/shared_library.h"

#include <dlfcn.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace neuron {

absl::StatusOr<void*> OpenSharedLibrary(std::initializer_list<const char*> sonames) {
  std::string why;
  for (const char* name : sonames) {
    if (void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL); handle != nullptr) return handle;
    if (why.empty()) why = dlerror();
  }
  return absl::FailedPreconditionError(why);
}

absl::StatusOr<void*> FindSymbol(void* handle, std::string_view library, const char* symbol) {
  dlerror();  // clear a stale error, so the one reported is this lookup's
  if (void* address = dlsym(handle, symbol); address != nullptr) return address;
  const char* why = dlerror();
  return absl::FailedPreconditionError(
      absl::StrCat(std::string(library), " lacks ", symbol, ": ", why != nullptr ? why : "a null symbol"));
}

}  // namespace neuron
