// AWS Signature Version 4 for S3 requests (hand-written over OpenSSL so
// every signed header, the payload hash and Content-MD5 are ours to set):
// canonical request, string to sign, signing key, Authorization header.
#ifndef NEURON_TOOLS_NEURON_DUMP_SIGV4_H_
#define NEURON_TOOLS_NEURON_DUMP_SIGV4_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "tools/neuron-dump/aws_credentials.h"

namespace neuron::dump {

std::string Sha256Hex(std::string_view data);
std::string Md5Hex(std::string_view data);
std::string Md5Base64(std::string_view data);
std::string Md5Raw(std::string_view data);
std::string HexOf(std::string_view raw);
// MD5 of a file's bytes, read in chunks; "" when it cannot be read.
std::string Md5HexOfFile(const std::string& path);

// RFC 3986 percent-encoding; '/' kept when `keep_slash`.
std::string UriEncode(std::string_view text, bool keep_slash);

struct SignRequest {
  std::string method;                       // "PUT"
  std::string path;                         // already encoded, e.g. "/bucket/a%20b"
  std::vector<std::pair<std::string, std::string>> query;  // decoded key, value
  std::map<std::string, std::string> headers;  // lowercase names; host included
  std::string payload_sha256;               // hex, or "UNSIGNED-PAYLOAD"
  std::string region;
  std::string service = "s3";
  absl::Time time;
};

// Adds x-amz-date, x-amz-content-sha256 (and x-amz-security-token) to
// `request->headers` and returns the Authorization header value.
std::string Sign(SignRequest* request, const AwsCredentials& credentials);

// "a=1&b=2", sorted and encoded as the canonical query.
std::string CanonicalQuery(const std::vector<std::pair<std::string, std::string>>& query);

}  // namespace neuron::dump

#endif  // NEURON_TOOLS_NEURON_DUMP_SIGV4_H_
