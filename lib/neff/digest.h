// Hashes and random bytes from OpenSSL's libcrypto (also used later for S3
// request signing, so the project relies on one well-tested implementation).
#ifndef NEURON_LIB_NEFF_DIGEST_H_
#define NEURON_LIB_NEFF_DIGEST_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "lib/neff/byte_sink.h"

namespace neff {

enum class DigestKind { kSha256, kMd5 };

// An incremental digest. Usable as a ByteSink that forwards to `next`
// (which may be null) while hashing, so the writer hashes as it streams.
class Digest : public ByteSink {
 public:
  explicit Digest(DigestKind kind, ByteSink* next = nullptr);
  ~Digest() override;
  Digest(const Digest&) = delete;
  Digest& operator=(const Digest&) = delete;

  absl::Status Append(std::string_view bytes) override;
  // The digest, zero-padded to 32 bytes (md5 uses the first 16).
  absl::StatusOr<std::array<uint8_t, 32>> Finish();
  uint64_t bytes_seen() const { return bytes_seen_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  ByteSink* next_;
  uint64_t bytes_seen_ = 0;
};

// One-shot digest of `bytes`.
absl::StatusOr<std::array<uint8_t, 32>> ComputeDigest(DigestKind kind, std::string_view bytes);

// Fills `out` with cryptographically random bytes.
absl::Status RandomBytes(uint8_t* out, std::size_t size);

}  // namespace neff

#endif  // NEURON_LIB_NEFF_DIGEST_H_
