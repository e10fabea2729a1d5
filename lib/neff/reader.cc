// NEFF reader: header checks (packaging, version, features, LNC, size, hash),
// payload decompression under a size limit, then the tar member list.
#include <algorithm>

#include "absl/strings/str_format.h"
#include "lib/neff/compression.h"
#include "lib/neff/digest.h"
#include "lib/neff/mapped_file.h"
#include "lib/neff/neff.h"
#include "lib/neff/tar.h"

namespace neff {
namespace {

bool VersionLess(uint64_t major, uint64_t minor, uint64_t other_major, uint64_t other_minor) {
  return major != other_major ? major < other_major : minor < other_minor;
}

absl::Status CheckHash(const Header& header, std::string_view payload) {
  DigestKind kind = header.pkg_version == kPkgTgzMd5 ? DigestKind::kMd5 : DigestKind::kSha256;
  absl::StatusOr<std::array<uint8_t, 32>> actual = ComputeDigest(kind, payload);
  if (!actual.ok()) return actual.status();
  std::size_t length = HashLength(header.pkg_version);
  if (!std::equal(actual->begin(), actual->begin() + length, header.hash.begin())) {
    return NeffError(NRT_INVALID, absl::StrFormat("NEFF hash mismatch: the header says %s, the payload "
                                                  "hashes to %s (corrupt or modified file)",
                                                  FormatHash(header.hash, length), FormatHash(*actual, length)));
  }
  return absl::OkStatus();
}

absl::StatusOr<PayloadFormat> DetectFormat(const Header& header, std::string_view payload) {
  if (header.pkg_version != kPkgTarSha256) {
    // The real compiler gzips the tar; its fast-loading output is plain.
    return LooksLikeGzip(payload) ? PayloadFormat::kGzipTar : PayloadFormat::kTar;
  }
  bool zstd = header.feature_bits & kFeatureZstdPayload;
  if (zstd && (header.feature_bits & kFeatureFastLoading)) {
    return NeffError(NRT_INVALID, "NEFF feature bits claim both a zstd and a fast-loading payload");
  }
  if (zstd && !LooksLikeZstd(payload)) {
    return NeffError(NRT_INVALID, "NEFF feature bits say zstd, but the payload is not a zstd stream");
  }
  return zstd ? PayloadFormat::kZstdTar : PayloadFormat::kTar;
}

}  // namespace

absl::Status CheckSizes(const Header& header, std::string_view bytes) {
  uint64_t present = bytes.size() - kHeaderSize;
  if (header.data_size > present) {
    return NeffError(NRT_INVALID, absl::StrFormat("NEFF is truncated: the header says %d payload bytes, "
                                                  "the file has %d",
                                                  header.data_size, present));
  }
  if (header.data_size < present) {
    return NeffError(NRT_INVALID, absl::StrFormat("NEFF has %d unexpected bytes after its %d-byte payload",
                                                  present - header.data_size, header.data_size));
  }
  return absl::OkStatus();
}

ReadOptions InspectOptions() {
  ReadOptions options;
  options.check_compatibility = false;
  return options;
}

const char* PayloadFormatName(PayloadFormat format) {
  switch (format) {
    case PayloadFormat::kTar:
      return "tar";
    case PayloadFormat::kZstdTar:
      return "tar+zstd";
    case PayloadFormat::kGzipTar:
      return "tar+gzip";
  }
  return "?";
}

const Entry* Package::Find(std::string_view name) const {
  for (const Entry& entry : entries) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

absl::Status CheckCompatibility(const Header& header, bool allow_legacy) {
  uint64_t major = header.version_major, minor = header.version_minor;
  std::string supported = FormatVersion(kVersionMajor, kVersionMinor);
  std::string received = FormatVersion(major, minor);
  if (major > kVersionMajor || major < kOldestLegacyMajor) {
    // The real runtime's wording.
    return NeffError(NRT_UNSUPPORTED_NEFF_VERSION,
                     absl::StrFormat("NEFF version mismatch supported: %s received: %s", supported, received));
  }
  if (VersionLess(major, minor, kMinSupportedMajor, kMinSupportedMinor) && !allow_legacy) {
    return NeffError(NRT_UNSUPPORTED_NEFF_VERSION,
                     absl::StrFormat("NEFF version %s is a legacy format (oldest supported: %s); "
                                     "NEURON_RT_ALLOW_LEGACY_NEFF=1 accepts it",
                                     received, FormatVersion(kMinSupportedMajor, kMinSupportedMinor)));
  }
  uint64_t unknown = header.feature_bits & ~kSupportedFeatures;
  if (unknown != 0) {
    return NeffError(NRT_UNSUPPORTED_NEFF_VERSION,
                     absl::StrFormat("NEFF version: %s, features: 0x%x are not supported. Currently "
                                     "supporting: 0x%x",
                                     received, unknown, kSupportedFeatures));
  }
  return absl::OkStatus();
}

absl::StatusOr<Header> ReadHeaderOnly(std::string_view bytes) { return DecodeHeader(bytes); }

absl::StatusOr<Package> Read(std::string_view bytes, const ReadOptions& options) {
  absl::StatusOr<Header> header = DecodeHeader(bytes);
  if (!header.ok()) return header.status();
  if (header->pkg_version != kPkgTgzSha256 && header->pkg_version != kPkgTgzMd5 &&
      header->pkg_version != kPkgTarSha256) {
    return NeffError(NRT_UNSUPPORTED_NEFF_VERSION,
                     absl::StrFormat("unknown NEFF packaging version %d (known: 1, 2, 3)", header->pkg_version));
  }
  absl::Status status;
  if (options.check_compatibility) {
    status = CheckCompatibility(*header, options.allow_legacy);
    if (!status.ok()) return status;
  }
  if (options.device_lnc_size != 0) {
    uint32_t lnc = header->lnc_size == 0 ? 1 : header->lnc_size;  // 0: predates the field
    if (lnc != options.device_lnc_size) {
      return NeffError(NRT_INVALID, absl::StrFormat("NEFF was compiled for logical core size (LNC) %d, "
                                                    "the device uses LNC %d",
                                                    lnc, options.device_lnc_size));
    }
  }
  status = CheckSizes(*header, bytes);
  if (!status.ok()) return status;
  std::string_view payload = bytes.substr(kHeaderSize);
  if (options.validate_hash) {
    status = CheckHash(*header, payload);
    if (!status.ok()) return status;
  }
  absl::StatusOr<PayloadFormat> format = DetectFormat(*header, payload);
  if (!format.ok()) return format.status();

  Package package;
  package.header = *header;
  package.format = *format;
  std::string_view tar = payload;
  if (*format != PayloadFormat::kTar) {
    absl::StatusOr<SharedBytes> inflated = *format == PayloadFormat::kZstdTar
                                               ? DecompressZstd(payload, options.max_payload_bytes)
                                               : InflateGzip(payload, options.max_payload_bytes);
    if (!inflated.ok()) return inflated.status();
    tar = inflated->view();
    package.storage = inflated->data;
  }
  absl::StatusOr<std::vector<TarEntry>> entries = ParseTar(tar);
  if (!entries.ok()) return entries.status();
  bool mapped = *format == PayloadFormat::kTar;
  bool fast = header->pkg_version == kPkgTarSha256 && (header->feature_bits & kFeatureFastLoading);
  package.entries.reserve(entries->size());
  for (TarEntry& tar_entry : *entries) {
    Entry entry;
    entry.name = std::move(tar_entry.name);
    entry.is_directory = tar_entry.is_directory;
    entry.size = tar_entry.size;
    entry.data = tar.substr(tar_entry.data_offset, tar_entry.size);
    if (mapped) entry.file_offset = kHeaderSize + tar_entry.data_offset;
    // The loader maps fast-loading members in place: hold it to the promise.
    if (fast && entry.size > 0 && *entry.file_offset % kFastLoadingAlignment != 0) {
      return NeffError(NRT_INVALID, absl::StrFormat("fast-loading NEFF member '%s' is not %d-byte aligned",
                                                    entry.name, kFastLoadingAlignment));
    }
    package.entries.push_back(std::move(entry));
  }
  return package;
}

absl::StatusOr<Package> ReadFile(const std::string& path, const ReadOptions& options) {
  absl::StatusOr<std::shared_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  absl::StatusOr<Package> package = Read((*file)->bytes(), options);
  if (!package.ok()) return WithContext(package.status(), path == "-" ? "<stdin>" : path);
  // Uncompressed members view the mapping; keep it as long as the package.
  if (package->storage == nullptr) package->storage = *file;
  return package;
}

absl::StatusOr<std::vector<Entry>> ListMembers(std::string_view bytes) {
  absl::StatusOr<Package> package = Read(bytes, InspectOptions());
  if (!package.ok()) return package.status();
  std::vector<Entry> entries = std::move(package->entries);
  for (Entry& entry : entries) entry.data = {};
  return entries;
}

}  // namespace neff
