// neuron-dump upload against a real S3-compatible server (s3rver behind
// the SigV4-checking proxy): bytes read back identical, single and
// multipart, a wrong secret refused clearly, dropped connections retried
// without corrupting the object, local files removed only once confirmed,
// and the runtime's hand-off arguments.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <sstream>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/dump/s3_server.h"
#include "tests/support/tool_runner.h"
#include "tools/neuron-dump/s3_client.h"

namespace neuron::dump {
namespace {

using testing::RunTool;
using testing::S3Server;
using testing::ToolOptions;
using testing::ToolResult;

std::string RandomBytes(size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

std::string WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

ToolOptions Creds(const std::string& secret = S3Server::kKey) {
  ToolOptions o;
  o.env["AWS_ACCESS_KEY_ID"] = S3Server::kKey;
  o.env["AWS_SECRET_ACCESS_KEY"] = secret;
  o.unset_env = {"AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"};
  return o;
}

std::string Get(const S3Server& server, const std::string& key) {
  S3Options o;
  o.endpoint_url = server.endpoint();
  S3Client client({S3Server::kKey, S3Server::kKey, "", "test"}, o);
  absl::StatusOr<std::string> body = client.Get({S3Server::kBucket, key});
  EXPECT_TRUE(body.ok()) << body.status();
  return body.ok() ? *body : "<missing>";
}

bool Exists(const std::string& p) { return access(p.c_str(), F_OK) == 0; }

TEST(S3Upload, FilesAndDirectoriesReadBackIdentical) {
  NEURON_REQUIRE_S3(server);
  const std::string dir = testing::MakeTempDir();
  const std::string a = WriteFile(dir + "/a.bin", RandomBytes(100000, 1));
  mkdir((dir + "/d").c_str(), 0755);
  mkdir((dir + "/d/sub").c_str(), 0755);
  WriteFile(dir + "/d/x.txt", "hello\n");
  WriteFile(dir + "/d/sub/y name.bin", RandomBytes(3000, 2));
  WriteFile(dir + "/empty", "");
  ToolResult r = RunTool("neuron-dump", {"upload", a, dir + "/d", dir + "/empty", "--to",
                                         "s3://dumps/run/", "--endpoint-url", server->endpoint(),
                                         "--json"},
                         Creds());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find(S3Server::kKey), std::string::npos) << "credentials printed";
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["objects"].size(), 4u) << r.out;
  EXPECT_EQ(Get(*server, "run/a.bin"), RandomBytes(100000, 1));
  EXPECT_EQ(Get(*server, "run/x.txt"), "hello\n");
  EXPECT_EQ(Get(*server, "run/sub/y name.bin"), RandomBytes(3000, 2));
  EXPECT_EQ(Get(*server, "run/empty"), "");
  EXPECT_TRUE(Exists(a));  // kept without --delete-after
}

TEST(S3Upload, MultipartForLargeFiles) {
  NEURON_REQUIRE_S3(server);
  const std::string dir = testing::MakeTempDir();
  const std::string bytes = RandomBytes(12u << 20, 3);
  const std::string f = WriteFile(dir + "/big.bin", bytes);
  ToolResult r = RunTool("neuron-dump", {"upload", f, "--to", "s3://dumps/mp", "--endpoint-url",
                                         server->endpoint(), "--part-size", "5MiB",
                                         "--multipart-threshold", "6MiB"},
                         Creds());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("in 3 parts"), std::string::npos) << r.out;
  EXPECT_TRUE(Get(*server, "mp/big.bin") == bytes);
}

