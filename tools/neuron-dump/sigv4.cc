#include "tools/neuron-dump/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace neuron::dump {
namespace {

std::string Digest(const EVP_MD* md, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), out, &n, md, nullptr);
  return std::string(reinterpret_cast<char*>(out), n);
}

std::string Hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &n);
  return std::string(reinterpret_cast<char*>(out), n);
}

}  // namespace

std::string HexOf(std::string_view raw) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

std::string Sha256Hex(std::string_view data) { return HexOf(Digest(EVP_sha256(), data)); }
std::string Md5Raw(std::string_view data) { return Digest(EVP_md5(), data); }
std::string Md5Hex(std::string_view data) { return HexOf(Md5Raw(data)); }
std::string Md5Base64(std::string_view data) {
  const std::string raw = Md5Raw(data);
  unsigned char out[64];
  const int n = EVP_EncodeBlock(out, reinterpret_cast<const unsigned char*>(raw.data()),
                                static_cast<int>(raw.size()));
  return std::string(reinterpret_cast<char*>(out), n);
}

std::string Md5HexOfFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return "";
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_md5(), nullptr);
  std::string buf(1 << 20, '\0');
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) EVP_DigestUpdate(ctx, buf.data(), n);
  const bool ok = !std::ferror(f);
  std::fclose(f);
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, out, &len);
  EVP_MD_CTX_free(ctx);
  return ok ? HexOf(std::string_view(reinterpret_cast<char*>(out), len)) : "";
}

std::string UriEncode(std::string_view text, bool keep_slash) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved || (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string CanonicalQuery(const std::vector<std::pair<std::string, std::string>>& query) {
  std::vector<std::pair<std::string, std::string>> q;
  for (const auto& [k, v] : query) q.emplace_back(UriEncode(k, false), UriEncode(v, false));
  std::sort(q.begin(), q.end());
  std::vector<std::string> parts;
  for (const auto& [k, v] : q) parts.push_back(absl::StrCat(k, "=", v));
  return absl::StrJoin(parts, "&");
}

std::string Sign(SignRequest* r, const AwsCredentials& c) {
  const std::string amz_date =
      absl::FormatTime("%Y%m%dT%H%M%SZ", r->time, absl::UTCTimeZone());
  const std::string day = amz_date.substr(0, 8);
  r->headers["x-amz-date"] = amz_date;
  r->headers["x-amz-content-sha256"] = r->payload_sha256;
  if (!c.session_token.empty()) r->headers["x-amz-security-token"] = c.session_token;
  std::string canonical_headers, signed_headers;
  for (const auto& [name, value] : r->headers) {  // std::map: sorted by name
    absl::StrAppend(&canonical_headers, name, ":", value, "\n");
    if (!signed_headers.empty()) signed_headers += ";";
    signed_headers += name;
  }
  const std::string creq = absl::StrJoin(
      {r->method, r->path, CanonicalQuery(r->query), canonical_headers, signed_headers,
       r->payload_sha256},
      "\n");
  const std::string scope = absl::StrCat(day, "/", r->region, "/", r->service, "/aws4_request");
  const std::string sts =
      absl::StrJoin({std::string("AWS4-HMAC-SHA256"), amz_date, scope, Sha256Hex(creq)}, "\n");
  std::string key = Hmac(absl::StrCat("AWS4", c.secret_access_key), day);
  key = Hmac(key, r->region);
  key = Hmac(key, r->service);
  key = Hmac(key, "aws4_request");
  return absl::StrCat("AWS4-HMAC-SHA256 Credential=", c.access_key_id, "/", scope,
                      ", SignedHeaders=", signed_headers, ", Signature=", HexOf(Hmac(key, sts)));
}

}  // namespace neuron::dump
