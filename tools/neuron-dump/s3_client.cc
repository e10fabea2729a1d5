#include "tools/neuron-dump/s3_client.h"

#include <algorithm>
#include <random>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "tools/neuron-dump/curl_library.h"
#include "tools/neuron-dump/sigv4.h"

namespace neuron::dump {
namespace {

struct Upload {
  std::string_view body;
  size_t offset = 0;
};

size_t ReadBody(char* buf, size_t size, size_t n, void* user) {
  auto* u = static_cast<Upload*>(user);
  const size_t take = std::min(size * n, u->body.size() - u->offset);
  std::memcpy(buf, u->body.data() + u->offset, take);
  u->offset += take;
  return take;
}

size_t WriteBody(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

size_t WriteHeader(char* data, size_t size, size_t n, void* user) {
  auto* headers = static_cast<std::map<std::string, std::string>*>(user);
  absl::string_view line(data, size * n);
  const size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    (*headers)[absl::AsciiStrToLower(line.substr(0, colon))] =
        std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  }
  return size * n;
}

struct ProgressCtx {
  const ProgressFn* fn;
};

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t ulnow) {
  auto* p = static_cast<ProgressCtx*>(user);
  if (p->fn != nullptr && *p->fn) (*p->fn)(static_cast<uint64_t>(ulnow));
  return 0;
}

bool RetryableCurl(CURLcode code) {
  switch (code) {
    case CURLE_UNSUPPORTED_PROTOCOL: case CURLE_URL_MALFORMAT:
    case CURLE_COULDNT_RESOLVE_HOST: case CURLE_SSL_CACERT_BADFILE:
    case CURLE_PEER_FAILED_VERIFICATION:
      return false;
    default:
      return true;
  }
}

bool RetryableHttp(long status, std::string_view code) {
  if (status >= 500 || status == 429 || status == 408) return true;
  return code == "RequestTimeout" || code == "BadDigest" || code == "SlowDown" ||
         code == "InternalError";
}

std::string Unquote(std::string etag) {
  if (etag.size() >= 12 && etag.rfind("&quot;", 0) == 0 && etag.find("&quot;", 6) == etag.size() - 6)
    etag = etag.substr(6, etag.size() - 12);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"')
    etag = etag.substr(1, etag.size() - 2);
  return etag;
}

}  // namespace

std::string XmlValue(std::string_view xml, std::string_view tag) {
  const std::string t(tag);
  const std::string open = "<" + t + ">", close = "</" + t + ">";
  const size_t a = xml.find(open);
  if (a == std::string_view::npos) return "";
  const size_t b = xml.find(close, a + open.size());
  if (b == std::string_view::npos) return "";
  return std::string(xml.substr(a + open.size(), b - a - open.size()));
}

absl::StatusOr<S3Location> ParseS3Uri(std::string_view text) {
  absl::string_view uri(text.data(), text.size());
  if (!absl::ConsumePrefix(&uri, "s3://"))
    return absl::InvalidArgumentError(absl::StrCat("'", uri, "' is not an s3://bucket/prefix URI"));
  const size_t slash = uri.find('/');
  S3Location loc;
  loc.bucket = std::string(uri.substr(0, slash));
  if (slash != std::string_view::npos) loc.key = std::string(uri.substr(slash + 1));
  const bool ok_chars = std::all_of(loc.bucket.begin(), loc.bucket.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
  });
  if (loc.bucket.size() < 3 || loc.bucket.size() > 63 || !ok_chars)
    return absl::InvalidArgumentError(absl::StrCat(
        "s3://", uri, ": bucket name '", loc.bucket,
        "' must be 3 to 63 lowercase letters, digits, '-' or '.'"));
  return loc;
}

S3Client::S3Client(AwsCredentials credentials, S3Options options)
    : credentials_(std::move(credentials)), options_(std::move(options)) {}

