// The 1024-byte NEFF header: the documented layout of the real format (all
// fields little-endian at fixed offsets, no magic string), plus the values
// neuron-tools writes into it. See man/neff.5 for every field.
#ifndef NEURON_LIB_NEFF_HEADER_H_
#define NEURON_LIB_NEFF_HEADER_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace neff {

inline constexpr std::size_t kHeaderSize = 1024;

// Field offsets and sizes, as the real header documents them.
inline constexpr std::size_t kOffPkgVersion = 0;         // u64
inline constexpr std::size_t kOffHeaderSize = 8;         // u64
inline constexpr std::size_t kOffDataSize = 16;          // u64
inline constexpr std::size_t kOffVersionMajor = 24;      // u64
inline constexpr std::size_t kOffVersionMinor = 32;      // u64
inline constexpr std::size_t kOffBuildVersion = 40;      // char[128]
inline constexpr std::size_t kOffNumTpb = 168;           // u32
inline constexpr std::size_t kOffHash = 172;             // u8[32]
inline constexpr std::size_t kOffUuid = 204;             // u8[16]
inline constexpr std::size_t kOffName = 220;             // char[256]
inline constexpr std::size_t kOffRequestedTpbCount = 476;  // u32
inline constexpr std::size_t kOffTpbPerNode = 480;       // u8[64]
inline constexpr std::size_t kOffFeatureBits = 544;      // u64
inline constexpr std::size_t kOffLncSize = 552;          // u32
inline constexpr std::size_t kOffPad = 556;              // u8[468]

inline constexpr std::size_t kBuildVersionSize = 128;
inline constexpr std::size_t kHashSize = 32;
inline constexpr std::size_t kUuidSize = 16;
inline constexpr std::size_t kNameSize = 256;
inline constexpr std::size_t kTpbPerNodeSize = 64;

static_assert(kOffNumTpb == kOffBuildVersion + kBuildVersionSize);
static_assert(kOffHash == kOffNumTpb + 4);
static_assert(kOffUuid == kOffHash + kHashSize);
static_assert(kOffName == kOffUuid + kUuidSize);
static_assert(kOffRequestedTpbCount == kOffName + kNameSize);
static_assert(kOffTpbPerNode == kOffRequestedTpbCount + 4);
static_assert(kOffFeatureBits == kOffTpbPerNode + kTpbPerNodeSize);
static_assert(kOffLncSize == kOffFeatureBits + 8);
static_assert(kOffPad == kOffLncSize + 4);
static_assert(kOffPad + 468 == kHeaderSize);

// Packaging versions. 1 and 2 are the real compiler's (gzip'd tar with a
// sha256 or md5 hash); 3 is ours: a tar that is zstd-compressed or plain
// (feature bits say which), hashed with sha256.
inline constexpr uint64_t kPkgTgzSha256 = 1;
inline constexpr uint64_t kPkgTgzMd5 = 2;
inline constexpr uint64_t kPkgTarSha256 = 3;

// The NEFF format version this build writes. Same major = compatible;
// versions below kMinSupported are "legacy" and load only when allowed.
inline constexpr uint64_t kVersionMajor = 2;
inline constexpr uint64_t kVersionMinor = 1;
inline constexpr uint64_t kMinSupportedMajor = 2;
inline constexpr uint64_t kMinSupportedMinor = 1;
// Oldest major a legacy load still accepts; older is simply unsupported.
inline constexpr uint64_t kOldestLegacyMajor = 1;

// Incompatible-feature bits: a reader refuses a NEFF with a bit it does not
// know, because it could not load it correctly.
inline constexpr uint64_t kFeatureZstdPayload = 1ull << 0;  // payload is one zstd stream
inline constexpr uint64_t kFeatureFastLoading = 1ull << 1;  // plain tar, file data 4 KiB aligned
inline constexpr uint64_t kFeatureCollectives = 1ull << 2;  // program runs collectives
inline constexpr uint64_t kSupportedFeatures =
    kFeatureZstdPayload | kFeatureFastLoading | kFeatureCollectives;

// Alignment of member data in a fast-loading NEFF (a page, so it can be mapped).
inline constexpr uint64_t kFastLoadingAlignment = 4096;

struct Header {
  uint64_t pkg_version = kPkgTarSha256;
  uint64_t header_size = kHeaderSize;
  uint64_t data_size = 0;  // payload bytes after the header
  uint64_t version_major = kVersionMajor;
  uint64_t version_minor = kVersionMinor;
  std::string build_version;  // compiler version, at most 127 bytes
  uint32_t num_tpb = 1;
  std::array<uint8_t, kHashSize> hash{};
  std::array<uint8_t, kUuidSize> uuid{};
  std::string name;  // model name, at most 255 bytes
  uint32_t requested_tpb_count = 1;
  std::array<uint8_t, kTpbPerNodeSize> tpb_per_node{};
  uint64_t feature_bits = 0;
  uint32_t lnc_size = 1;  // 0 in NEFFs that predate the field
};

// Encodes `header` into exactly kHeaderSize bytes. Fails when a string does
// not fit its field (or contains a NUL), or header_size is not 1024.
absl::StatusOr<std::string> EncodeHeader(const Header& header);

// Bytes of the head that LooksLikeNeff needs.
inline constexpr std::size_t kSignatureSize = 16;

// True when the head (at least kSignatureSize bytes of it) is a NEFF
// header's: there is no magic string, but the packaging version is small
// and header_size is 1024. A NEFF cut short still passes, so tools can say
// it is truncated rather than not a NEFF.
bool LooksLikeNeff(std::string_view head);

// Decodes the first kHeaderSize bytes of `bytes`. Fails (NRT_INVALID) when
// there are fewer bytes or header_size is not 1024; checks nothing else, so
// it also serves to inspect foreign NEFFs.
absl::StatusOr<Header> DecodeHeader(std::string_view bytes);

// "zstd,fast-loading" style names for feature bits; unknown bits as hex.
std::string DescribeFeatures(uint64_t bits);

// "1.2" for version_major 1, version_minor 2.
std::string FormatVersion(uint64_t major, uint64_t minor);

// The uuid as 8-4-4-4-12 lowercase hex.
std::string FormatUuid(const std::array<uint8_t, kUuidSize>& uuid);

// The hash bytes as lowercase hex; `length` 32 for sha256, 16 for md5.
std::string FormatHash(const std::array<uint8_t, kHashSize>& hash, std::size_t length);

// Number of hash bytes used by a packaging version (16 for md5, else 32).
std::size_t HashLength(uint64_t pkg_version);

}  // namespace neff

#endif  // NEURON_LIB_NEFF_HEADER_H_
