// neuron-dump: shows core dumps, input dumps and NEFFs; uploads dumps to
// S3; and is what the runtime hands a core dump to (called with the real
// runtime's flags and no subcommand). The work is in lib/dump/cli.cc; this
// file parses the command line.
#include <getopt.h>

#include <cstring>
#include <string>
#include <vector>

#include "lib/dump/cli.h"
#include "lib/support/cli.h"
#include "lib/support/parse.h"

namespace {

constexpr const char* kTool = "neuron-dump";

constexpr const char* kUsage =
    "usage: neuron-dump show FILE|DIR|- ... [--json]\n"
    "       neuron-dump upload PATH... --to s3://BUCKET/PREFIX/ [options]\n"
    "       neuron-dump --local-output-dir DIR [--s3-output-prefix S3URI] [runtime flags]\n"
    "\n"
    "Inspect and upload what a failing execution leaves behind.\n"
    "\n"
    "show: a core dump, an input-dump manifest (or its directory), or a NEFF\n"
    "(header, compiler version, LNC, features, members, tensors, options).\n"
    "  -j, --json                    print JSON\n"
    "\n"
    "upload: files, and directories' files with their relative paths, to the prefix.\n"
    "      --to s3://BUCKET/PREFIX/  destination (required)\n"
    "      --endpoint-url URL        an S3-compatible endpoint (default: AWS_ENDPOINT_URL_S3,\n"
    "                                AWS_ENDPOINT_URL, else AWS)\n"
    "      --region R                region (default: AWS_REGION, AWS_DEFAULT_REGION, config)\n"
    "      --part-size SIZE          multipart part size (default 8MiB, at least 5MiB)\n"
    "      --multipart-threshold SIZE  files this large go in parts (default 16MiB)\n"
    "      --max-attempts N          attempts per request (default 5)\n"
    "      --delete-after            remove each local file once its upload is confirmed\n"
    "      --progress, --no-progress a progress line on stderr (default: on a terminal)\n"
    "  -j, --json                    print JSON\n"
    "\n"
    "  -h, --help                    print this help\n"
    "      --version                 print the version\n"
    "\n"
    "Credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN, or AWS_PROFILE in\n"
    "~/.aws/credentials and ~/.aws/config; never printed. See neuron-dump(1).\n";

enum Long {
  kVersion = 256, kTo, kEndpoint, kRegion, kPartSize, kThreshold, kAttempts, kDeleteAfter,
  kProgress, kNoProgress,
  kNeffName, kNeffUuid, kDateTime, kPid, kTid, kLogId, kInstanceId, kClusterId, kErrorLocation,
  kErrorCode, kLocalDir, kS3Prefix,
};

int Usage(const std::string& message) { return neuron::UsageError(kTool, message); }

int Show(int argc, char** argv) {
  static const option kOptions[] = {
      {"json", no_argument, nullptr, 'j'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  bool json = false;
  opterr = 0;
  optind = 1;
  int opt;
  while ((opt = getopt_long(argc, argv, "+:jh", kOptions, nullptr)) != -1) {
    switch (opt) {
      case 'j': json = true; break;
      case 'h': std::fputs(kUsage, stdout); return neuron::kExitOk;
      default: return neuron::GetoptUsageError(kTool, opt, argv, "show: ");
    }
  }
  std::vector<std::string> paths(argv + optind, argv + argc);
  if (paths.empty()) return Usage("show: give a FILE, a directory, or - for stdin");
  return neuron::dump::RunShow(paths, json);
}

int Upload(int argc, char** argv) {
  static const option kOptions[] = {
      {"to", required_argument, nullptr, kTo},
      {"endpoint-url", required_argument, nullptr, kEndpoint},
      {"region", required_argument, nullptr, kRegion},
      {"part-size", required_argument, nullptr, kPartSize},
      {"multipart-threshold", required_argument, nullptr, kThreshold},
      {"max-attempts", required_argument, nullptr, kAttempts},
      {"delete-after", no_argument, nullptr, kDeleteAfter},
      {"progress", no_argument, nullptr, kProgress},
      {"no-progress", no_argument, nullptr, kNoProgress},
      {"json", no_argument, nullptr, 'j'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  neuron::dump::UploadRequest r;
  opterr = 0;
  optind = 1;
  int opt;
  while ((opt = getopt_long(argc, argv, ":jh", kOptions, nullptr)) != -1) {
    switch (opt) {
      case kTo: r.to = optarg; break;
      case kEndpoint: r.endpoint_url = optarg; break;
      case kRegion: r.region = optarg; break;
      case kPartSize:
      case kThreshold: {
        absl::StatusOr<uint64_t> v = neuron::ParseByteCount(optarg);
        if (!v.ok())
          return Usage(std::string(opt == kPartSize ? "--part-size" : "--multipart-threshold") +
                       ": " + std::string(v.status().message()));
        (opt == kPartSize ? r.part_size : r.multipart_threshold) = *v;
        break;
      }
      case kAttempts: {
        absl::StatusOr<uint64_t> v = neuron::ParseUnsigned(optarg);
        if (!v.ok() || *v < 1 || *v > 100) return Usage("--max-attempts: give 1 to 100");
        r.max_attempts = static_cast<int>(*v);
        break;
      }
      case kDeleteAfter: r.delete_after = true; break;
      case kProgress: r.progress = 1; break;
      case kNoProgress: r.progress = 0; break;
      case 'j': r.json = true; break;
      case 'h': std::fputs(kUsage, stdout); return neuron::kExitOk;
      default: return neuron::GetoptUsageError(kTool, opt, argv, "upload: ");
    }
  }
  r.paths.assign(argv + optind, argv + argc);
  if (r.paths.empty()) return Usage("upload: give at least one file or directory");
  if (r.to.empty()) return Usage("upload: --to s3://BUCKET/PREFIX/ is required");
  if (r.part_size < (5ull << 20)) return Usage("--part-size: at least 5MiB (S3's minimum)");
  return neuron::dump::RunUpload(r);
}

int Handoff(int argc, char** argv) {
  static const option kOptions[] = {
      {"neff-name", required_argument, nullptr, kNeffName},
      {"neff-uuid", required_argument, nullptr, kNeffUuid},
      {"date-time", required_argument, nullptr, kDateTime},
      {"pid", required_argument, nullptr, kPid},
      {"tid", required_argument, nullptr, kTid},
      {"log-id", required_argument, nullptr, kLogId},
      {"instance-id", required_argument, nullptr, kInstanceId},
      {"cluster-id", required_argument, nullptr, kClusterId},
      {"error-location", required_argument, nullptr, kErrorLocation},
      {"error-code", required_argument, nullptr, kErrorCode},
      {"local-output-dir", required_argument, nullptr, kLocalDir},
      {"s3-output-prefix", required_argument, nullptr, kS3Prefix},
      {nullptr, 0, nullptr, 0},
  };
  neuron::dump::HandoffRequest r;
  opterr = 0;
  optind = 1;
  int opt;
  while ((opt = getopt_long(argc, argv, ":", kOptions, nullptr)) != -1) {
    switch (opt) {
      case kNeffName: r.neff_name = optarg; break;
      case kNeffUuid: r.neff_uuid = optarg; break;
      case kDateTime: r.date_time = optarg; break;
      case kPid: r.pid = optarg; break;
      case kTid: r.tid = optarg; break;
      case kLogId: r.log_id = optarg; break;
      case kInstanceId: r.instance_id = optarg; break;
      case kClusterId: r.cluster_id = optarg; break;
      case kErrorLocation: r.error_location = optarg; break;
      case kErrorCode: r.error_code = optarg; break;
      case kLocalDir: r.local_output_dir = optarg; break;
      case kS3Prefix: r.s3_output_prefix = optarg; break;
      default: return neuron::GetoptUsageError(kTool, opt, argv);
    }
  }
  if (optind < argc) return Usage(std::string("unexpected argument '") + argv[optind] + "'");
  if (r.local_output_dir.empty()) return Usage("--local-output-dir is required");
  return neuron::dump::RunHandoff(r);
}

}  // namespace

int main(int argc, char** argv) {
  return neuron::RunGuarded(kTool, [&]() -> int {
    if (argc < 2) return Usage("give a command: show, upload (see --help)");
    const std::string cmd = argv[1];
    if (cmd == "-h" || cmd == "--help" || cmd == "help") {
      std::fputs(kUsage, stdout);
      return neuron::kExitOk;
    }
    if (cmd == "--version") {
      neuron::PrintVersion(kTool);
      return neuron::kExitOk;
    }
    if (cmd == "show") return Show(argc - 1, argv + 1);
    if (cmd == "upload") return Upload(argc - 1, argv + 1);
    if (cmd.rfind("--", 0) == 0) return Handoff(argc, argv);
    return Usage("unknown command '" + cmd + "' (show, upload)");
  });
}
