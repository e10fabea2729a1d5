// Optional libraries opened when first needed (dlopen) rather than linked,
// so a tool that never uses them neither pays their start-up cost nor needs
// them installed: PLplot for pictures, libcurl for uploads.
#ifndef NEURON_LIB_SUPPORT_SHARED_LIBRARY_H_
#define NEURON_LIB_SUPPORT_SHARED_LIBRARY_H_

#include <initializer_list>
#include <string_view>

#include "absl/status/statusor.h"

namespace neuron {

// Opens the first of `sonames` that loads (RTLD_NOW | RTLD_LOCAL). On
// failure the status message is dlerror()'s reason for the first name, for
// the caller to put after its own words (which package to install).
absl::StatusOr<void*> OpenSharedLibrary(std::initializer_list<const char*> sonames);

// The address of `symbol` in `handle`, or "LIBRARY lacks SYMBOL: reason".
absl::StatusOr<void*> FindSymbol(void* handle, std::string_view library, const char* symbol);

}  // namespace neuron

#endif  // NEURON_LIB_SUPPORT_SHARED_LIBRARY_H_
