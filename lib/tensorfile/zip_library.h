// libzip (Debian libzip4), loaded when the first .npz is read or written
// (dlopen) rather than linked: libzip.so.4 pulls in GnuTLS, Nettle, bzip2,
// xz and zstd, whose loading would slow every tool's start, bundle or not.
// zip.h is used for its types and constants. Call the functions as
// Zip().zip_open(...): the fields carry the symbols' names.
#ifndef NEURON_LIB_TENSORFILE_ZIP_LIBRARY_H_
#define NEURON_LIB_TENSORFILE_ZIP_LIBRARY_H_

#include <zip.h>

#include "absl/status/statusor.h"

namespace neuron::tensorfile {

inline constexpr const char* kZipSoname = "libzip.so.4";

#define NEURON_ZIP_FUNCTIONS(X)                                                              \
  X(zip_open_from_source) X(zip_source_buffer_create) X(zip_source_file_create)              \
  X(zip_source_function_create) X(zip_source_free) X(zip_get_num_entries) X(zip_stat_index)  \
  X(zip_fopen_index) X(zip_fread) X(zip_fclose) X(zip_file_strerror) X(zip_close)             \
  X(zip_discard) X(zip_open) X(zip_strerror) X(zip_error_init) X(zip_error_fini) X(zip_error_strerror)    \
  X(zip_error_set) X(zip_file_add) X(zip_set_file_compression) X(zip_error_to_data)

struct ZipLibrary {
#define NEURON_ZIP_FIELD(name) decltype(&::name) name = nullptr;
  NEURON_ZIP_FUNCTIONS(NEURON_ZIP_FIELD)
#undef NEURON_ZIP_FIELD
};

// Loads libzip once; the error is one line naming libzip.so.4, the Debian
// package, and why it cannot be used.
absl::StatusOr<const ZipLibrary*> LoadZip();

// The library LoadZip loaded; only after it succeeded.
const ZipLibrary& Zip();

}  // namespace neuron::tensorfile

#endif  // NEURON_LIB_TENSORFILE_ZIP_LIBRARY_H_
