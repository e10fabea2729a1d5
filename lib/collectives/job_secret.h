// The per-job secret that keeps strangers out of a job: every rank holds
// the same bytes (NEURON_TOOLS_JOB_SECRET, or the contents of the file
// NEURON_TOOLS_JOB_SECRET_FILE), and proves it with an HMAC-SHA256 of a
// fresh challenge, so the secret itself never crosses the network.
#ifndef NEURON_LIB_COLLECTIVES_JOB_SECRET_H_
#define NEURON_LIB_COLLECTIVES_JOB_SECRET_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "lib/config/config.h"

namespace neuron::collectives {

inline constexpr const char* kJobSecretVar = "NEURON_TOOLS_JOB_SECRET";
inline constexpr const char* kJobSecretFileVar = "NEURON_TOOLS_JOB_SECRET_FILE";

using Mac = std::array<uint8_t, 32>;

// HMAC-SHA256 of data under key (RFC 2104, OpenSSL's).
Mac HmacSha256(std::string_view key, std::string_view data);

// Compares in time independent of where the MACs differ.
bool MacEqual(const Mac& a, const Mac& b);

// The secret from the environment: "" when neither variable is set. A
// secret file that cannot be read, or is empty, is an error naming it;
// both variables set is an error too (which one would the other ranks use?).
absl::StatusOr<std::string> JobSecretFromEnv(const config::EnvLookup& env);

// 32 random bytes as 64 hex digits, for a launcher to give its ranks.
std::string NewJobSecret();

// n random bytes (challenges).
std::string RandomBytes(size_t n);

}  // namespace neuron::collectives

#endif  // NEURON_LIB_COLLECTIVES_JOB_SECRET_H_
