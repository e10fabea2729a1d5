#include "lib/dump/core_dump_format.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace neuron::dump {
namespace {

void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t GetLe(std::string_view b, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(b[at + i])) << (8 * i);
  return v;
}

}  // namespace

bool LooksLikeZstd(std::string_view bytes) {
  return bytes.size() >= 4 && static_cast<uint8_t>(bytes[0]) == 0x28 &&
         static_cast<uint8_t>(bytes[1]) == 0xb5 && static_cast<uint8_t>(bytes[2]) == 0x2f &&
         static_cast<uint8_t>(bytes[3]) == 0xfd;
}

absl::StatusOr<std::string> EncodeCoreDump(const std::vector<Section>& sections) {
  std::string raw(kCoreDumpMagic, sizeof kCoreDumpMagic);
  PutU32(&raw, kCoreDumpVersion);
  PutU32(&raw, static_cast<uint32_t>(sections.size()));
  for (const Section& s : sections) {
    const std::string meta = s.meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    PutU32(&raw, static_cast<uint32_t>(s.kind));
    PutU32(&raw, static_cast<uint32_t>(meta.size()));
    PutU64(&raw, s.data.size());
    raw += meta;
    raw += s.data;
  }
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), 3);
  if (ZSTD_isError(n)) return absl::InternalError(absl::StrCat("zstd: ", ZSTD_getErrorName(n)));
  out.resize(n);
  return out;
}

absl::StatusOr<std::vector<Section>> DecodeCoreDump(std::string_view bytes, std::string_view name,
                                                    uint64_t max_bytes) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(name), ": not a readable core dump: ", std::string(why)));
  };
  if (!LooksLikeZstd(bytes)) return bad("no zstd frame");
  // Streamed, so a frame without a content size or lying about it is fine.
  std::string raw;
  ZSTD_DCtx* ctx = ZSTD_createDCtx();
  ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
  std::string chunk(ZSTD_DStreamOutSize(), '\0');
  size_t ret = 1;
  while (in.pos < in.size) {
    ZSTD_outBuffer out{chunk.data(), chunk.size(), 0};
    ret = ZSTD_decompressStream(ctx, &out, &in);
    if (ZSTD_isError(ret)) {
      ZSTD_freeDCtx(ctx);
      return bad(absl::StrCat("zstd: ", ZSTD_getErrorName(ret)));
    }
    if (out.pos > max_bytes - std::min<uint64_t>(raw.size(), max_bytes)) {
      ZSTD_freeDCtx(ctx);
      return bad(absl::StrCat("inflates beyond ", max_bytes, " bytes"));
    }
    raw.append(chunk.data(), out.pos);
    if (out.pos == 0 && in.pos < in.size && ret == 0) break;
  }
  ZSTD_freeDCtx(ctx);
  if (ret != 0) return bad("truncated zstd frame");
  if (raw.size() < 16 || std::memcmp(raw.data(), kCoreDumpMagic, 8) != 0)
    return bad("bad magic");
  const uint32_t version = static_cast<uint32_t>(GetLe(raw, 8, 4));
  if (version != kCoreDumpVersion)
    return bad(absl::StrCat("version ", version, " (this build reads ", kCoreDumpVersion, ")"));
  const uint64_t count = GetLe(raw, 12, 4);
  std::vector<Section> sections;
  size_t at = 16;
  for (uint64_t i = 0; i < count; ++i) {
    if (raw.size() - at < 16) return bad(absl::StrCat("section ", i, " header is truncated"));
    Section s;
    s.kind = static_cast<SectionKind>(GetLe(raw, at, 4));
    const uint64_t meta_len = GetLe(raw, at + 4, 4);
    const uint64_t data_len = GetLe(raw, at + 8, 8);
    at += 16;
    if (meta_len > raw.size() - at || data_len > raw.size() - at - meta_len)
      return bad(absl::StrCat("section ", i, " is truncated"));
    s.meta = nlohmann::json::parse(raw.substr(at, meta_len), nullptr, /*allow_exceptions=*/false);
    if (s.meta.is_discarded() || !s.meta.is_object())
      return bad(absl::StrCat("section ", i, " metadata is not a JSON object"));
    at += meta_len;
    s.data = raw.substr(at, data_len);
    at += data_len;
    sections.push_back(std::move(s));
  }
  return sections;
}

}  // namespace neuron::dump
