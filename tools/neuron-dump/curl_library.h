// libcurl, loaded when the first HTTP request is about to be sent (dlopen)
// rather than linked: libcurl.so.4 pulls in about thirty shared objects
// (TLS, Kerberos, LDAP, SSH, IDN, ...) whose loading and relocation made
// every start of neuron-dump several times slower than /bin/true, uploading
// or not; and a neuron-dump that only shows dumps then runs without libcurl
// installed. curl.h is still used for its types and constants. Call the
// functions as Curl().curl_easy_init() and so on: the fields carry the
// symbols' names.
#ifndef NEURON_TOOLS_NEURON_DUMP_CURL_LIBRARY_H_
#define NEURON_TOOLS_NEURON_DUMP_CURL_LIBRARY_H_

#include <curl/curl.h>

#include "absl/status/statusor.h"

namespace neuron::dump {

// libcurl's soname in Debian 12's libcurl4.
inline constexpr const char* kCurlSoname = "libcurl.so.4";

// The functions neuron-dump calls, by their symbol names.
#define NEURON_CURL_FUNCTIONS(X)                                                          \
  X(curl_global_init) X(curl_easy_init) X(curl_easy_setopt) X(curl_easy_perform)         \
  X(curl_easy_getinfo) X(curl_easy_cleanup) X(curl_easy_strerror) X(curl_slist_append) \
  X(curl_slist_free_all)

struct CurlLibrary {
#define NEURON_CURL_FIELD(name) decltype(&::name) name = nullptr;
  NEURON_CURL_FUNCTIONS(NEURON_CURL_FIELD)
#undef NEURON_CURL_FIELD
};

// Loads libcurl once and initialises it (curl_global_init); the error is one
// line naming libcurl.so.4 and saying why it cannot be used.
absl::StatusOr<const CurlLibrary*> LoadCurl();

// The library LoadCurl loaded; only after it succeeded.
const CurlLibrary& Curl();

// For tests only: makes the next LoadCurl open `soname` instead (nullptr:
// libcurl.so.4 again), so the error path can be exercised where libcurl is
// installed. Not thread-safe against requests in flight.
void SetCurlSonameForTesting(const char* soname);

}  // namespace neuron::dump

#endif  // NEURON_TOOLS_NEURON_DUMP_CURL_LIBRARY_H_
