// The EC2 instance metadata service, version 2: a session token first (PUT),
// then the values asked for (GET), all within one deadline, so a host that is
// not EC2 (or blocks the address) costs at most that long.
#ifndef NEURON_TOOLS_NEURON_LS_IMDS_CLIENT_H_
#define NEURON_TOOLS_NEURON_LS_IMDS_CLIENT_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace neuron::ls {

struct ImdsEndpoint {
  std::string address = "169.254.169.254";  // IPv4 only, as the service listens
  int port = 80;
  int timeout_ms = 1000;                    // for everything together
};

// The values of the meta-data paths asked for ("instance-type" ->
// "trn1.32xlarge"); an error says which step failed (connect, token, a path).
absl::StatusOr<std::map<std::string, std::string>> QueryImds(
    const ImdsEndpoint& endpoint, const std::vector<std::string>& meta_data_paths);

}  // namespace neuron::ls

#endif  // NEURON_TOOLS_NEURON_LS_IMDS_CLIENT_H_