absl::StatusOr<S3Client::Response> S3Client::Send(
    const std::string& method, const S3Location& at,
    const std::vector<std::pair<std::string, std::string>>& query, std::string_view body,
    const ProgressFn& progress, bool content_md5) {
  absl::StatusOr<const CurlLibrary*> loaded = LoadCurl();
  if (!loaded.ok()) return loaded.status();
  const CurlLibrary& api = **loaded;
  // Where the request goes and what path is signed.
  std::string base, host, path;
  const std::string key_path = UriEncode(at.key, /*keep_slash=*/true);
  if (!options_.endpoint_url.empty()) {
    base = std::string(absl::StripSuffix(options_.endpoint_url, "/"));
    absl::string_view rest = base;
    absl::ConsumePrefix(&rest, "http://") || absl::ConsumePrefix(&rest, "https://");
    host = std::string(rest.substr(0, rest.find('/')));
    const std::string base_path = std::string(rest.substr(std::min(rest.size(), host.size())));
    path = absl::StrCat(base_path, "/", at.bucket, "/", key_path);
    base = base.substr(0, base.size() - base_path.size());
  } else if (at.bucket.find('.') == std::string::npos) {
    host = absl::StrCat(at.bucket, ".s3.", options_.region, ".amazonaws.com");
    base = "https://" + host;
    path = "/" + key_path;
  } else {
    host = absl::StrCat("s3.", options_.region, ".amazonaws.com");
    base = "https://" + host;
    path = absl::StrCat("/", at.bucket, "/", key_path);
  }
  const std::string cquery = CanonicalQuery(query);
  const std::string url = absl::StrCat(base, path, cquery.empty() ? "" : "?", cquery);
  const std::string where = absl::StrCat(method, " s3://", at.bucket, "/", at.key);
  const std::string payload_hash = Sha256Hex(body);
  const std::string md5 = content_md5 ? Md5Base64(body) : "";

  absl::Duration backoff = options_.initial_backoff;
  std::mt19937_64 rng(std::random_device{}());
  std::string last_error;
  for (int attempt = 1; attempt <= std::max(1, options_.max_attempts); ++attempt) {
    if (attempt > 1) {
      ++retries_;
      const double jitter = std::uniform_real_distribution<double>(0.5, 1.0)(rng);
      absl::SleepFor(backoff * jitter);
      backoff = std::min(backoff * 2, options_.max_backoff);
    }
    SignRequest sr;
    sr.method = method;
    sr.path = path;
    sr.query = query;
    sr.headers["host"] = host;
    if (!md5.empty()) sr.headers["content-md5"] = md5;
    sr.payload_sha256 = payload_hash;
    sr.region = options_.region;
    sr.time = absl::Now();
    const std::string authorization = Sign(&sr, credentials_);

    CURL* curl = api.curl_easy_init();
    if (curl == nullptr) return absl::InternalError("cannot initialise libcurl");
    curl_slist* headers = nullptr;
    for (const auto& [name, value] : sr.headers) {
      if (name == "host") continue;  // curl sends it from the URL
      headers = api.curl_slist_append(headers, absl::StrCat(name, ": ", value).c_str());
    }
    headers = api.curl_slist_append(headers, absl::StrCat("Authorization: ", authorization).c_str());
    headers = api.curl_slist_append(headers, "Expect:");
    Upload upload{body, 0};
    Response resp;
    ProgressCtx pctx{&progress};
    api.curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    api.curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    api.curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, options_.connect_timeout_s);
    api.curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    api.curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, options_.stall_timeout_s);
    api.curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, WriteBody);
    api.curl_easy_setopt(curl, CURLOPT_WRITEDATA, &resp.body);
    api.curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, WriteHeader);
    api.curl_easy_setopt(curl, CURLOPT_HEADERDATA, &resp.headers);
    if (method == "PUT") {
      api.curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
      api.curl_easy_setopt(curl, CURLOPT_READFUNCTION, ReadBody);
      api.curl_easy_setopt(curl, CURLOPT_READDATA, &upload);
      api.curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(body.size()));
      api.curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
      api.curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, OnProgress);
      api.curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &pctx);
    } else if (method == "POST") {
      api.curl_easy_setopt(curl, CURLOPT_POST, 1L);
      api.curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
      api.curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    } else if (method == "HEAD") {
      api.curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    } else if (method != "GET") {
      api.curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
    }
    api.curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    const CURLcode rc = api.curl_easy_perform(curl);
    api.curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &resp.status);
    api.curl_slist_free_all(headers);
    api.curl_easy_cleanup(curl);

    if (rc != CURLE_OK) {
      last_error = absl::StrCat(where, ": ", api.curl_easy_strerror(rc));
      if (!RetryableCurl(rc)) return absl::UnavailableError(last_error);
      continue;
    }
    if (resp.status >= 200 && resp.status < 300) {
      // CompleteMultipartUpload may answer 200 with an <Error> body.
      if (method == "POST" && absl::StrContains(resp.body, "<Error>")) {
        last_error = absl::StrCat(where, ": ", XmlValue(resp.body, "Code"), ": ",
                                  XmlValue(resp.body, "Message"));
        continue;
      }
      return resp;
    }
    const std::string code = XmlValue(resp.body, "Code");
    const std::string message = XmlValue(resp.body, "Message");
    last_error = absl::StrFormat("%s: HTTP %d%s%s%s%s", where, resp.status,
                                 code.empty() ? "" : " ", code, message.empty() ? "" : ": ",
                                 message);
    if (code == "SignatureDoesNotMatch" || code == "InvalidAccessKeyId" ||
        code == "AccessDenied" || resp.status == 403) {
      return absl::PermissionDeniedError(absl::StrCat(
          last_error, " (the server refused the credentials from ", credentials_.source,
          "; check the access key id and secret)"));
    }
    if (resp.status == 404) return absl::NotFoundError(last_error);
    if (!RetryableHttp(resp.status, code)) return absl::FailedPreconditionError(last_error);
  }
  return absl::UnavailableError(
      absl::StrCat(last_error, " (gave up after ", options_.max_attempts, " attempts)"));
}

