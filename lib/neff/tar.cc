#include "lib/neff/tar.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "lib/neff/error.h"

namespace neff {
namespace {

// ustar header field offsets and widths (POSIX.1-1988).
constexpr std::size_t kName = 0, kNameLen = 100;
constexpr std::size_t kMode = 100, kUid = 108, kGid = 116, kIdLen = 8;
constexpr std::size_t kSize = 124, kSizeLen = 12;
constexpr std::size_t kMtime = 136, kMtimeLen = 12;
constexpr std::size_t kChksum = 148, kChksumLen = 8;
constexpr std::size_t kTypeflag = 156;
constexpr std::size_t kMagic = 257;
constexpr std::size_t kPrefix = 345, kPrefixLen = 155;

constexpr char kTypeFile = '0', kTypeFileOld = '\0', kTypeContiguous = '7';
constexpr char kTypeDirectory = '5', kTypePax = 'x', kTypePaxGlobal = 'g';
constexpr char kTypeGnuLongName = 'L';

uint64_t RoundUp(uint64_t value, uint64_t unit) { return (value + unit - 1) / unit * unit; }

absl::Status MemberError(std::string_view name, const std::string& what) {
  return NeffError(NRT_INVALID, absl::StrFormat("tar member '%s': %s", name, what));
}

// The checks shared by writer and reader: nothing that could escape the
// extraction directory or be ambiguous.
absl::Status CheckNameComponents(std::string_view name) {
  if (name.empty()) return NeffError(NRT_INVALID, "tar member with an empty name");
  if (name.find('\0') != std::string_view::npos) return MemberError(name, "name contains a NUL byte");
  if (name.front() == '/') return MemberError(name, "absolute path");
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view part = name.substr(start, end - start);
    if (part == "..") return MemberError(name, "name contains a '..' component");
    if (part.empty() || part == ".") return MemberError(name, "name has an empty or '.' component");
    start = end + 1;
  }
  return absl::OkStatus();
}

// Splits a name into the ustar prefix and name fields; false if impossible.
bool SplitUstarName(std::string_view name, std::string_view* prefix, std::string_view* rest) {
  if (name.size() <= kNameLen) {
    *prefix = {};
    *rest = name;
    return true;
  }
  // The prefix ends at a '/', which is not stored; the rest must fit 100.
  // The last '/' that keeps the prefix within 155 leaves the shortest rest.
  std::size_t slash = name.rfind('/', kPrefixLen);
  if (slash == std::string_view::npos || slash == 0 || name.size() - slash - 1 > kNameLen) return false;
  *prefix = name.substr(0, slash);
  *rest = name.substr(slash + 1);
  return true;
}

void PutField(std::string& block, std::size_t offset, std::string_view value) {
  block.replace(offset, value.size(), value);
}

uint64_t Checksum(std::string_view block, bool as_signed) {
  uint64_t sum = 0;
  for (std::size_t i = 0; i < kTarBlockSize; ++i) {
    if (i >= kChksum && i < kChksum + kChksumLen) {
      sum += ' ';
    } else if (as_signed) {
      sum += static_cast<uint64_t>(static_cast<int64_t>(static_cast<signed char>(block[i])));
    } else {
      sum += static_cast<unsigned char>(block[i]);
    }
  }
  return sum;
}

std::string MakeHeader(std::string_view prefix, std::string_view name, char type, uint64_t size) {
  std::string block(kTarBlockSize, '\0');
  PutField(block, kName, name);
  PutField(block, kMode, EncodeTarNumber(type == kTypeDirectory ? 0755 : 0644, kIdLen));
  PutField(block, kUid, EncodeTarNumber(0, kIdLen));
  PutField(block, kGid, EncodeTarNumber(0, kIdLen));
  PutField(block, kSize, EncodeTarNumber(size, kSizeLen));
  // mtime 0: the same inputs give byte-identical archives.
  PutField(block, kMtime, EncodeTarNumber(0, kMtimeLen));
  block[kTypeflag] = type;
  PutField(block, kMagic, std::string_view("ustar\0" "00", 8));
  PutField(block, kPrefix, prefix);
  uint64_t sum = Checksum(block, false);
  // Six octal digits, NUL, space: the form every tar writes.
  PutField(block, kChksum, absl::StrFormat("%06o", sum));
  block[kChksum + 6] = '\0';
  block[kChksum + 7] = ' ';
  return block;
}

bool AllZero(std::string_view bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == '\0'; });
}

