#include "lib/tensorfile/bundle_writer.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "lib/support/atomic_file.h"
#include "lib/support/npy.h"
#include "lib/tensorfile/dtype.h"
#include "lib/tensorfile/zip_library.h"
#include "nlohmann/json.hpp"

namespace neuron::tensorfile {
namespace {

absl::Status CheckKeys(const std::string& path, const std::vector<NamedArray>& arrays) {
  std::set<std::string_view> seen;
  for (const NamedArray& a : arrays) {
    if (a.key.empty()) return absl::InvalidArgumentError(absl::StrFormat("%s: an array has no key", path));
    if (!seen.insert(a.key).second) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: key '%s' is given twice", path, a.key));
    }
  }
  return absl::OkStatus();
}

// One .npz member streamed to libzip: its .npy header, then the data in
// place (no copy of the array is made).
struct MemberStream {
  std::string header;
  std::string_view data;
  uint64_t at = 0;
};

zip_int64_t StreamMember(void* state, void* out, zip_uint64_t len, zip_source_cmd_t cmd) {
  auto* m = static_cast<MemberStream*>(state);
  const uint64_t total = m->header.size() + m->data.size();
  switch (cmd) {
    case ZIP_SOURCE_OPEN:
      m->at = 0;
      return 0;
    case ZIP_SOURCE_READ: {
      uint64_t n = 0;
      auto* dst = static_cast<uint8_t*>(out);
      while (n < len && m->at < total) {
        const bool in_header = m->at < m->header.size();
        const std::string_view part = in_header ? std::string_view(m->header) : m->data;
        const uint64_t offset = in_header ? m->at : m->at - m->header.size();
        const uint64_t take = std::min<uint64_t>(len - n, part.size() - offset);
        std::memcpy(dst + n, part.data() + offset, take);
        n += take;
        m->at += take;
      }
      return static_cast<zip_int64_t>(n);
    }
    case ZIP_SOURCE_CLOSE:
      return 0;
    case ZIP_SOURCE_STAT: {
      auto* st = static_cast<zip_stat_t*>(out);
      // zip_stat_init's effect, spelled out (it is not among the loaded symbols).
      std::memset(st, 0, sizeof *st);
      st->index = ZIP_UINT64_MAX;
      st->size = total;
      st->comp_size = total;
      st->comp_method = ZIP_CM_STORE;
      st->encryption_method = ZIP_EM_NONE;
      st->valid = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD | ZIP_STAT_ENCRYPTION_METHOD;
      return sizeof *st;
    }
    case ZIP_SOURCE_ERROR:
      return 2 * sizeof(int);  // no error of its own: zeros
    case ZIP_SOURCE_FREE:
      return 0;
    case ZIP_SOURCE_SUPPORTS:
      return ZIP_SOURCE_SUPPORTS_READABLE;
    default:
      return -1;
  }
}

absl::Status WriteNpz(const std::string& path, const std::vector<NamedArray>& arrays) {
  if (path == "-") {
    return absl::InvalidArgumentError("an .npz cannot be written to standard output (zip needs a file)");
  }
  absl::StatusOr<const ZipLibrary*> zip = LoadZip();
  if (!zip.ok()) return zip.status();
  // libzip writes a temporary file beside `path` and renames it at
  // zip_close: the bundle appears whole or not at all.
  int error = 0;
  zip_t* archive = Zip().zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  if (archive == nullptr) {
    zip_error_t e;
    Zip().zip_error_init(&e);
    Zip().zip_error_set(&e, error, errno);
    const std::string why = Zip().zip_error_strerror(&e);
    Zip().zip_error_fini(&e);
    return absl::InternalError(absl::StrFormat("cannot write '%s': %s", path, why));
  }
  std::vector<MemberStream> streams(arrays.size());
  auto fail = [&](std::string_view why) {
    Zip().zip_discard(archive);
    return absl::InternalError(absl::StrFormat("cannot write '%s': %s", path, why));
  };
  for (size_t i = 0; i < arrays.size(); ++i) {
    streams[i].header = npy::Header(NpyDescrOf(arrays[i].type), arrays[i].dims);
    streams[i].data = arrays[i].data;
    zip_source_t* src = Zip().zip_source_function_create(StreamMember, &streams[i], nullptr);
    if (src == nullptr) return fail("cannot create a zip member");
    const std::string member = arrays[i].key + ".npy";
    const zip_int64_t index = Zip().zip_file_add(archive, member.c_str(), src, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      Zip().zip_source_free(src);
      return fail(Zip().zip_strerror(archive));
    }
    Zip().zip_set_file_compression(archive, static_cast<uint64_t>(index), ZIP_CM_STORE, 0);
  }
  if (Zip().zip_close(archive) != 0) return fail(Zip().zip_strerror(archive));
  return absl::OkStatus();
}

absl::Status WriteSafetensors(const std::string& path, const std::vector<NamedArray>& arrays) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const NamedArray& a : arrays) {
    const std::string dtype = SafetensorsNameOf(a.type);
    if (dtype.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: safetensors has no type for '%s' (%s): write an .npz", path, a.key,
          std::string(hlo::ElementTypeName(a.type))));
    }
    header[a.key] = {{"dtype", dtype}, {"shape", a.dims}, {"data_offsets", {offset, offset + a.data.size()}}};
    offset += a.data.size();
  }
  std::string text = header.dump();
  // The data starts on an 8-byte boundary, as the safetensors library writes it.
  text.append((8 - (8 + text.size()) % 8) % 8, ' ');
  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>((text.size() >> (8 * i)) & 0xff);
  prefix += text;
  // The data follows in the order its offsets were given.
  std::vector<const NamedArray*> order;
  for (const NamedArray& a : arrays) order.push_back(&a);
  if (path == "-") {
    bool ok = std::fwrite(prefix.data(), 1, prefix.size(), stdout) == prefix.size();
    for (const NamedArray* a : order) ok = ok && std::fwrite(a->data.data(), 1, a->data.size(), stdout) == a->data.size();
    ok = std::fflush(stdout) == 0 && ok;
    return ok ? absl::OkStatus() : absl::InternalError("cannot write to standard output");
  }
  absl::StatusOr<AtomicFile> file = AtomicFile::Create(path);
  if (!file.ok()) return file.status();
  if (absl::Status s = file->Append(prefix); !s.ok()) return s;
  for (const NamedArray* a : order) {
    if (absl::Status s = file->Append(a->data); !s.ok()) return s;
  }
  return file->Commit();
}

}  // namespace

std::optional<Format> BundleFormatOfName(std::string_view path) {
  const absl::string_view name(path.data(), path.size());
  if (absl::EndsWithIgnoreCase(name, ".npz")) return Format::kNpz;
  if (absl::EndsWithIgnoreCase(name, ".safetensors")) return Format::kSafetensors;
  return std::nullopt;
}

absl::Status WriteBundle(const std::string& path, Format format, const std::vector<NamedArray>& arrays) {
  if (absl::Status s = CheckKeys(path, arrays); !s.ok()) return s;
  switch (format) {
    case Format::kNpz: return WriteNpz(path, arrays);
    case Format::kSafetensors: return WriteSafetensors(path, arrays);
    case Format::kNpy: break;
  }
  return absl::InvalidArgumentError(absl::StrFormat("%s: a bundle is .npz or .safetensors", path));
}

}  // namespace neuron::tensorfile
