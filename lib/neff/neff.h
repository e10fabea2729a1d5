// NEFF container: write and read the executable package the compiler emits
// and the runtime loads. A NEFF is the documented 1024-byte header (see
// header.h) followed by a tar archive of members, zstd-compressed unless the
// NEFF is fast-loading. The file format is specified in man/neff.5.
//
// Errors are absl::Status values whose payload carries the NRT_STATUS the
// runtime returns for them (neff::NrtStatusOf in error.h):
//   NRT_UNSUPPORTED_NEFF_VERSION  newer major version, legacy version not
//                                 allowed, unknown feature bits
//   NRT_INVALID                   truncated, corrupt, hash mismatch, bad
//                                 member names, oversized payload, LNC mismatch
#ifndef NEURON_LIB_NEFF_NEFF_H_
#define NEURON_LIB_NEFF_NEFF_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/neff/error.h"
#include "lib/neff/header.h"

namespace neff {

// One member to write. `data` is not copied: it must stay valid during the
// Write call (so gigabytes of weights are streamed, not duplicated).
struct Member {
  std::string name;  // e.g. "neff.json", "constants/w0.npy"
  std::string_view data;
  bool is_directory = false;
};

struct WriteOptions {
  // Compress the payload with zstd (the default). Ignored when fast_loading.
  bool compress = true;
  int compression_level = 3;
  // Tar bytes per zstd frame: independent frames let the loader decompress
  // them in parallel. 0 writes one frame, as older writers did.
  uint64_t zstd_frame_bytes = 8ull << 20;
  // --enable-fast-loading-neuron-binaries: plain tar, every non-empty file's
  // data starting at a 4 KiB offset of the NEFF file so it can be mapped.
  bool fast_loading = false;
  std::string name;                          // header name (model name)
  std::string build_version;                 // empty: NEURON_TOOLS_VERSION
  std::optional<std::array<uint8_t, kUuidSize>> uuid;  // random (v4) when unset
  uint32_t lnc_size = 1;                     // logical core size compiled for
  uint32_t num_tpb = 0;                      // 0: lnc_size
  // Feature bits besides the payload ones the writer sets itself; only
  // kFeatureCollectives is allowed here.
  uint64_t extra_feature_bits = 0;
};

// Builds a NEFF in memory.
absl::StatusOr<std::string> Write(const std::vector<Member>& members, const WriteOptions& options);

// Writes a NEFF to `path` ("-" = stdout). The bytes go to a temporary file in
// the same directory, which is synced and renamed over `path` only when
// complete, so readers never see a torn NEFF. Errors name the path.
absl::Status WriteFile(const std::string& path, const std::vector<Member>& members,
                       const WriteOptions& options);

struct ReadOptions {
  // NEURON_RT_VALIDATE_HASH: check the header hash against the payload.
  bool validate_hash = false;
  // NEURON_RT_ALLOW_LEGACY_NEFF: accept format versions older than
  // kMinSupportedMajor.kMinSupportedMinor (down to kOldestLegacyMajor).
  bool allow_legacy = false;
  // Refuse versions and feature bits this build cannot load. Off for
  // inspection (neuron-dump reading a NEFF of the real compiler).
  bool check_compatibility = true;
  // When non-zero, refuse a NEFF compiled for another logical core size.
  uint32_t device_lnc_size = 0;
  // Most bytes a compressed payload may expand to (decompression bombs).
  uint64_t max_payload_bytes = 64ull << 30;
};

// The options for looking at a NEFF without loading it.
ReadOptions InspectOptions();

enum class PayloadFormat { kTar, kZstdTar, kGzipTar };
const char* PayloadFormatName(PayloadFormat format);  // "tar", "tar+zstd", "tar+gzip"

struct Entry {
  std::string name;
  bool is_directory = false;
  uint64_t size = 0;
  // Offset of the data in the NEFF file; set only when the payload is an
  // uncompressed tar (then the data can be mapped from the file).
  std::optional<uint64_t> file_offset;
  std::string_view data;  // valid while the Package (or the read bytes) live
};

struct Package {
  Header header;
  PayloadFormat format = PayloadFormat::kTar;
  std::vector<Entry> entries;
  // Keeps the bytes `entries` point into alive: the mapping or the
  // decompressed payload. Null when the views point into caller's bytes.
  std::shared_ptr<const void> storage;

  const Entry* Find(std::string_view name) const;
};

// Reads a NEFF held in memory. For an uncompressed payload the entries view
// `bytes` itself: keep it alive as long as the Package.
absl::StatusOr<Package> Read(std::string_view bytes, const ReadOptions& options);

// Maps the file at `path` ("-" = stdin) and reads it; the Package keeps the
// mapping, and member data of an uncompressed NEFF is never copied. Errors
// start with the path.
absl::StatusOr<Package> ReadFile(const std::string& path, const ReadOptions& options);

// Decodes the header alone (no payload checks), for any packaging version.
absl::StatusOr<Header> ReadHeaderOnly(std::string_view bytes);

// Checks the header's versions and feature bits against what this build
// loads (the checks Read does when check_compatibility is set).
absl::Status CheckCompatibility(const Header& header, bool allow_legacy);

// Whether the file holds exactly the payload its header promises (`bytes`:
// the whole file, header included): "NEFF is truncated: ..." otherwise.
absl::Status CheckSizes(const Header& header, std::string_view bytes);

// Names, sizes and offsets of the members of any NEFF, ours or the real
// compiler's (gzip'd tar), without compatibility checks; data views cleared.
absl::StatusOr<std::vector<Entry>> ListMembers(std::string_view bytes);

}  // namespace neff

#endif  // NEURON_LIB_NEFF_NEFF_H_
