// .npz: a zip archive of .npy members (np.savez stores them, np.savez_compressed
// deflates them), read through libzip. A member's header is read first
// (bounded: kNpyHeadBytes); its data is read or inflated straight into the
// caller's buffer, and must end exactly where its shape says, so a zip bomb
// inflates no further than the bytes the caller expected.
#include <cstring>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "lib/tensorfile/npy_header.h"
#include "lib/tensorfile/readers.h"
#include "lib/tensorfile/zip_library.h"

namespace neuron::tensorfile {
namespace {

absl::Status Bad(const TensorFile& file, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", file.display(), what));
}

// An open member, closed on scope exit.
class Member {
 public:
  Member(zip_t* archive, uint64_t index) : file_(Zip().zip_fopen_index(archive, index, 0)) {}
  ~Member() {
    if (file_ != nullptr) Zip().zip_fclose(file_);
  }
  Member(const Member&) = delete;
  Member& operator=(const Member&) = delete;
  bool ok() const { return file_ != nullptr; }
  // Reads exactly `n` bytes; false (with why) when the member ends first
  // or its data is corrupt.
  bool Read(uint8_t* out, uint64_t n, std::string* why) {
    uint64_t done = 0;
    while (done < n) {
      const zip_int64_t got = Zip().zip_fread(file_, out + done, n - done);
      if (got < 0) {
        *why = Zip().zip_file_strerror(file_);
        return false;
      }
      if (got == 0) {
        *why = "ends early";
        return false;
      }
      done += static_cast<uint64_t>(got);
    }
    return true;
  }
  // True when nothing follows (libzip checks the CRC at the end).
  bool AtEnd(std::string* why) {
    uint8_t extra;
    const zip_int64_t got = Zip().zip_fread(file_, &extra, 1);
    if (got < 0) *why = Zip().zip_file_strerror(file_);
    else if (got > 0) *why = "holds more data than its header says";
    return got == 0;
  }

 private:
  zip_file_t* file_;
};

class NpzFile : public TensorFile {
 public:
  explicit NpzFile(std::shared_ptr<ByteSource> source) : TensorFile(Format::kNpz, std::move(source)) {}
  ~NpzFile() override {
    if (archive_ != nullptr) Zip().zip_discard(archive_);
  }

  absl::Status Open() {
    absl::StatusOr<const ZipLibrary*> zip = LoadZip();
    if (!zip.ok()) return zip.status();
    zip_error_t error;
    Zip().zip_error_init(&error);
    zip_source_t* src = nullptr;
    if (source_->path().empty()) {
      absl::StatusOr<std::string_view> bytes = source_->Map();
      if (!bytes.ok()) return bytes.status();
      src = Zip().zip_source_buffer_create(bytes->data(), bytes->size(), 0, &error);
    } else {
      src = Zip().zip_source_file_create(source_->path().c_str(), 0, -1, &error);
    }
    if (src != nullptr) {
      archive_ = Zip().zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &error);
      if (archive_ == nullptr) Zip().zip_source_free(src);
    }
    if (archive_ == nullptr) {
      const std::string why = Zip().zip_error_strerror(&error);
      Zip().zip_error_fini(&error);
      return Bad(*this, absl::StrFormat("not a readable .npz (zip) archive: %s", why));
    }
    Zip().zip_error_fini(&error);
    const zip_int64_t count = Zip().zip_get_num_entries(archive_, 0);
    std::set<std::string> keys;
    for (zip_int64_t i = 0; i < count; ++i) {
      zip_stat_t st;
      if (Zip().zip_stat_index(archive_, static_cast<uint64_t>(i), 0, &st) != 0) {
        return Bad(*this, absl::StrFormat("member %d: %s", i, Zip().zip_strerror(archive_)));
      }
      const std::string name = (st.valid & ZIP_STAT_NAME) && st.name != nullptr ? st.name : "";
      if (absl::EndsWith(name, "/")) continue;  // a directory entry
      if (!absl::EndsWith(name, ".npy")) {
        return Bad(*this, absl::StrFormat("member '%s' is not an .npy array", name));
      }
      if (!(st.valid & ZIP_STAT_SIZE)) return Bad(*this, absl::StrFormat("member '%s' has no size", name));
      ArrayInfo info;
      info.key = name.substr(0, name.size() - 4);
      if (!keys.insert(info.key).second) {
        return Bad(*this, absl::StrFormat("member '%s' appears twice", name));
      }
      info.compressed = (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method != ZIP_CM_STORE;
      absl::StatusOr<NpyHeader> header = ReadHeader(static_cast<uint64_t>(i), st.size);
      if (!header.ok()) {
        return Bad(*this, absl::StrFormat("member '%s': %s", name, std::string(header.status().message())));
      }
      info.dtype = header->dtype;
      info.dims = header->dims;
      info.bytes = header->data_bytes;
      arrays_.push_back(std::move(info));
      members_.push_back({static_cast<uint64_t>(i), header->data_offset});
    }
    return absl::OkStatus();
  }

