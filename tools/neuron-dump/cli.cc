#include "tools/neuron-dump/cli.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "lib/dump/files.h"
#include "lib/dump/handoff.h"
#include "lib/dump/identity.h"
#include "lib/support/atomic_file.h"
#include "lib/support/cli.h"
#include "lib/support/parse.h"
#include "nlohmann/json.hpp"
#include "tools/neuron-dump/aws_credentials.h"
#include "tools/neuron-dump/curl_library.h"
#include "tools/neuron-dump/show.h"
#include "tools/neuron-dump/upload.h"

extern char** environ;

namespace neuron::dump {
namespace {

constexpr const char* kTool = "neuron-dump";

int Fail(std::string_view message) {
  PrintError(kTool, message);
  return kExitFailure;
}

std::string EndpointFromEnv(const GetEnv& env) {
  for (const char* var : {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"}) {
    std::optional<std::string> v = env(var);
    if (v.has_value() && !v->empty()) return *v;
  }
  return "";
}

}  // namespace

int RunShow(const std::vector<std::string>& paths, bool json) {
  int status = kExitOk;
  nlohmann::json all = nlohmann::json::array();
  for (size_t i = 0; i < paths.size(); ++i) {
    absl::StatusOr<nlohmann::json> v = Describe(paths[i]);
    if (!v.ok()) {
      PrintError(kTool, std::string(v.status().message()));
      status = kExitFailure;
      continue;
    }
    if (json) {
      all.push_back(*v);
    } else {
      if (i > 0) std::cout << "\n";
      std::cout << FormatText(*v);
    }
  }
  if (json) std::cout << (paths.size() == 1 && !all.empty() ? all[0] : all).dump(2) << "\n";
  return status;
}

int RunUpload(const UploadRequest& r) {
  const GetEnv env = ProcessGetEnv();
  absl::StatusOr<AwsCredentials> creds = LoadCredentials(env);
  if (!creds.ok()) return Fail(std::string(creds.status().message()));
  // libcurl is opened here, not at start; without it nothing is sent.
  if (absl::StatusOr<const CurlLibrary*> curl = LoadCurl(); !curl.ok())
    return Fail(std::string(curl.status().message()));
  S3Options options;
  options.endpoint_url = r.endpoint_url.empty() ? EndpointFromEnv(env) : r.endpoint_url;
  options.region = ResolveRegion(env, r.region);
  options.max_attempts = r.max_attempts;
  S3Client client(*creds, options);
  UploadOptions up;
  up.to = r.to;
  up.part_size = r.part_size;
  up.multipart_threshold = r.multipart_threshold;
  up.delete_after = r.delete_after;
  up.progress = r.progress < 0 ? isatty(2) != 0 : r.progress > 0;
  absl::StatusOr<std::vector<UploadedObject>> done = UploadFiles(client, r.paths, up);
  if (!done.ok()) return Fail(std::string(done.status().message()));
  if (r.json) {
    nlohmann::json j = {{"retries", client.retries()}, {"objects", nlohmann::json::array()}};
    for (const UploadedObject& o : *done)
      j["objects"].push_back({{"local", o.local}, {"uri", o.uri}, {"bytes", o.bytes},
                              {"etag", o.etag}, {"parts", o.parts}, {"deleted", o.deleted}});
    std::cout << j.dump(2) << "\n";
  } else {
    for (const UploadedObject& o : *done) {
      std::cout << absl::StrFormat("%s -> %s (%s%s, ETag %s%s)\n", o.local, o.uri,
                                   FormatBytes(o.bytes),
                                   o.parts ? absl::StrFormat(" in %d parts", o.parts) : "",
                                   o.etag, o.deleted ? ", local copy removed" : "");
    }
    if (client.retries() > 0)
      std::cout << absl::StrFormat("%d request(s) retried\n", client.retries());
  }
  return kExitOk;
}

int RunHandoff(const HandoffRequest& r) {
  if (r.local_output_dir.empty()) return Fail("--local-output-dir is required");
  // The identity the runtime handed over, for leftover % templates.
  DumpIdentity id;
  absl::Time t;
  std::string err;
  id.time = absl::ParseTime("%Y-%m-%d-%H-%M", r.date_time, absl::UTCTimeZone(), &t, &err)
                ? t : absl::Now();
  id.cluster_id = r.cluster_id.empty() ? kNoCluster : r.cluster_id;
  id.pid = std::atoll(r.pid.c_str());
  id.tid = std::atoll(r.tid.c_str());
  id.log_id = std::strtoull(r.log_id.c_str(), nullptr, 10);
  id.instance_id = r.instance_id.empty() ? InstanceId() : r.instance_id;
  const std::string dir = ExpandPathTemplate(r.local_output_dir, id);
  if (absl::Status s = MakeDirs(dir); !s.ok()) return Fail(std::string(s.message()));

  // What the runtime cannot see from inside: the host and the environment.
  std::string text = "# neuron-dump: environment at the time of the failure\n";
  absl::StrAppend(&text, "neff_name=", r.neff_name, "\nneff_uuid=", r.neff_uuid,
                  "\ndate_time=", r.date_time, "\npid=", r.pid, "\ntid=", r.tid,
                  "\nlog_id=", r.log_id, "\ninstance_id=", id.instance_id,
                  "\ncluster_id=", id.cluster_id, "\nerror_location=", r.error_location,
                  "\nerror_code=", r.error_code, "\n");
  utsname u{};
  if (uname(&u) == 0)
    absl::StrAppend(&text, "host=", u.nodename, " ", u.sysname, " ", u.release, " ", u.machine, "\n");
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv(*e);
    if (kv.rfind("NEURON_", 0) == 0) absl::StrAppend(&text, kv, "\n");
  }
  const std::string env_file =
      absl::StrFormat("%s/%s-neuron-dump-pid-%s-lid-%s.txt", dir, id.instance_id, r.pid, r.log_id);
  if (absl::Status s = WriteFileAtomically(env_file, text); !s.ok()) return Fail(std::string(s.message()));
  std::cout << absl::StrFormat("core dump of pid %s (%s, error %s at %s) in %s\n", r.pid,
                               r.neff_name, r.error_code, r.error_location, dir);
  if (r.s3_output_prefix.empty()) return kExitOk;

  const char* staged = std::getenv(kStagedEnv);
  UploadRequest up;
  up.paths = {dir};
  up.to = ExpandPathTemplate(r.s3_output_prefix, id);
  up.delete_after = staged != nullptr && dir == staged;
  up.progress = 0;
  const int rc = RunUpload(up);
  if (rc == kExitOk && up.delete_after) rmdir(dir.c_str());  // empty once all were confirmed
  return rc;
}

}  // namespace neuron::dump
