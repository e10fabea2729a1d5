// A real S3-compatible server for tests: the npm package s3rver (installed
// once into <out dir>/.npm-s3rver) behind ../shared/testing/sigv4-proxy.js,
// which checks SigV4 signatures as S3 does; optionally a TCP proxy in
// front that cuts the first connections mid-request. All on free
// 127.0.0.1 ports; everything is stopped by the destructor.
#ifndef NEURON_TESTS_DUMP_S3_SERVER_H_
#define NEURON_TESTS_DUMP_S3_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace neuron::testing {

class S3Server {
 public:
  static constexpr const char* kBucket = "dumps";
  static constexpr const char* kKey = "S3RVER";  // access key id and secret

  // nullptr with `why` set when the server cannot run here (no
  // ../shared/testing, no node, npm cannot install s3rver).
  static std::unique_ptr<S3Server> Start(std::string* why);
  ~S3Server();

  // http://127.0.0.1:PORT of the signing proxy.
  const std::string& endpoint() const { return endpoint_; }
  // Starts a proxy that drops its first `drops` connections after a few
  // bytes of the request; returns its endpoint ("" on failure).
  std::string StartDroppingProxy(int drops);

 private:
  S3Server() = default;
  pid_t Spawn(const std::vector<std::string>& argv, const std::string& log);
  std::vector<pid_t> pids_;
  std::string dir_, endpoint_;
};

// Skips the test with a visible notice when the server cannot run.
#define NEURON_REQUIRE_S3(server)                                   \
  std::string s3_why;                                               \
  auto server = ::neuron::testing::S3Server::Start(&s3_why);        \
  if (server == nullptr) GTEST_SKIP() << "NOTICE: " << s3_why

}  // namespace neuron::testing

#endif  // NEURON_TESTS_DUMP_S3_SERVER_H_
