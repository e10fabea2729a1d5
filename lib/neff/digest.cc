#include "lib/neff/digest.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "lib/neff/error.h"

namespace neff {

struct Digest::State {
  EVP_MD_CTX* ctx = nullptr;
  bool ok = false;
};

Digest::Digest(DigestKind kind, ByteSink* next) : state_(std::make_unique<State>()), next_(next) {
  state_->ctx = EVP_MD_CTX_new();
  const EVP_MD* md = kind == DigestKind::kSha256 ? EVP_sha256() : EVP_md5();
  state_->ok = state_->ctx != nullptr && md != nullptr &&
               EVP_DigestInit_ex(state_->ctx, md, nullptr) == 1;
}

Digest::~Digest() { EVP_MD_CTX_free(state_->ctx); }

absl::Status Digest::Append(std::string_view bytes) {
  if (!state_->ok) return NeffError(NRT_FAILURE, "libcrypto could not start a digest");
  if (!bytes.empty() && EVP_DigestUpdate(state_->ctx, bytes.data(), bytes.size()) != 1) {
    return NeffError(NRT_FAILURE, "libcrypto digest update failed");
  }
  bytes_seen_ += bytes.size();
  return next_ != nullptr ? next_->Append(bytes) : absl::OkStatus();
}

absl::StatusOr<std::array<uint8_t, 32>> Digest::Finish() {
  std::array<uint8_t, 32> out{};
  unsigned int length = 0;
  unsigned char md[EVP_MAX_MD_SIZE];
  if (!state_->ok || EVP_DigestFinal_ex(state_->ctx, md, &length) != 1 || length > out.size()) {
    return NeffError(NRT_FAILURE, "libcrypto digest failed");
  }
  std::copy(md, md + length, out.begin());
  state_->ok = false;
  return out;
}

absl::StatusOr<std::array<uint8_t, 32>> ComputeDigest(DigestKind kind, std::string_view bytes) {
  Digest digest(kind);
  absl::Status status = digest.Append(bytes);
  if (!status.ok()) return status;
  return digest.Finish();
}

absl::Status RandomBytes(uint8_t* out, std::size_t size) {
  if (RAND_bytes(out, static_cast<int>(size)) != 1) {
    return NeffError(NRT_FAILURE, "libcrypto could not produce random bytes");
  }
  return absl::OkStatus();
}

}  // namespace neff
