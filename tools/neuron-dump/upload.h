// neuron-dump upload: files and directories to s3://bucket/prefix/. Each
// file lands at the prefix plus its name; a directory's files at the
// prefix plus their path inside it. Files above the multipart threshold
// go in parts. After each object, a HEAD confirms its size and ETag (the
// MD5 of the bytes, or of the part MD5s for multipart); only then may the
// local file be removed (delete_after).
#ifndef NEURON_TOOLS_NEURON_DUMP_UPLOAD_H_
#define NEURON_TOOLS_NEURON_DUMP_UPLOAD_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/neuron-dump/s3_client.h"

namespace neuron::dump {

struct UploadOptions {
  std::string to;  // s3://bucket/prefix
  uint64_t part_size = 8ull << 20;            // at least 5 MiB (S3's minimum)
  uint64_t multipart_threshold = 16ull << 20; // files this large go in parts
  bool delete_after = false;                  // remove local files once confirmed
  bool progress = false;                      // a progress line on stderr
};

struct UploadedObject {
  std::string local;
  std::string uri;  // s3://bucket/key
  uint64_t bytes = 0;
  std::string etag;
  int parts = 0;    // 0: single PUT
  bool deleted = false;
};

// The files of `paths` with their keys under `prefix_key` (directories
// walked, sorted). Errors name the path.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> PlanUpload(
    const std::vector<std::string>& paths, const std::string& prefix_key);

// Uploads everything; stops at the first failure (what was uploaded and
// confirmed before it is kept, nothing is deleted for the failed file).
absl::StatusOr<std::vector<UploadedObject>> UploadFiles(S3Client& client,
                                                        const std::vector<std::string>& paths,
                                                        const UploadOptions& options);

}  // namespace neuron::dump

#endif  // NEURON_TOOLS_NEURON_DUMP_UPLOAD_H_
