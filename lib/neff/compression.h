// Payload compression: zstd for our NEFFs (fast, and streaming so a writer
// never holds a compressed copy), gzip reading for the real compiler's NEFFs.
// Decompression always runs against a byte limit so a small hostile file
// cannot make the reader allocate without bound (a decompression bomb).
#ifndef NEURON_LIB_NEFF_COMPRESSION_H_
#define NEURON_LIB_NEFF_COMPRESSION_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/neff/byte_sink.h"

namespace neff {

// A read-only byte buffer with shared ownership, so views into it (member
// data) can outlive the function that filled it.
struct SharedBytes {
  std::shared_ptr<const char> data;
  std::size_t size = 0;
  std::string_view view() const { return {data.get(), size}; }
};

// Input bytes per zstd frame by default (WriteOptions::zstd_frame_bytes).
constexpr uint64_t kZstdFrameBytes = 8ull << 20;

// Compresses everything appended into a stream of independent zstd frames
// (one per `frame_bytes` of input; their concatenation is a standard zstd
// stream that `zstd -d` reads) written to `next`. `pledged_size` (the exact
// number of bytes that will be appended) fixes each frame's content size,
// recorded in its header; readers use it to place the frame's output.
class ZstdSink : public ByteSink {
 public:
  static absl::StatusOr<std::unique_ptr<ZstdSink>> Create(ByteSink* next, int level,
                                                          uint64_t pledged_size,
                                                          uint64_t frame_bytes = kZstdFrameBytes);
  ~ZstdSink() override;
  absl::Status Append(std::string_view bytes) override;
  // Ends the frame; must be called once after the last Append.
  absl::Status Finish();

 private:
  struct State;
  explicit ZstdSink(ByteSink* next);
  absl::Status Drive(std::string_view input, bool end);
  absl::Status StartFrame();
  std::unique_ptr<State> state_;
  ByteSink* next_;
};

bool LooksLikeZstd(std::string_view bytes);
bool LooksLikeGzip(std::string_view bytes);

// Decompresses a stream of zstd frames. Every frame must declare its content
// size; the total must not exceed `limit`, and each frame's output must match
// its declaration. Several frames are decompressed on parallel threads, each
// into its own place of one buffer; a single-frame stream (older NEFFs) takes
// one thread.
absl::StatusOr<SharedBytes> DecompressZstd(std::string_view input, uint64_t limit);

// Decompresses a gzip stream (RFC 1952), refusing more than `limit` bytes.
absl::StatusOr<SharedBytes> InflateGzip(std::string_view input, uint64_t limit);

}  // namespace neff

#endif  // NEURON_LIB_NEFF_COMPRESSION_H_
