#include "lib/neff/compression.h"

#include <zlib.h>
// ZSTD_findDecompressedSize is in the static-only API; we link libzstd.a.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "absl/strings/str_format.h"
#include "lib/neff/error.h"

namespace neff {
namespace {

constexpr uint64_t kMinInitialCapacity = 1 << 20;

// A malloc'd buffer grown with realloc: for large sizes glibc moves pages
// with mremap instead of copying, so growing by doubling stays cheap, and
// nothing is allocated up front just because a header claims a huge size.
class GrowableBuffer {
 public:
  GrowableBuffer() = default;
  ~GrowableBuffer() { std::free(data_); }
  GrowableBuffer(const GrowableBuffer&) = delete;
  GrowableBuffer& operator=(const GrowableBuffer&) = delete;

  bool Reserve(uint64_t capacity) {
    if (capacity <= capacity_) return true;
    void* grown = std::realloc(data_, capacity);
    if (grown == nullptr) return false;
    data_ = static_cast<char*>(grown);
    capacity_ = capacity;
    return true;
  }
  char* data() { return data_; }
  uint64_t capacity() const { return capacity_; }
  uint64_t size = 0;

  SharedBytes Release() {
    SharedBytes out;
    out.size = size;
    out.data = std::shared_ptr<const char>(data_, [](const char* p) { std::free(const_cast<char*>(p)); });
    data_ = nullptr;
    capacity_ = 0;
    return out;
  }

 private:
  char* data_ = nullptr;
  uint64_t capacity_ = 0;
};

// Makes room for more output: doubles, but never beyond `limit` (+1 so that
// exceeding the limit is observable).
absl::Status Grow(GrowableBuffer& buffer, uint64_t limit) {
  uint64_t ceiling = limit == UINT64_MAX ? limit : limit + 1;
  uint64_t want = std::min(ceiling, std::max<uint64_t>(buffer.capacity() * 2, kMinInitialCapacity));
  if (want <= buffer.capacity()) return absl::OkStatus();
  if (!buffer.Reserve(want)) {
    return NeffError(NRT_FAIL_HOST_MEM_ALLOC,
                     absl::StrFormat("cannot allocate %d bytes for the decompressed NEFF payload", want));
  }
  return absl::OkStatus();
}

absl::Status LimitError(uint64_t limit) {
  return NeffError(NRT_INVALID, absl::StrFormat("decompressed NEFF payload exceeds the limit of %d bytes "
                                                "(corrupt, or a decompression bomb)", limit));
}

}  // namespace

struct ZstdSink::State {
  ZSTD_CCtx* cctx = nullptr;
  std::string out;
};

ZstdSink::ZstdSink(ByteSink* next) : state_(std::make_unique<State>()), next_(next) {}

ZstdSink::~ZstdSink() { ZSTD_freeCCtx(state_->cctx); }

absl::StatusOr<std::unique_ptr<ZstdSink>> ZstdSink::Create(ByteSink* next, int level,
                                                           uint64_t pledged_size) {
  std::unique_ptr<ZstdSink> sink(new ZstdSink(next));
  sink->state_->cctx = ZSTD_createCCtx();
  if (sink->state_->cctx == nullptr) return NeffError(NRT_FAIL_HOST_MEM_ALLOC, "cannot create a zstd context");
  ZSTD_CCtx* cctx = sink->state_->cctx;
  // zstd would silently clamp an out-of-range level; refuse it instead.
  if (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel() ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level))) {
    return NeffError(NRT_INVALID, absl::StrFormat("zstd compression level %d is out of range", level));
  }
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
  // Worker threads when libzstd was built with them; Debian's static
  // libzstd.a is not, and then this quietly stays single-threaded.
  ZSTD_bounds workers = ZSTD_cParam_getBounds(ZSTD_c_nbWorkers);
  if (!ZSTD_isError(workers.error) && workers.upperBound > 0) {
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_nbWorkers, std::min(4, workers.upperBound));
  }
  if (ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cctx, pledged_size))) {
    return NeffError(NRT_FAILURE, "zstd refused the payload size");
  }
  sink->state_->out.resize(ZSTD_CStreamOutSize());
  return sink;
}

absl::Status ZstdSink::Drive(std::string_view input, bool end) {
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  while (true) {
    ZSTD_outBuffer out{state_->out.data(), state_->out.size(), 0};
    size_t remaining = ZSTD_compressStream2(state_->cctx, &out, &in, end ? ZSTD_e_end : ZSTD_e_continue);
    if (ZSTD_isError(remaining)) {
      return NeffError(NRT_FAILURE, absl::StrFormat("zstd compression failed: %s", ZSTD_getErrorName(remaining)));
    }
    if (out.pos > 0) {
      absl::Status status = next_->Append(std::string_view(state_->out.data(), out.pos));
      if (!status.ok()) return status;
    }
    bool done = end ? remaining == 0 : in.pos == in.size;
    if (done) return absl::OkStatus();
  }
}

absl::Status ZstdSink::Append(std::string_view bytes) { return Drive(bytes, false); }

absl::Status ZstdSink::Finish() { return Drive({}, true); }

