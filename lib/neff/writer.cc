// NEFF writer: header + tar payload (zstd-compressed, or page-aligned for
// fast loading), hashed with sha256 while it streams out.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "lib/neff/byte_sink.h"
#include "lib/neff/compression.h"
#include "lib/neff/digest.h"
#include "lib/neff/neff.h"
#include "lib/neff/tar.h"
#include "lib/support/atomic_file.h"
#include "neuron/version.h"

namespace neff {
namespace {

bool Compressed(const WriteOptions& options) { return options.compress && !options.fast_loading; }

TarWriterOptions TarOptions(const WriteOptions& options) {
  TarWriterOptions out;
  if (options.fast_loading) {
    out.align = kFastLoadingAlignment;
    out.base_offset = kHeaderSize;
  }
  return out;
}

absl::Status WriteTar(ByteSink* sink, const std::vector<Member>& members, const WriteOptions& options) {
  TarWriter tar(sink, TarOptions(options));
  for (const Member& member : members) {
    absl::Status status =
        member.is_directory ? tar.AddDirectory(member.name) : tar.AddFile(member.name, member.data);
    if (!status.ok()) return status;
  }
  return tar.Finish();
}

// The header without data_size and hash, after checking the options, so a
// bad option fails before any output is produced.
absl::StatusOr<Header> BaseHeader(const WriteOptions& options) {
  if (options.lnc_size == 0) return NeffError(NRT_INVALID, "NEFF lnc_size must be at least 1");
  if (options.extra_feature_bits & ~kFeatureCollectives) {
    return NeffError(NRT_INVALID, absl::StrFormat("NEFF feature bits 0x%x cannot be requested (the "
                                                  "payload bits follow from the options)",
                                                  options.extra_feature_bits & ~kFeatureCollectives));
  }
  Header header;
  header.pkg_version = kPkgTarSha256;
  header.version_major = kVersionMajor;
  header.version_minor = kVersionMinor;
  header.build_version = options.build_version.empty() ? NEURON_TOOLS_VERSION : options.build_version;
  header.name = options.name;
  header.lnc_size = options.lnc_size;
  header.num_tpb = options.num_tpb != 0 ? options.num_tpb : options.lnc_size;
  if (header.num_tpb > 255) {
    return NeffError(NRT_INVALID, absl::StrFormat("NEFF num_tpb %d does not fit tpb_per_node", header.num_tpb));
  }
  header.requested_tpb_count = header.num_tpb;
  // One node (one kelf graph) using all the NEFF's TPBs.
  header.tpb_per_node[0] = static_cast<uint8_t>(header.num_tpb);
  header.feature_bits = options.extra_feature_bits;
  header.feature_bits |= Compressed(options) ? kFeatureZstdPayload : 0;
  header.feature_bits |= options.fast_loading ? kFeatureFastLoading : 0;
  if (options.uuid) {
    header.uuid = *options.uuid;
  } else {
    absl::Status status = RandomBytes(header.uuid.data(), header.uuid.size());
    if (!status.ok()) return status;
    header.uuid[6] = static_cast<uint8_t>((header.uuid[6] & 0x0f) | 0x40);  // version 4
    header.uuid[8] = static_cast<uint8_t>((header.uuid[8] & 0x3f) | 0x80);  // RFC 4122 variant
  }
  absl::StatusOr<std::string> probe = EncodeHeader(header);  // string field sizes
  if (!probe.ok()) return probe.status();
  return header;
}

absl::StatusOr<uint64_t> TarSize(const std::vector<Member>& members, const WriteOptions& options) {
  CountingSink counter;
  absl::Status status = WriteTar(&counter, members, options);
  if (!status.ok()) return status;
  return counter.count();
}

// Streams the payload to `out` and returns the complete header.
absl::StatusOr<Header> WritePayload(const std::vector<Member>& members, const WriteOptions& options,
                                    ByteSink* out) {
  absl::StatusOr<Header> header = BaseHeader(options);
  if (!header.ok()) return header.status();
  // A dry run sizes the tar (zstd records it) and checks every name first.
  absl::StatusOr<uint64_t> tar_size = TarSize(members, options);
  if (!tar_size.ok()) return tar_size.status();
  Digest digest(DigestKind::kSha256, out);
  if (Compressed(options)) {
    absl::StatusOr<std::unique_ptr<ZstdSink>> zstd =
        ZstdSink::Create(&digest, options.compression_level, *tar_size,
                         options.zstd_frame_bytes == 0 ? UINT64_MAX : options.zstd_frame_bytes);
    if (!zstd.ok()) return zstd.status();
    absl::Status status = WriteTar(zstd->get(), members, options);
    if (status.ok()) status = (*zstd)->Finish();
    if (!status.ok()) return status;
  } else {
    absl::Status status = WriteTar(&digest, members, options);
    if (!status.ok()) return status;
  }
  header->data_size = digest.bytes_seen();
  absl::StatusOr<std::array<uint8_t, 32>> hash = digest.Finish();
  if (!hash.ok()) return hash.status();
  header->hash = *hash;
  return header;
}

absl::Status SystemError(const std::string& path, const char* what) {
  return NeffError(NRT_FAILURE, absl::StrFormat("%s: %s: %s", path, what, std::strerror(errno)));
}

absl::Status WriteToStdout(const std::vector<Member>& members, const WriteOptions& options) {
  absl::StatusOr<std::string> bytes = Write(members, options);
  if (!bytes.ok()) return bytes.status();
  FdSink sink(STDOUT_FILENO, "<stdout>");
  absl::Status status = sink.Append(*bytes);
  return status.ok() ? sink.Flush() : status;
}

absl::Status PwriteAll(int fd, std::string_view bytes, off_t offset, const std::string& path) {
  while (!bytes.empty()) {
    ssize_t n = ::pwrite(fd, bytes.data(), bytes.size(), offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return SystemError(path, "write failed");
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
    offset += n;
  }
  return absl::OkStatus();
}

// Everything WriteFile does once the temporary file is open.
absl::Status FillTempFile(int fd, const std::string& path, const std::vector<Member>& members,
                          const WriteOptions& options) {
  FdSink sink(fd, path);
  absl::Status status = sink.AppendZeros(kHeaderSize);  // the header goes in last
  if (!status.ok()) return status;
  absl::StatusOr<Header> header = WritePayload(members, options, &sink);
  if (!header.ok()) return header.status();
  status = sink.Flush();
  if (!status.ok()) return status;
  absl::StatusOr<std::string> encoded = EncodeHeader(*header);
  if (!encoded.ok()) return encoded.status();
  status = PwriteAll(fd, *encoded, 0, path);
  if (!status.ok()) return status;
  if (::fsync(fd) != 0) return SystemError(path, "cannot sync");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> Write(const std::vector<Member>& members, const WriteOptions& options) {
  std::string out(kHeaderSize, '\0');
  if (!Compressed(options)) {
    absl::StatusOr<uint64_t> tar_size = TarSize(members, options);
    if (!tar_size.ok()) return tar_size.status();
    out.reserve(kHeaderSize + *tar_size);
  }
  StringSink sink(&out);
  absl::StatusOr<Header> header = WritePayload(members, options, &sink);
  if (!header.ok()) return header.status();
  absl::StatusOr<std::string> encoded = EncodeHeader(*header);
  if (!encoded.ok()) return encoded.status();
  out.replace(0, kHeaderSize, *encoded);
  return out;
}

absl::Status WriteFile(const std::string& path, const std::vector<Member>& members,
                       const WriteOptions& options) {
  if (path == "-") return WriteToStdout(members, options);
  absl::StatusOr<neuron::AtomicFile> file = neuron::AtomicFile::Create(path);
  if (!file.ok()) return NeffError(NRT_FAILURE, std::string(file.status().message()));
  absl::Status status = FillTempFile(file->fd(), path, members, options);
  if (!status.ok()) return status;  // the temporary file goes with `file`
  if (absl::Status s = file->Commit(); !s.ok()) return NeffError(NRT_FAILURE, std::string(s.message()));
  return absl::OkStatus();
}

}  // namespace neff