std::string CString(std::string_view field) { return std::string(field.substr(0, field.find('\0'))); }

// Removes the "./" a tar made with `tar -C dir .` puts in front of names and
// a directory's trailing '/'.
std::string NormalizeName(std::string name) {
  while (name.size() >= 2 && name[0] == '.' && name[1] == '/') {
    name.erase(0, 2);
    while (!name.empty() && name[0] == '/' && name.size() > 1) name.erase(0, 1);
  }
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  return name;
}

struct PaxOverrides {
  bool has_path = false;
  std::string path;
  bool has_size = false;
  uint64_t size = 0;
};

absl::Status ParsePaxRecords(std::string_view data, uint64_t header_offset, PaxOverrides* out) {
  auto bad = [header_offset](const char* what) {
    return NeffError(NRT_INVALID,
                     absl::StrFormat("tar pax header at offset %d: %s", header_offset, what));
  };
  while (!data.empty()) {
    // "<length> <key>=<value>\n", length counting the whole record.
    std::size_t space = data.find(' ');
    if (space == std::string_view::npos || space == 0 || space > 20) return bad("malformed record length");
    uint64_t length = 0;
    for (std::size_t i = 0; i < space; ++i) {
      if (data[i] < '0' || data[i] > '9') return bad("malformed record length");
      length = length * 10 + static_cast<uint64_t>(data[i] - '0');
    }
    if (length <= space + 1 || length > data.size() || data[length - 1] != '\n') {
      return bad("record length does not match its contents");
    }
    std::string_view record = data.substr(space + 1, length - space - 2);
    std::size_t eq = record.find('=');
    if (eq == std::string_view::npos) return bad("record without '='");
    std::string_view key = record.substr(0, eq);
    std::string_view value = record.substr(eq + 1);
    if (key == "path") {
      out->has_path = true;
      out->path = std::string(value);
    } else if (key == "size") {
      uint64_t size = 0;
      if (value.empty() || value.size() > 19) return bad("bad size record");
      for (char c : value) {
        if (c < '0' || c > '9') return bad("bad size record");
        size = size * 10 + static_cast<uint64_t>(c - '0');
      }
      out->has_size = true;
      out->size = size;
    }
    // Other keys (mtime, uid, comment, ...) carry metadata we do not keep.
    data.remove_prefix(length);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckMemberName(std::string_view name) {
  absl::Status status = CheckNameComponents(name);
  if (!status.ok()) return status;
  std::string_view prefix, rest;
  if (!SplitUstarName(name, &prefix, &rest)) {
    return MemberError(name, absl::StrFormat("name is too long for a ustar header (%d bytes; at most "
                                             "100, or 255 split at a '/' into 155 + 100)",
                                             name.size()));
  }
  return absl::OkStatus();
}

std::string EncodeTarNumber(uint64_t value, std::size_t width) {
  std::string digits = absl::StrFormat("%o", value);
  if (digits.size() <= width - 1) {
    return std::string(width - 1 - digits.size(), '0') + digits + std::string(1, '\0');
  }
  // Base-256: a leading 0x80 byte marks a big-endian binary number.
  std::string out(width, '\0');
  out[0] = static_cast<char>(0x80);
  for (std::size_t i = 0; i < width - 1 && i < 8; ++i) {
    out[width - 1 - i] = static_cast<char>((value >> (8 * i)) & 0xff);
  }
  return out;
}

absl::StatusOr<uint64_t> DecodeTarNumber(std::string_view field) {
  if (!field.empty() && (static_cast<unsigned char>(field[0]) & 0x80)) {
    if (static_cast<unsigned char>(field[0]) != 0x80) {
      return NeffError(NRT_INVALID, "negative or oversized base-256 number in a tar header");
    }
    uint64_t value = 0;
    for (std::size_t i = 1; i < field.size(); ++i) {
      if (value >> 56) return NeffError(NRT_INVALID, "base-256 number in a tar header overflows");
      value = (value << 8) | static_cast<unsigned char>(field[i]);
    }
    return value;
  }
  std::size_t i = 0;
  while (i < field.size() && field[i] == ' ') ++i;
  uint64_t value = 0;
  for (; i < field.size() && field[i] != '\0' && field[i] != ' '; ++i) {
    if (field[i] < '0' || field[i] > '7') return NeffError(NRT_INVALID, "non-octal digit in a tar header number");
    if (value >> 60) return NeffError(NRT_INVALID, "octal number in a tar header overflows");
    value = value * 8 + static_cast<uint64_t>(field[i] - '0');
  }
  for (; i < field.size(); ++i) {
    if (field[i] != '\0' && field[i] != ' ') return NeffError(NRT_INVALID, "garbage after a tar header number");
  }
  return value;
}

absl::Status TarWriter::Emit(std::string_view bytes) {
  offset_ += bytes.size();
  return sink_->Append(bytes);
}

absl::Status TarWriter::PadForAlignment() {
  // Data starts one header block after the current position.
  uint64_t data_at = options_.base_offset + offset_ + kTarBlockSize;
  uint64_t gap = (options_.align - data_at % options_.align) % options_.align;
  if (gap == 0) return absl::OkStatus();
  // gap is a whole number of blocks (every offset is), at least one: a pax
  // header block whose comment record fills the other gap - 512 bytes.
  // Extractors apply pax headers to the next member and ignore comments,
  // so the padding never appears as a file.
  uint64_t record_size = gap - kTarBlockSize;
  std::string record;
  if (record_size > 0) {
    std::string length = absl::StrFormat("%d", record_size);
    std::string head = length + " comment=";
    record = head + std::string(record_size - head.size() - 1, 'x') + "\n";
  }
  absl::Status status = Emit(MakeHeader({}, "PaxHeaders/alignment-padding", kTypePax, record.size()));
  if (!status.ok()) return status;
  return Emit(record);
}

absl::Status TarWriter::AddMember(std::string_view name, char type, std::string_view data) {
  absl::Status status = CheckMemberName(name);
  if (!status.ok()) return status;
  if (names_.count(name) != 0) return MemberError(name, "duplicate member name");
  if (options_.align != 0 && type == kTypeFile && !data.empty()) {
    status = PadForAlignment();
    if (!status.ok()) return status;
  }
  std::string_view prefix, rest;
  SplitUstarName(name, &prefix, &rest);
  std::string stored_rest(rest);
  if (type == kTypeDirectory && stored_rest.size() < kNameLen) stored_rest += '/';
  status = Emit(MakeHeader(prefix, stored_rest, type, data.size()));
  if (!status.ok()) return status;
  entries_.push_back(TarEntry{std::string(name), type == kTypeDirectory, data.size(), offset_});
  names_.emplace(name);
  status = Emit(data);
  if (!status.ok()) return status;
  uint64_t pad = RoundUp(data.size(), kTarBlockSize) - data.size();
  offset_ += pad;
  return sink_->AppendZeros(pad);
}

absl::Status TarWriter::AddFile(std::string_view name, std::string_view data) {
  return AddMember(name, kTypeFile, data);
}

absl::Status TarWriter::AddDirectory(std::string_view name) { return AddMember(name, kTypeDirectory, {}); }

absl::Status TarWriter::Finish() {
  offset_ += 2 * kTarBlockSize;
  return sink_->AppendZeros(2 * kTarBlockSize);
}

absl::StatusOr<std::vector<TarEntry>> ParseTar(std::string_view archive) {
  std::vector<TarEntry> entries;
  std::set<std::string, std::less<>> names;
  PaxOverrides pending;
  bool has_long_name = false;
  std::string long_name;
  uint64_t offset = 0;
  while (true) {
    if (archive.size() - offset < kTarBlockSize) {
      return NeffError(NRT_INVALID, absl::StrFormat("tar archive is truncated at offset %d "
                                                    "(no end-of-archive marker)", offset));
    }
    std::string_view block = archive.substr(offset, kTarBlockSize);
    if (AllZero(block)) {
      if (pending.has_path || pending.has_size || has_long_name) {
        return NeffError(NRT_INVALID, "tar archive ends after an extended header with no member");
      }
      if (!AllZero(archive.substr(offset))) {
        return NeffError(NRT_INVALID, absl::StrFormat("tar archive has data after its end-of-archive "
                                                      "marker at offset %d", offset));
      }
      return entries;
    }
    absl::StatusOr<uint64_t> stored_sum = DecodeTarNumber(block.substr(kChksum, kChksumLen));
    if (!stored_sum.ok() ||
        (*stored_sum != Checksum(block, false) && *stored_sum != Checksum(block, true))) {
      return NeffError(NRT_INVALID, absl::StrFormat("tar header at offset %d: checksum mismatch "
                                                    "(corrupt or not a tar archive)", offset));
    }
    std::string_view magic = block.substr(kMagic, 6);
    bool ustar = magic == std::string_view("ustar\0", 6);
    bool gnu = magic == std::string_view("ustar ", 6);
    if (!ustar && !gnu) {
      return NeffError(NRT_INVALID, absl::StrFormat("tar header at offset %d: not a ustar header", offset));
    }
    std::string name = CString(block.substr(kName, kNameLen));
    if (ustar) {
      std::string prefix = CString(block.substr(kPrefix, kPrefixLen));
      if (!prefix.empty()) name = prefix + "/" + name;
    }
    if (has_long_name) name = long_name;
    if (pending.has_path) name = pending.path;
    char type = block[kTypeflag];
    absl::StatusOr<uint64_t> size = DecodeTarNumber(block.substr(kSize, kSizeLen));
    if (!size.ok()) return MemberError(name, std::string(size.status().message()));
    if (pending.has_size && type != kTypePax && type != kTypePaxGlobal) *size = pending.size;
    uint64_t data_offset = offset + kTarBlockSize;
    uint64_t left = archive.size() - data_offset;
    if (*size > left || RoundUp(*size, kTarBlockSize) > left) {
      return MemberError(name, absl::StrFormat("size %d exceeds the %d bytes left in the archive "
                                               "(truncated?)", *size, left));
    }
    std::string_view data = archive.substr(data_offset, *size);
    offset = data_offset + RoundUp(*size, kTarBlockSize);

    if (type == kTypePax) {
      absl::Status status = ParsePaxRecords(data, data_offset - kTarBlockSize, &pending);
      if (!status.ok()) return status;
      continue;
    }
    if (type == kTypePaxGlobal) continue;
    if (type == kTypeGnuLongName) {
      has_long_name = true;
      long_name = CString(data);
      continue;
    }
    pending = PaxOverrides{};
    has_long_name = false;
    bool is_file = type == kTypeFile || type == kTypeFileOld || type == kTypeContiguous;
    if (!is_file && type != kTypeDirectory) {
      return MemberError(name, absl::StrFormat("type '%c' is not a regular file or a directory",
                                               type >= 32 && type < 127 ? type : '?'));
    }
    if (name.find('\0') != std::string::npos) return MemberError(name, "name contains a NUL byte");
    if (!name.empty() && name.front() == '/') return MemberError(name, "absolute path");
    std::string normalized = NormalizeName(name);
    if (type == kTypeDirectory && (normalized.empty() || normalized == ".")) continue;  // the root
    absl::Status status = CheckNameComponents(normalized);
    if (!status.ok()) return status;
    if (names.count(normalized) != 0) return MemberError(normalized, "duplicate member name");
    names.insert(normalized);
    entries.push_back(TarEntry{normalized, type == kTypeDirectory, is_file ? *size : 0, data_offset});
  }
}

}  // namespace neff
