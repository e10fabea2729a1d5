// AWS credentials and region the way the AWS CLI finds them:
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, else the
// profile AWS_PROFILE (default "default") of AWS_SHARED_CREDENTIALS_FILE
// (~/.aws/credentials) and AWS_CONFIG_FILE (~/.aws/config). Region: the
// flag, AWS_REGION, AWS_DEFAULT_REGION, the profile's region, us-east-1.
// Secrets are never printed: describe() names where they came from only.
#ifndef NEURON_TOOLS_NEURON_DUMP_AWS_CREDENTIALS_H_
#define NEURON_TOOLS_NEURON_DUMP_AWS_CREDENTIALS_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace neuron::dump {

struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // "" when none
  std::string source;         // "environment", "profile 'x' in /root/.aws/credentials"
};

using GetEnv = std::function<std::optional<std::string>(std::string_view)>;
GetEnv ProcessGetEnv();

// Fails with a message that says which variables and files were looked at.
absl::StatusOr<AwsCredentials> LoadCredentials(const GetEnv& env);
// `flag` wins when not empty.
std::string ResolveRegion(const GetEnv& env, const std::string& flag);

}  // namespace neuron::dump

#endif  // NEURON_TOOLS_NEURON_DUMP_AWS_CREDENTIALS_H_
