// A small S3 client over libcurl (opened on the first request,
// curl_library.h) with hand-made SigV4: put, multipart upload, head, get.
// Path-style URLs against --endpoint-url (S3-compatible stores),
// virtual-hosted ones against AWS. Every request is re-signed and retried
// with exponential backoff on network errors, 5xx, 429 and
// RequestTimeout/BadDigest; other refusals fail at once with S3's code and
// message. Bodies carry Content-MD5, so a corrupted body is rejected.
#ifndef NEURON_TOOLS_NEURON_DUMP_S3_CLIENT_H_
#define NEURON_TOOLS_NEURON_DUMP_S3_CLIENT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tools/neuron-dump/aws_credentials.h"

namespace neuron::dump {

struct S3Location {
  std::string bucket;
  std::string key;  // may be empty or end in '/'
};

// "s3://bucket/prefix"; errors say what is wrong with the URI.
absl::StatusOr<S3Location> ParseS3Uri(std::string_view uri);

struct S3Options {
  std::string endpoint_url;  // "" = https://BUCKET.s3.REGION.amazonaws.com
  std::string region = "us-east-1";
  int max_attempts = 5;
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(8);
  long connect_timeout_s = 10;
  long stall_timeout_s = 60;  // no progress for this long: the attempt fails
};

struct ObjectInfo {
  uint64_t size = 0;
  std::string etag;  // without quotes
};

// Bytes of the current request body sent so far.
using ProgressFn = std::function<void(uint64_t sent)>;

class S3Client {
 public:
  S3Client(AwsCredentials credentials, S3Options options);

  // Each returns the ETag (unquoted).
  absl::StatusOr<std::string> PutObject(const S3Location& at, std::string_view body,
                                        const ProgressFn& progress = nullptr);
  absl::StatusOr<std::string> CreateMultipartUpload(const S3Location& at);
  absl::StatusOr<std::string> UploadPart(const S3Location& at, const std::string& upload_id,
                                         int part_number, std::string_view body,
                                         const ProgressFn& progress = nullptr);
  absl::StatusOr<std::string> CompleteMultipartUpload(
      const S3Location& at, const std::string& upload_id,
      const std::vector<std::string>& part_etags);
  absl::Status AbortMultipartUpload(const S3Location& at, const std::string& upload_id);
  absl::StatusOr<ObjectInfo> Head(const S3Location& at);
  absl::StatusOr<std::string> Get(const S3Location& at);

  // Attempts that failed and were retried, since construction.
  int retries() const { return retries_; }

  struct Response {
    long status = 0;
    std::string body;
    std::map<std::string, std::string> headers;  // lowercase names
  };

 private:
  absl::StatusOr<Response> Send(const std::string& method, const S3Location& at,
                                const std::vector<std::pair<std::string, std::string>>& query,
                                std::string_view body, const ProgressFn& progress,
                                bool content_md5);

  AwsCredentials credentials_;
  S3Options options_;
  int retries_ = 0;
};

// The text of <tag>...</tag> in an XML body ("" when absent).
std::string XmlValue(std::string_view xml, std::string_view tag);

}  // namespace neuron::dump

#endif  // NEURON_TOOLS_NEURON_DUMP_S3_CLIENT_H_