TEST(S3Upload, WrongSecretIsRefusedClearlyAndNothingIsDeleted) {
  NEURON_REQUIRE_S3(server);
  const std::string dir = testing::MakeTempDir();
  const std::string f = WriteFile(dir + "/c.bin", "core");
  ToolResult r = RunTool("neuron-dump", {"upload", f, "--to", "s3://dumps/x/", "--endpoint-url",
                                         server->endpoint(), "--delete-after"},
                         Creds("not-the-secret-zq"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("SignatureDoesNotMatch"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("check the access key id and secret"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("not-the-secret-zq"), std::string::npos) << "secret printed";
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(Exists(f));
}

TEST(S3Upload, DroppedConnectionsAreRetriedWithoutCorruption) {
  NEURON_REQUIRE_S3(server);
  const std::string endpoint = server->StartDroppingProxy(2);
  ASSERT_FALSE(endpoint.empty());
  const std::string dir = testing::MakeTempDir();
  const std::string bytes = RandomBytes(600000, 4);
  const std::string f = WriteFile(dir + "/r.bin", bytes);
  ToolResult r = RunTool("neuron-dump", {"upload", f, "--to", "s3://dumps/retry/",
                                         "--endpoint-url", endpoint, "--json", "--delete-after"},
                         Creds());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GE(j["retries"].get<int>(), 2) << r.out;
  EXPECT_TRUE(j["objects"][0]["deleted"].get<bool>());
  EXPECT_FALSE(Exists(f));  // removed only after the HEAD confirmed it
  EXPECT_TRUE(Get(*server, "retry/r.bin") == bytes);
}

TEST(S3Upload, GivesUpAfterMaxAttempts) {
  NEURON_REQUIRE_S3(server);
  const std::string endpoint = server->StartDroppingProxy(100);
  const std::string dir = testing::MakeTempDir();
  const std::string f = WriteFile(dir + "/g.bin", RandomBytes(10000, 5));
  ToolResult r = RunTool("neuron-dump", {"upload", f, "--to", "s3://dumps/g/", "--endpoint-url",
                                         endpoint, "--max-attempts", "2", "--delete-after"},
                         Creds());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("gave up after 2 attempts"), std::string::npos) << r.err;
  EXPECT_TRUE(Exists(f));
}

TEST(S3Upload, RuntimeHandoffUploadsTheDumpDirectory) {
  NEURON_REQUIRE_S3(server);
  const std::string dir = testing::MakeTempDir() + "/dt-x";
  mkdir(dir.c_str(), 0755);
  WriteFile(dir + "/i-1-nd0-nc0-pid-5-tid-6-lid-0.zst", RandomBytes(5000, 6));
  ToolOptions o = Creds();
  o.env["AWS_ENDPOINT_URL_S3"] = server->endpoint();
  o.env["NEURON_RT_EXEC_TIMEOUT"] = "7";
  ToolResult r = RunTool(
      "neuron-dump",
      {"--neff-name", "m", "--neff-uuid", "u", "--date-time", "2025-09-17-19-44", "--pid", "5",
       "--tid", "6", "--log-id", "0", "--instance-id", "i-1", "--cluster-id", "0000000000000000",
       "--error-location", "nrt_execute", "--error-code", "5", "--local-output-dir", dir,
       "--s3-output-prefix", "s3://dumps/%d-%c"},
      o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string prefix = "20250917-194400-0000000000000000/";
  EXPECT_EQ(Get(*server, prefix + "i-1-nd0-nc0-pid-5-tid-6-lid-0.zst"), RandomBytes(5000, 6));
  const std::string env = Get(*server, prefix + "i-1-neuron-dump-pid-5-lid-0.txt");
  EXPECT_NE(env.find("NEURON_RT_EXEC_TIMEOUT=7"), std::string::npos) << env;
  EXPECT_NE(env.find("error_code=5"), std::string::npos) << env;
}

TEST(S3Upload, UsageErrors) {
  ToolResult r = RunTool("neuron-dump", {"upload", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--to"), std::string::npos);
  r = RunTool("neuron-dump", {"upload", "x", "--to", "s3://dumps/", "--part-size", "1MiB"});
  EXPECT_EQ(r.exit_code, 2);
  r = RunTool("neuron-dump", {"upload", "/nonexistent/f", "--to", "s3://dumps/"}, Creds());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/f"), std::string::npos) << r.err;
  r = RunTool("neuron-dump", {"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace neuron::dump