bool LooksLikeZstd(std::string_view bytes) {
  return bytes.size() >= 4 && static_cast<unsigned char>(bytes[0]) == 0x28 &&
         static_cast<unsigned char>(bytes[1]) == 0xb5 && static_cast<unsigned char>(bytes[2]) == 0x2f &&
         static_cast<unsigned char>(bytes[3]) == 0xfd;
}

bool LooksLikeGzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

absl::StatusOr<SharedBytes> DecompressZstd(std::string_view input, uint64_t limit) {
  unsigned long long declared = ZSTD_findDecompressedSize(input.data(), input.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR) {
    return NeffError(NRT_INVALID, "NEFF payload is not a valid zstd stream (corrupt or truncated)");
  }
  if (declared == ZSTD_CONTENTSIZE_UNKNOWN) {
    return NeffError(NRT_INVALID, "NEFF payload's zstd frame does not declare its size");
  }
  if (declared > limit) {
    return NeffError(NRT_INVALID, absl::StrFormat("NEFF payload declares %d decompressed bytes, more than "
                                                  "the limit of %d (a decompression bomb?)",
                                                  declared, limit));
  }
  GrowableBuffer buffer;
  // Start from what the compressed size makes plausible, not from the claim.
  uint64_t initial = std::min<uint64_t>(declared, std::max<uint64_t>(kMinInitialCapacity, input.size() * 8));
  if (!buffer.Reserve(std::max<uint64_t>(initial, 1))) {
    return NeffError(NRT_FAIL_HOST_MEM_ALLOC, "cannot allocate memory for the NEFF payload");
  }
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  if (dctx == nullptr) return NeffError(NRT_FAIL_HOST_MEM_ALLOC, "cannot create a zstd context");
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> owner(dctx, ZSTD_freeDCtx);
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  size_t last = 0;
  while (true) {
    if (buffer.size == buffer.capacity()) {
      if (buffer.size > declared) break;
      absl::Status status = Grow(buffer, declared);
      if (!status.ok()) return status;
    }
    ZSTD_outBuffer out{buffer.data() + buffer.size, buffer.capacity() - buffer.size, 0};
    last = ZSTD_decompressStream(dctx, &out, &in);
    buffer.size += out.pos;
    if (ZSTD_isError(last)) {
      return NeffError(NRT_INVALID, absl::StrFormat("NEFF payload does not decompress: zstd: %s",
                                                    ZSTD_getErrorName(last)));
    }
    if (buffer.size > declared) break;
    if (last == 0 && in.pos == in.size) break;            // every frame complete
    if (in.pos == in.size && out.pos < out.size) break;  // starved: truncated
  }
  if (buffer.size > declared) {
    return NeffError(NRT_INVALID, "NEFF payload decompresses to more bytes than its zstd frame declares");
  }
  if (last != 0) return NeffError(NRT_INVALID, "NEFF payload's zstd stream is truncated");
  if (buffer.size != declared) {
    return NeffError(NRT_INVALID, "NEFF payload decompresses to fewer bytes than its zstd frame declares");
  }
  return buffer.Release();
}

absl::StatusOr<SharedBytes> InflateGzip(std::string_view input, uint64_t limit) {
  z_stream zs{};
  // 16 + MAX_WBITS: expect a gzip wrapper.
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return NeffError(NRT_FAILURE, "cannot start zlib");
  std::unique_ptr<z_stream, int (*)(z_stream*)> owner(&zs, inflateEnd);
  GrowableBuffer buffer;
  if (!buffer.Reserve(std::min<uint64_t>(limit + 1, std::max<uint64_t>(kMinInitialCapacity, input.size() * 4)))) {
    return NeffError(NRT_FAIL_HOST_MEM_ALLOC, "cannot allocate memory for the NEFF payload");
  }
  const unsigned char* next = reinterpret_cast<const unsigned char*>(input.data());
  uint64_t in_left = input.size();
  while (true) {
    if (buffer.size > limit) return LimitError(limit);
    if (buffer.size == buffer.capacity()) {
      absl::Status status = Grow(buffer, limit);
      if (!status.ok()) return status;
    }
    // zlib counts in uInt: feed and drain at most 1 GiB per call.
    uInt in_chunk = static_cast<uInt>(std::min<uint64_t>(in_left, 1u << 30));
    uInt out_chunk = static_cast<uInt>(std::min<uint64_t>(buffer.capacity() - buffer.size, 1u << 30));
    zs.next_in = const_cast<unsigned char*>(next);
    zs.avail_in = in_chunk;
    zs.next_out = reinterpret_cast<unsigned char*>(buffer.data() + buffer.size);
    zs.avail_out = out_chunk;
    int rc = inflate(&zs, Z_NO_FLUSH);
    uint64_t consumed = in_chunk - zs.avail_in;
    next += consumed;
    in_left -= consumed;
    buffer.size += out_chunk - zs.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc == Z_BUF_ERROR && in_left == 0 && zs.avail_out > 0) {
      return NeffError(NRT_INVALID, "NEFF payload's gzip stream is truncated");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return NeffError(NRT_INVALID, absl::StrFormat("NEFF payload does not decompress: zlib: %s",
                                                    zs.msg != nullptr ? zs.msg : "error"));
    }
  }
  if (buffer.size > limit) return LimitError(limit);
  return buffer.Release();
}

}  // namespace neff
