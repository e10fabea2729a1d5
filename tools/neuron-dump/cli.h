// What neuron-dump does once its flags are parsed: show, upload, and the
// runtime's hand-off (no subcommand, the real runtime's flags). Each
// prints results on stdout, one "neuron-dump: error: ..." line on failure,
// and returns the exit status (0 ok, 1 failure).
#ifndef NEURON_TOOLS_NEURON_DUMP_CLI_H_
#define NEURON_TOOLS_NEURON_DUMP_CLI_H_

#include <cstdint>
#include <string>
#include <vector>

namespace neuron::dump {

int RunShow(const std::vector<std::string>& paths, bool json);

struct UploadRequest {
  std::vector<std::string> paths;
  std::string to;             // s3://bucket/prefix
  std::string endpoint_url;   // "" = AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, AWS
  std::string region;         // "" = the environment's
  uint64_t part_size = 8ull << 20;
  uint64_t multipart_threshold = 16ull << 20;
  int max_attempts = 5;
  bool delete_after = false;
  bool json = false;
  int progress = -1;          // -1: when stderr is a terminal
};
int RunUpload(const UploadRequest& request);

// The real runtime's arguments to neuron-dump.
struct HandoffRequest {
  std::string neff_name, neff_uuid, date_time, pid, tid, log_id, instance_id, cluster_id,
      error_location, error_code, local_output_dir, s3_output_prefix;
};
int RunHandoff(const HandoffRequest& request);

}  // namespace neuron::dump

#endif  // NEURON_TOOLS_NEURON_DUMP_CLI_H_
