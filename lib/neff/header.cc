#include "lib/neff/header.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/neff/error.h"

namespace neff {
namespace {

// Explicit byte-by-byte little-endian access: the layout never depends on the
// host's endianness or a compiler's struct packing.
void PutLe(std::string& out, std::size_t offset, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out[offset + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

uint64_t GetLe(std::string_view in, std::size_t offset, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(in[offset + i])) << (8 * i);
  }
  return value;
}

absl::Status PutString(std::string& out, std::size_t offset, std::size_t field_size,
                       const std::string& value, const char* field) {
  // Keep one NUL so C readers of the real header see a terminated string.
  if (value.size() >= field_size) {
    return NeffError(NRT_INVALID, absl::StrFormat("NEFF header field %s is %d bytes, at most %d fit",
                                                  field, value.size(), field_size - 1));
  }
  if (value.find('\0') != std::string::npos) {
    return NeffError(NRT_INVALID, absl::StrFormat("NEFF header field %s contains a NUL byte", field));
  }
  out.replace(offset, value.size(), value);
  return absl::OkStatus();
}

std::string GetString(std::string_view in, std::size_t offset, std::size_t field_size) {
  std::string_view field = in.substr(offset, field_size);
  std::size_t end = field.find('\0');
  return std::string(field.substr(0, end));
}

template <std::size_t N>
void PutBytes(std::string& out, std::size_t offset, const std::array<uint8_t, N>& bytes) {
  for (std::size_t i = 0; i < N; ++i) out[offset + i] = static_cast<char>(bytes[i]);
}

template <std::size_t N>
void GetBytes(std::string_view in, std::size_t offset, std::array<uint8_t, N>& bytes) {
  for (std::size_t i = 0; i < N; ++i) bytes[i] = static_cast<unsigned char>(in[offset + i]);
}

}  // namespace

absl::StatusOr<std::string> EncodeHeader(const Header& header) {
  if (header.header_size != kHeaderSize) {
    return NeffError(NRT_INVALID, absl::StrFormat("NEFF header_size must be %d, not %d",
                                                  kHeaderSize, header.header_size));
  }
  std::string out(kHeaderSize, '\0');
  PutLe(out, kOffPkgVersion, header.pkg_version, 8);
  PutLe(out, kOffHeaderSize, header.header_size, 8);
  PutLe(out, kOffDataSize, header.data_size, 8);
  PutLe(out, kOffVersionMajor, header.version_major, 8);
  PutLe(out, kOffVersionMinor, header.version_minor, 8);
  absl::Status status =
      PutString(out, kOffBuildVersion, kBuildVersionSize, header.build_version, "neff_build_version");
  if (!status.ok()) return status;
  PutLe(out, kOffNumTpb, header.num_tpb, 4);
  PutBytes(out, kOffHash, header.hash);
  PutBytes(out, kOffUuid, header.uuid);
  status = PutString(out, kOffName, kNameSize, header.name, "name");
  if (!status.ok()) return status;
  PutLe(out, kOffRequestedTpbCount, header.requested_tpb_count, 4);
  PutBytes(out, kOffTpbPerNode, header.tpb_per_node);
  PutLe(out, kOffFeatureBits, header.feature_bits, 8);
  PutLe(out, kOffLncSize, header.lnc_size, 4);
  return out;
}

bool LooksLikeNeff(std::string_view head) {
  if (head.size() < kSignatureSize) return false;
  const uint64_t pkg_version = GetLe(head, kOffPkgVersion, 8);
  return pkg_version >= 1 && pkg_version < 256 && GetLe(head, kOffHeaderSize, 8) == kHeaderSize;
}

absl::StatusOr<Header> DecodeHeader(std::string_view bytes) {
  if (bytes.size() < kHeaderSize) {
    return NeffError(NRT_INVALID, absl::StrFormat("NEFF is truncated: %d bytes, the header alone is %d",
                                                  bytes.size(), kHeaderSize));
  }
  Header h;
  h.pkg_version = GetLe(bytes, kOffPkgVersion, 8);
  h.header_size = GetLe(bytes, kOffHeaderSize, 8);
  if (h.header_size != kHeaderSize) {
    return NeffError(NRT_INVALID, absl::StrFormat("not a NEFF: header_size is %d, expected %d",
                                                  h.header_size, kHeaderSize));
  }
  h.data_size = GetLe(bytes, kOffDataSize, 8);
  h.version_major = GetLe(bytes, kOffVersionMajor, 8);
  h.version_minor = GetLe(bytes, kOffVersionMinor, 8);
  h.build_version = GetString(bytes, kOffBuildVersion, kBuildVersionSize);
  h.num_tpb = static_cast<uint32_t>(GetLe(bytes, kOffNumTpb, 4));
  GetBytes(bytes, kOffHash, h.hash);
  GetBytes(bytes, kOffUuid, h.uuid);
  h.name = GetString(bytes, kOffName, kNameSize);
  h.requested_tpb_count = static_cast<uint32_t>(GetLe(bytes, kOffRequestedTpbCount, 4));
  GetBytes(bytes, kOffTpbPerNode, h.tpb_per_node);
  h.feature_bits = GetLe(bytes, kOffFeatureBits, 8);
  h.lnc_size = static_cast<uint32_t>(GetLe(bytes, kOffLncSize, 4));
  return h;
}

std::string DescribeFeatures(uint64_t bits) {
  struct Named {
    uint64_t bit;
    const char* name;
  };
  static constexpr Named kNames[] = {
      {kFeatureZstdPayload, "zstd"},
      {kFeatureFastLoading, "fast-loading"},
      {kFeatureCollectives, "collectives"},
  };
  std::string out;
  for (const Named& n : kNames) {
    if (bits & n.bit) {
      if (!out.empty()) out += ",";
      out += n.name;
      bits &= ~n.bit;
    }
  }
  if (bits != 0) {
    if (!out.empty()) out += ",";
    out += absl::StrFormat("0x%x", bits);
  }
  return out.empty() ? "none" : out;
}

std::string FormatVersion(uint64_t major, uint64_t minor) { return absl::StrCat(major, ".", minor); }

std::string FormatUuid(const std::array<uint8_t, kUuidSize>& uuid) {
  std::string out;
  for (std::size_t i = 0; i < uuid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += absl::StrFormat("%02x", uuid[i]);
  }
  return out;
}

std::string FormatHash(const std::array<uint8_t, kHashSize>& hash, std::size_t length) {
  std::string out;
  for (std::size_t i = 0; i < length && i < hash.size(); ++i) out += absl::StrFormat("%02x", hash[i]);
  return out;
}

std::size_t HashLength(uint64_t pkg_version) { return pkg_version == kPkgTgzMd5 ? 16 : 32; }

}  // namespace neff
