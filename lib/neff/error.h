// How the NEFF library reports failures: an absl::Status whose message is one
// line for the user and whose payload carries the NRT_STATUS the runtime must
// return (NRT_INVALID for a damaged file, NRT_UNSUPPORTED_NEFF_VERSION for a
// version or feature this build cannot load). Keeping the NRT code inside the
// status lets every layer add context without losing the code.
#ifndef NEURON_LIB_NEFF_ERROR_H_
#define NEURON_LIB_NEFF_ERROR_H_

#include <string>

#include "absl/status/status.h"
#include "neuron/nrt_status.h"

namespace neff {

// Builds a failed status carrying `code`; the absl code is derived from it.
absl::Status NeffError(NRT_STATUS code, const std::string& message);

// The NRT code of a status: NRT_SUCCESS when ok, the payload when present,
// NRT_FAILURE for a status that did not come from NeffError.
NRT_STATUS NrtStatusOf(const absl::Status& status);

// Returns `status` with "context: " put before its message, keeping the code.
absl::Status WithContext(const absl::Status& status, const std::string& context);

}  // namespace neff

#endif  // NEURON_LIB_NEFF_ERROR_H_
