#include "lib/neff/compression.h"

#include <zlib.h>
// ZSTD_findDecompressedSize is in the static-only API; we link libzstd.a.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "lib/neff/error.h"

namespace neff {
namespace {

constexpr uint64_t kMinInitialCapacity = 1 << 20;
constexpr size_t kMaxThreads = 16;

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

// One frame of a zstd stream: where its bytes are, and where its output goes.
struct ZstdFrame {
  uint64_t in_offset = 0;
  uint64_t in_size = 0;
  uint64_t out_offset = 0;
  uint64_t content_size = 0;
};

// Walks the frame headers (no decompression): every frame must be complete
// and declare a content size that its blocks can actually produce.
absl::StatusOr<std::vector<ZstdFrame>> ListZstdFrames(std::string_view input) {
  std::vector<ZstdFrame> frames;
  uint64_t at = 0, out = 0;
  while (at < input.size()) {
    const char* src = input.data() + at;
    const size_t left = input.size() - at;
    size_t size = ZSTD_findFrameCompressedSize(src, left);
    if (ZSTD_isError(size)) {
      return NeffError(NRT_INVALID, absl::StrFormat("NEFF payload's zstd frame %d (at payload byte %d) is "
                                                    "truncated or corrupt: %s",
                                                    frames.size() + 1, at, ZSTD_getErrorName(size)));
    }
    unsigned long long content = ZSTD_getFrameContentSize(src, size);
    if (content == ZSTD_CONTENTSIZE_ERROR) {
      return NeffError(NRT_INVALID, "NEFF payload is not a valid zstd stream (corrupt or truncated)");
    }
    if (content == ZSTD_CONTENTSIZE_UNKNOWN) {
      return NeffError(NRT_INVALID, "NEFF payload's zstd frame does not declare its size");
    }
    // A header's claim beyond what its blocks could produce is corrupt, and
    // must not size an allocation.
    unsigned long long bound = ZSTD_decompressBound(src, size);
    if (bound == ZSTD_CONTENTSIZE_ERROR || content > bound) {
      return NeffError(NRT_INVALID, absl::StrFormat("NEFF payload's zstd frame %d declares %d bytes, more "
                                                    "than its blocks can hold (corrupt)",
                                                    frames.size() + 1, content));
    }
    frames.push_back({at, size, out, content});
    at += size;
    out += content;
  }
  if (frames.empty()) return NeffError(NRT_INVALID, "NEFF payload's zstd stream has no frame");
  return frames;
}

// The output buffer, mapped so its pages come lazily (a claimed size costs
// only what is written). No MADV_HUGEPAGE: with the default THP defrag
// ("madvise") it makes the faults compact memory synchronously; measured on
// a shared host, a 1 GiB load took 0.65-2.0 s (up to 2.7 s of system time)
// with it, a steady 0.85 s without.
absl::StatusOr<SharedBytes> AllocateOutput(uint64_t size) {
  SharedBytes out;
  out.size = size;
  const uint64_t length = std::max<uint64_t>(size, 1);
  void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return NeffError(NRT_FAIL_HOST_MEM_ALLOC,
                     absl::StrFormat("cannot allocate %d bytes for the decompressed NEFF payload", size));
  }
  out.data = std::shared_ptr<const char>(static_cast<const char*>(p),
                                         [length](const char* q) { ::munmap(const_cast<char*>(q), length); });
  return out;
}

// Decompresses every frame into its place in `out`, on up to one thread per
// core; the first failing frame (in stream order) names the error.
absl::Status DecompressFrames(std::string_view input, const std::vector<ZstdFrame>& frames, char* out) {
  const size_t threads =
      std::min<size_t>({frames.size(), std::max(1u, std::thread::hardware_concurrency()), kMaxThreads});
  std::vector<absl::Status> errors(frames.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    ZSTD_DCtx* dctx = ZSTD_createDCtx();
    std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> owner(dctx, ZSTD_freeDCtx);
    for (size_t i = next++; i < frames.size(); i = next++) {
      const ZstdFrame& f = frames[i];
      if (dctx == nullptr) {
        errors[i] = NeffError(NRT_FAIL_HOST_MEM_ALLOC, "cannot create a zstd context");
        continue;
      }
      size_t n = ZSTD_decompressDCtx(dctx, out + f.out_offset, f.content_size, input.data() + f.in_offset,
                                     f.in_size);
      if (ZSTD_isError(n)) {
        errors[i] = NeffError(NRT_INVALID, absl::StrFormat("NEFF payload does not decompress: zstd frame %d "
                                                           "of %d: %s",
                                                           i + 1, frames.size(), ZSTD_getErrorName(n)));
      } else if (n != f.content_size) {
        errors[i] = NeffError(NRT_INVALID, absl::StrFormat("NEFF payload's zstd frame %d decompresses to %d "
                                                           "bytes, not the %d it declares",
                                                           i + 1, n, f.content_size));
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const absl::Status& e : errors) {
    if (!e.ok()) return e;
  }
  return absl::OkStatus();
}

}  // namespace

struct ZstdSink::State {
  ZSTD_CCtx* cctx = nullptr;
  std::string out;
  uint64_t frame_bytes = 0;
  uint64_t unframed = 0;    // pledged bytes not yet given to a frame
  uint64_t frame_left = 0;  // bytes the current frame still expects
};

ZstdSink::ZstdSink(ByteSink* next) : state_(std::make_unique<State>()), next_(next) {}

ZstdSink::~ZstdSink() { ZSTD_freeCCtx(state_->cctx); }

absl::StatusOr<std::unique_ptr<ZstdSink>> ZstdSink::Create(ByteSink* next, int level,
                                                           uint64_t pledged_size, uint64_t frame_bytes) {
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
  sink->state_->frame_bytes = std::max<uint64_t>(frame_bytes, 1);
  sink->state_->unframed = pledged_size;
  absl::Status status = sink->StartFrame();
  if (!status.ok()) return status;
  sink->state_->out.resize(ZSTD_CStreamOutSize());
  return sink;
}

// Begins the next frame, pledging its exact size so the header records it.
absl::Status ZstdSink::StartFrame() {
  State& s = *state_;
  s.frame_left = std::min(s.frame_bytes, s.unframed);
  s.unframed -= s.frame_left;
  ZSTD_CCtx_reset(s.cctx, ZSTD_reset_session_only);
  if (ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(s.cctx, s.frame_left))) {
    return NeffError(NRT_FAILURE, "zstd refused the payload size");
  }
  return absl::OkStatus();
}

// Feeds `input` to the current frame, ending the frame when `end`.
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

absl::Status ZstdSink::Append(std::string_view bytes) {
  State& s = *state_;
  while (!bytes.empty()) {
    if (s.frame_left == 0) {
      if (s.unframed == 0) return NeffError(NRT_FAILURE, "zstd payload is longer than its pledged size");
      // A full frame ends here; the next one starts independent of it.
      absl::Status status = Drive({}, true);
      if (status.ok()) status = StartFrame();
      if (!status.ok()) return status;
    }
    std::string_view piece = bytes.substr(0, std::min<uint64_t>(bytes.size(), s.frame_left));
    absl::Status status = Drive(piece, false);
    if (!status.ok()) return status;
    s.frame_left -= piece.size();
    bytes.remove_prefix(piece.size());
  }
  return absl::OkStatus();
}

absl::Status ZstdSink::Finish() {
  if (state_->frame_left != 0 || state_->unframed != 0) {
    return NeffError(NRT_FAILURE, "zstd payload is shorter than its pledged size");
  }
  return Drive({}, true);
}

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
  if (!LooksLikeZstd(input)) {
    return NeffError(NRT_INVALID, "NEFF payload is not a valid zstd stream (corrupt or truncated)");
  }
  absl::StatusOr<std::vector<ZstdFrame>> frames = ListZstdFrames(input);
  if (!frames.ok()) return frames.status();
  uint64_t declared = 0;
  for (const ZstdFrame& frame : *frames) {
    declared += frame.content_size;
    if (declared > limit) {
      return NeffError(NRT_INVALID, absl::StrFormat("NEFF payload declares more than %d decompressed bytes, "
                                                    "the limit (a decompression bomb?)",
                                                    limit));
    }
  }
  absl::StatusOr<SharedBytes> buffer = AllocateOutput(declared);
  if (!buffer.ok()) return buffer.status();
  char* out = const_cast<char*>(buffer->data.get());
  absl::Status status = DecompressFrames(input, *frames, out);
  if (!status.ok()) return status;
  return buffer;
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
