// The job secret: HMAC-SHA256 against RFC 4231's test vectors, and how the
// secret is read from the environment.
#include "lib/collectives/job_secret.h"

#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace neuron::collectives {
namespace {

std::string Hex(const Mac& mac) {
  return absl::BytesToHexString(std::string(reinterpret_cast<const char*>(mac.data()), mac.size()));
}

TEST(JobSecret, HmacSha256MatchesRfc4231) {
  // Test case 1.
  EXPECT_EQ(Hex(HmacSha256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  // Test case 2: a key shorter than the block.
  EXPECT_EQ(Hex(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 6: a key longer than the block is hashed first.
  EXPECT_EQ(Hex(HmacSha256(std::string(131, '\xaa'),
                           "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(JobSecret, MacEqualComparesEveryByte) {
  const Mac a = HmacSha256("k", "x");
  Mac b = a;
  EXPECT_TRUE(MacEqual(a, b));
  b[31] ^= 1;
  EXPECT_FALSE(MacEqual(a, b));
}

config::EnvLookup EnvOf(std::map<std::string, std::string> vars) {
  return [vars](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(JobSecret, ReadFromTheEnvironment) {
  EXPECT_EQ(*JobSecretFromEnv(EnvOf({})), "");
  EXPECT_EQ(*JobSecretFromEnv(EnvOf({{kJobSecretVar, "s3cret"}})), "s3cret");
  EXPECT_FALSE(JobSecretFromEnv(EnvOf({{kJobSecretVar, ""}})).ok());

  char path[] = "/tmp/job_secret_test.XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "from-a-file\n", 12), 12);
  close(fd);
  EXPECT_EQ(*JobSecretFromEnv(EnvOf({{kJobSecretFileVar, path}})), "from-a-file");
  auto both = JobSecretFromEnv(EnvOf({{kJobSecretFileVar, path}, {kJobSecretVar, "x"}}));
  EXPECT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("both"), std::string_view::npos) << both.status();
  FILE* f = std::fopen(path, "w");
  std::fclose(f);
  auto empty = JobSecretFromEnv(EnvOf({{kJobSecretFileVar, path}}));
  EXPECT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty"), std::string_view::npos) << empty.status();
  unlink(path);
  auto missing = JobSecretFromEnv(EnvOf({{kJobSecretFileVar, path}}));
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(path), std::string_view::npos) << missing.status();
}

TEST(JobSecret, NewSecretsDiffer) {
  const std::string a = NewJobSecret(), b = NewJobSecret();
  EXPECT_EQ(a.size(), 64u);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace neuron::collectives