absl::StatusOr<std::string> S3Client::PutObject(const S3Location& at, std::string_view body,
                                                const ProgressFn& progress) {
  absl::StatusOr<Response> r = Send("PUT", at, {}, body, progress, true);
  if (!r.ok()) return r.status();
  return Unquote(r->headers["etag"]);
}

absl::StatusOr<std::string> S3Client::CreateMultipartUpload(const S3Location& at) {
  absl::StatusOr<Response> r = Send("POST", at, {{"uploads", ""}}, "", nullptr, false);
  if (!r.ok()) return r.status();
  std::string id = XmlValue(r->body, "UploadId");
  if (id.empty())
    return absl::InternalError(absl::StrCat("s3://", at.bucket, "/", at.key,
                                            ": the server returned no UploadId"));
  return id;
}

absl::StatusOr<std::string> S3Client::UploadPart(const S3Location& at,
                                                 const std::string& upload_id, int part_number,
                                                 std::string_view body,
                                                 const ProgressFn& progress) {
  absl::StatusOr<Response> r =
      Send("PUT", at, {{"partNumber", absl::StrCat(part_number)}, {"uploadId", upload_id}}, body,
           progress, true);
  if (!r.ok()) return r.status();
  return Unquote(r->headers["etag"]);
}

absl::StatusOr<std::string> S3Client::CompleteMultipartUpload(
    const S3Location& at, const std::string& upload_id, const std::vector<std::string>& etags) {
  std::string xml = "<CompleteMultipartUpload>";
  for (size_t i = 0; i < etags.size(); ++i)
    absl::StrAppend(&xml, "<Part><PartNumber>", i + 1, "</PartNumber><ETag>\"", etags[i],
                    "\"</ETag></Part>");
  xml += "</CompleteMultipartUpload>";
  absl::StatusOr<Response> r = Send("POST", at, {{"uploadId", upload_id}}, xml, nullptr, true);
  if (!r.ok()) return r.status();
  return Unquote(XmlValue(r->body, "ETag").empty() ? r->headers["etag"]
                                                   : XmlValue(r->body, "ETag"));
}

absl::Status S3Client::AbortMultipartUpload(const S3Location& at, const std::string& upload_id) {
  absl::StatusOr<Response> r = Send("DELETE", at, {{"uploadId", upload_id}}, "", nullptr, false);
  return r.ok() ? absl::OkStatus() : r.status();
}

absl::StatusOr<ObjectInfo> S3Client::Head(const S3Location& at) {
  absl::StatusOr<Response> r = Send("HEAD", at, {}, "", nullptr, false);
  if (!r.ok()) return r.status();
  ObjectInfo info;
  info.size = std::strtoull(r->headers["content-length"].c_str(), nullptr, 10);
  info.etag = Unquote(r->headers["etag"]);
  return info;
}

absl::StatusOr<std::string> S3Client::Get(const S3Location& at) {
  absl::StatusOr<Response> r = Send("GET", at, {}, "", nullptr, false);
  if (!r.ok()) return r.status();
  return std::move(r->body);
}

}  // namespace neuron::dump
