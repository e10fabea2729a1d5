// neuron-dump: shows core dumps, input dumps and NEFFs; uploads dumps to
// S3; and is what the runtime hands a core dump to (called with the real
// runtime's flags and no subcommand). The work is in cli.cc beside it; this
// file parses the command line.
#include <cstdio>
#include <string>
#include <vector>

#include "lib/support/cli.h"
#include "lib/support/options.h"
#include "lib/support/parse.h"
#include "tools/neuron-dump/cli.h"

namespace {

constexpr const char* kTool = "neuron-dump";

using neuron::cli::Arg;
using neuron::cli::Command;
using Status = absl::Status;

// A handler storing the value as it is.
neuron::cli::Handler Store(std::string* out) {
  return [out](std::string_view v) {
    *out = std::string(v);
    return absl::OkStatus();
  };
}

neuron::cli::Handler Flag(bool* out) {
  return [out](std::string_view) {
    *out = true;
    return absl::OkStatus();
  };
}

neuron::cli::Handler ByteCount(uint64_t* out) {
  return [out](std::string_view v) -> Status {
    absl::StatusOr<uint64_t> n = neuron::ParseByteCount(v);
    if (!n.ok()) return n.status();
    *out = *n;
    return absl::OkStatus();
  };
}

Command ShowCommand(bool* json) {
  return {
      .tool = kTool,
      .name = "show",
      .usage = "FILE|DIR|- ... [options]",
      .description =
          "show core dumps, input dumps and NEFFs\n\n"
          "A core dump, an input-dump manifest (or its directory), or a NEFF (header,\n"
          "compiler version, LNC, features, members, tensors, options).",
      .options = {{'j', "json", Arg::kNone, "", "print JSON", Flag(json)}},
      .min_operands = 1,
      .missing_operand = "show: give a FILE, a directory, or - for stdin",
      .operand_complete = "file",
  };
}

Command UploadCommand(neuron::dump::UploadRequest* r) {
  return {
      .tool = kTool,
      .name = "upload",
      .usage = "PATH... --to s3://BUCKET/PREFIX/ [options]",
      .description =
          "upload dumps to S3\n\n"
          "Files, and directories' files with their relative paths, go to the prefix.",
      .options = {
          {0, "to", Arg::kRequired, "s3://BUCKET/PREFIX/", "destination (required)", Store(&r->to)},
          {0, "endpoint-url", Arg::kRequired, "URL",
           "an S3-compatible endpoint (default: AWS_ENDPOINT_URL_S3,\nAWS_ENDPOINT_URL, else AWS)",
           Store(&r->endpoint_url)},
          {0, "region", Arg::kRequired, "R",
           "region (default: AWS_REGION, AWS_DEFAULT_REGION, config)", Store(&r->region)},
          {0, "part-size", Arg::kRequired, "SIZE", "multipart part size (default 8MiB, at least 5MiB)",
           ByteCount(&r->part_size)},
          {0, "multipart-threshold", Arg::kRequired, "SIZE",
           "files this large go in parts (default 16MiB)", ByteCount(&r->multipart_threshold)},
          {0, "max-attempts", Arg::kRequired, "N", "attempts per request (default 5)",
           [r](std::string_view v) -> Status {
             absl::StatusOr<uint64_t> n = neuron::ParseUnsigned(v);
             if (!n.ok() || *n < 1 || *n > 100) return absl::InvalidArgumentError("give 1 to 100");
             r->max_attempts = static_cast<int>(*n);
             return absl::OkStatus();
           }},
          {0, "delete-after", Arg::kNone, "", "remove each local file once its upload is confirmed",
           Flag(&r->delete_after)},
          {0, "progress", Arg::kNone, "", "a progress line on stderr (default: on a terminal)",
           [r](std::string_view) { r->progress = 1; return absl::OkStatus(); }},
          {0, "no-progress", Arg::kNone, "", "no progress line",
           [r](std::string_view) { r->progress = 0; return absl::OkStatus(); }},
          {'j', "json", Arg::kNone, "", "print JSON", Flag(&r->json)},
      },
      .notes =
          "Credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN, or AWS_PROFILE in\n"
          "~/.aws/credentials and ~/.aws/config; never printed. See neuron-dump(1).",
      .min_operands = 1,
      .missing_operand = "upload: give at least one file or directory",
      .operand_complete = "file",
  };
}

// Without a command: the real runtime's hand-off of a core dump.
Command RootCommand(neuron::dump::HandoffRequest* r, std::vector<Command> subcommands) {
  return {
      .tool = kTool,
      .usage = "show|upload ... [options]\n"
               "       neuron-dump --local-output-dir DIR [--s3-output-prefix S3URI] [runtime flags]",
      .description =
          "Inspect and upload what a failing execution leaves behind. Without a command,\n"
          "record a core dump the runtime hands over (its flags below).",
      .options = {
          {0, "local-output-dir", Arg::kRequired, "DIR", "where the dump is (required)",
           Store(&r->local_output_dir), "dir"},
          {0, "s3-output-prefix", Arg::kRequired, "S3URI", "upload the directory there",
           Store(&r->s3_output_prefix)},
          {0, "neff-name", Arg::kRequired, "NAME", "the failed model's NEFF", Store(&r->neff_name)},
          {0, "neff-uuid", Arg::kRequired, "UUID", "its uuid", Store(&r->neff_uuid)},
          {0, "date-time", Arg::kRequired, "yyyy-mm-dd-HH-MM", "when it failed", Store(&r->date_time)},
          {0, "pid", Arg::kRequired, "PID", "the failed process", Store(&r->pid)},
          {0, "tid", Arg::kRequired, "TID", "its thread", Store(&r->tid)},
          {0, "log-id", Arg::kRequired, "ID", "the runtime's log id", Store(&r->log_id)},
          {0, "instance-id", Arg::kRequired, "ID", "the instance", Store(&r->instance_id)},
          {0, "cluster-id", Arg::kRequired, "ID", "the cluster", Store(&r->cluster_id)},
          {0, "error-location", Arg::kRequired, "WHERE", "where the error was raised",
           Store(&r->error_location)},
          {0, "error-code", Arg::kRequired, "CODE", "the runtime's error code", Store(&r->error_code)},
      },
      .notes = "Run 'neuron-dump show --help' or 'neuron-dump upload --help' for theirs.\n"
               "See neuron-dump(1).",
      .max_operands = 0,
      .subcommands = std::move(subcommands),
  };
}

}  // namespace

