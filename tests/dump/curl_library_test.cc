// libcurl opened at run time (tools/neuron-dump/curl_library.h): found and usable
// where it is installed, and where it cannot be loaded an upload stops
// before sending anything with one error line naming the library and exit
// status 1, rather than a crash.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/support/cli.h"
#include "tests/support/tool_runner.h"
#include "tools/neuron-dump/cli.h"
#include "tools/neuron-dump/curl_library.h"
#include "tools/neuron-dump/s3_client.h"

namespace neuron::dump {
namespace {

constexpr const char* kMissing = "libcurl.so.no-such-version";

// Sets a variable for the life of the object, then puts back what was there.
class ScopedSetEnv {
 public:
  ScopedSetEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedSetEnv() {
    if (old_.has_value()) setenv(name_, old_->c_str(), 1); else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// While it lives, LoadCurl looks for a library that does not exist.
class MissingCurl {
 public:
  MissingCurl() { SetCurlSonameForTesting(kMissing); }
  ~MissingCurl() { SetCurlSonameForTesting(nullptr); }
};

TEST(CurlLibrary, LoadsTheInstalledLibcurlAndItWorks) {
  absl::StatusOr<const CurlLibrary*> curl = LoadCurl();
  ASSERT_TRUE(curl.ok()) << curl.status();
  EXPECT_EQ(&Curl(), *curl);
  CURL* handle = Curl().curl_easy_init();
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(Curl().curl_easy_setopt(handle, CURLOPT_URL, "http://127.0.0.1:1/"), CURLE_OK);
  Curl().curl_easy_cleanup(handle);
  EXPECT_STREQ(Curl().curl_easy_strerror(CURLE_OK), "No error");
}

TEST(CurlLibrary, MissingLibraryIsAnErrorNamingIt) {
  {
    MissingCurl missing;
    absl::StatusOr<const CurlLibrary*> curl = LoadCurl();
    ASSERT_FALSE(curl.ok());
    EXPECT_EQ(curl.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(absl::StrContains(curl.status().message(), kMissing)) << curl.status();
    EXPECT_TRUE(absl::StrContains(curl.status().message(), "cannot be loaded")) << curl.status();
    EXPECT_TRUE(absl::StrContains(curl.status().message(), "libcurl4")) << curl.status();
  }
  // The real one again once the override is gone.
  EXPECT_TRUE(LoadCurl().ok());
}

TEST(CurlLibrary, S3RequestsFailCleanlyWithoutLibcurl) {
  MissingCurl missing;
  S3Options options;
  options.endpoint_url = "http://127.0.0.1:1";
  options.max_attempts = 1;
  S3Client client({"KEY", "SECRET", "", "test"}, options);
  absl::StatusOr<std::string> etag = client.PutObject({"dumps", "k"}, "bytes");
  ASSERT_FALSE(etag.ok());
  EXPECT_TRUE(absl::StrContains(etag.status().message(), kMissing)) << etag.status();
  EXPECT_EQ(client.retries(), 0);
}

TEST(CurlLibrary, UploadWithoutLibcurlIsOneErrorLineAndExitOne) {
  const std::string dir = testing::MakeTempDir();
  const std::string file = dir + "/core.zst";
  std::ofstream(file) << "dump";
  ScopedSetEnv key("AWS_ACCESS_KEY_ID", "KEY");
  ScopedSetEnv secret("AWS_SECRET_ACCESS_KEY", "SECRET");
  MissingCurl missing;
  UploadRequest request;
  request.paths = {file};
  request.to = "s3://dumps/prefix/";
  request.endpoint_url = "http://127.0.0.1:1";
  request.max_attempts = 1;
  request.progress = 0;
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int status = RunUpload(request);
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, kExitFailure);
  EXPECT_EQ(out, "");
  ASSERT_TRUE(absl::EndsWith(err, "\n")) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_TRUE(absl::StartsWith(err, "neuron-dump: ")) << err;
  EXPECT_TRUE(absl::StrContains(err, kMissing)) << err;
  // Nothing was touched: the local file is still there.
  EXPECT_TRUE(std::ifstream(file).good());
}

}  // namespace
}  // namespace neuron::dump
