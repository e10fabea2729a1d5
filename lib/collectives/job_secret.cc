#include "lib/collectives/job_secret.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace neuron::collectives {

Mac HmacSha256(std::string_view key, std::string_view data) {
  Mac mac{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac.data(), &len);
  return mac;
}

bool MacEqual(const Mac& a, const Mac& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

absl::StatusOr<std::string> JobSecretFromEnv(const config::EnvLookup& env) {
  const std::optional<std::string> value = env(kJobSecretVar);
  const std::optional<std::string> file = env(kJobSecretFileVar);
  if (value && file) {
    return absl::InvalidArgumentError(absl::StrCat(
        kJobSecretVar, " and ", kJobSecretFileVar, " are both set: set one"));
  }
  if (value) {
    if (value->empty()) {
      return absl::InvalidArgumentError(absl::StrCat(kJobSecretVar, " is set but empty"));
    }
    return *value;
  }
  if (!file) return std::string();
  std::ifstream in(*file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat(kJobSecretFileVar, "=", *file, ": cannot read the file"));
  }
  std::string secret = text.str();
  // A file written by echo ends in a newline the other ranks' may not have.
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  if (secret.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kJobSecretFileVar, "=", *file, ": the file is empty"));
  }
  return secret;
}

std::string RandomBytes(size_t n) {
  std::string out(n, '\0');
  if (n > 0 && RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1) {
    // OpenSSL without entropy: the kernel's, through the standard library.
    std::random_device rd;
    for (char& c : out) c = static_cast<char>(rd());
  }
  return out;
}

std::string NewJobSecret() { return absl::BytesToHexString(RandomBytes(32)); }

}  // namespace neuron::collectives