int main(int argc, char** argv) {
  return neuron::RunGuarded(kTool, [&]() -> int {
    bool show_json = false;
    neuron::dump::UploadRequest upload;
    neuron::dump::HandoffRequest handoff;
    const Command root =
        RootCommand(&handoff, {ShowCommand(&show_json), UploadCommand(&upload)});
    if (argc < 2) return neuron::cli::UsageError(root, "give a command: show, upload");
    if (std::string_view(argv[1]) == "help") {
      std::fputs(neuron::cli::HelpText(root).c_str(), stdout);
      return neuron::kExitOk;
    }
    neuron::cli::ParsedArgs parsed;
    if (int rc = neuron::cli::ParseCommandLine(root, argc, argv, &parsed); rc >= 0) return rc;
    const Command& command = *parsed.command;
    if (command.name == "show") return neuron::dump::RunShow(parsed.operands, show_json);
    if (command.name == "upload") {
      upload.paths = parsed.operands;
      if (upload.to.empty()) {
        return neuron::cli::UsageError(command, "upload: --to s3://BUCKET/PREFIX/ is required");
      }
      if (upload.part_size < (5ull << 20)) {
        return neuron::cli::UsageError(command, "--part-size: at least 5MiB (S3's minimum)");
      }
      return neuron::dump::RunUpload(upload);
    }
    if (handoff.local_output_dir.empty()) {
      return neuron::cli::UsageError(command, "--local-output-dir is required");
    }
    return neuron::dump::RunHandoff(handoff);
  });
}