  absl::Status ReadInto(size_t i, uint8_t* out) const override {
    const std::string member = arrays_[i].key + ".npy";
    Member m(archive_, members_[i].index);
    if (!m.ok()) return Bad(*this, absl::StrFormat("member '%s': %s", member, Zip().zip_strerror(archive_)));
    std::string why;
    std::string header(members_[i].data_offset, '\0');
    if (!m.Read(reinterpret_cast<uint8_t*>(header.data()), header.size(), &why) ||
        !m.Read(out, arrays_[i].bytes, &why) || !m.AtEnd(&why)) {
      return Bad(*this, absl::StrFormat("member '%s': %s", member, why));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<std::string_view>> View(size_t) const override { return std::nullopt; }

 private:
  // The member's .npy header, read a piece at a time: the fixed prefix,
  // then as many bytes as it says (bounded by ParseNpyHeader's limit).
  absl::StatusOr<NpyHeader> ReadHeader(uint64_t index, uint64_t member_bytes) {
    Member m(archive_, index);
    if (!m.ok()) return absl::InvalidArgumentError(Zip().zip_strerror(archive_));
    std::string head(static_cast<size_t>(std::min<uint64_t>(12, member_bytes)), '\0');
    std::string why;
    if (!m.Read(reinterpret_cast<uint8_t*>(head.data()), head.size(), &why)) {
      return absl::InvalidArgumentError(why);
    }
    // A first parse says how long the header is (or what is wrong).
    uint64_t want = 0;
    if (head.size() >= 10 && head.substr(0, 6) == "\x93NUMPY") {
      const uint8_t major = static_cast<uint8_t>(head[6]);
      if (major == 1) {
        want = 10 + (static_cast<uint8_t>(head[8]) | (static_cast<uint64_t>(static_cast<uint8_t>(head[9])) << 8));
      } else if (head.size() == 12) {
        uint64_t len = 0;
        for (int k = 3; k >= 0; --k) len = len << 8 | static_cast<uint8_t>(head[8 + k]);
        want = 12 + std::min<uint64_t>(len, kMaxNpyHeaderBytes + 1);
      }
    }
    want = std::min(want, member_bytes);
    if (want > head.size()) {
      const size_t had = head.size();
      head.resize(static_cast<size_t>(want));
      if (!m.Read(reinterpret_cast<uint8_t*>(head.data()) + had, head.size() - had, &why)) {
        return absl::InvalidArgumentError(why);
      }
    }
    return ParseNpyHeader(head, member_bytes);
  }

  struct MemberRef {
    uint64_t index;
    uint64_t data_offset;
  };
  zip_t* archive_ = nullptr;
  std::vector<MemberRef> members_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<TensorFile>> OpenNpz(std::shared_ptr<ByteSource> source) {
  auto file = std::make_unique<NpzFile>(std::move(source));
  if (absl::Status s = file->Open(); !s.ok()) return s;
  return file;
}

}  // namespace neuron::tensorfile
