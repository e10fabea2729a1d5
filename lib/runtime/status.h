// Runtime errors: absl::Status values carrying the NRT_STATUS the C API
// returns, the same convention lib/neff uses (neff::NeffError), so a NEFF
// error keeps its code all the way up to nrt_load() and the tools.
#ifndef NEURON_LIB_RUNTIME_STATUS_H_
#define NEURON_LIB_RUNTIME_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "lib/neff/error.h"
#include "neuron/nrt_status.h"

namespace neuron::runtime {

// A failed status carrying `code` (must not be NRT_SUCCESS).
inline absl::Status RtError(NRT_STATUS code, const std::string& message) {
  return neff::NeffError(code, message);
}

// The NRT code of a status (NRT_FAILURE for one without a code).
inline NRT_STATUS NrtStatusOf(const absl::Status& status) { return neff::NrtStatusOf(status); }

// "context: message", same code.
inline absl::Status WithContext(const absl::Status& status, const std::string& context) {
  return neff::WithContext(status, context);
}

// "<message> (NRT_NAME)": how the tools print a runtime failure.
std::string DescribeForCli(const absl::Status& status);

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_STATUS_H_
