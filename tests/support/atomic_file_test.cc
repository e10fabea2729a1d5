// Files appear whole or not at all: the destination changes only on a
// complete write, and no temporary file is left behind either way.
#include "lib/support/atomic_file.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/tool_runner.h"

namespace neuron {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int EntriesIn(const std::string& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(AtomicFile, WritesTheWholeFile) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/a.bin";
  ASSERT_TRUE(WriteFileAtomically(path, "first").ok());
  EXPECT_EQ(Slurp(path), "first");
  ASSERT_TRUE(WriteFileAtomically(path, std::string(1 << 20, 'x')).ok());
  EXPECT_EQ(Slurp(path).size(), 1u << 20);
  EXPECT_EQ(EntriesIn(dir), 1);  // no temporary file left
}

TEST(AtomicFile, KeepsTheModeOfAnExistingFile) {
  const std::string path = testing::MakeTempDir() + "/script";
  ASSERT_TRUE(WriteFileAtomically(path, "1").ok());
  ASSERT_EQ(chmod(path.c_str(), 0751), 0);
  ASSERT_TRUE(WriteFileAtomically(path, "2").ok());
  struct stat st{};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0751u);
}

TEST(AtomicFile, NothingAppearsUntilCommit) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/late";
  {
    absl::StatusOr<AtomicFile> f = AtomicFile::Create(path);
    ASSERT_TRUE(f.ok()) << f.status();
    ASSERT_TRUE(f->Append("half").ok());
    EXPECT_FALSE(fs::exists(path));
  }  // dropped without Commit
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(EntriesIn(dir), 0);
  absl::StatusOr<AtomicFile> f = AtomicFile::Create(path);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(f->Append("whole").ok());
  ASSERT_TRUE(f->Commit().ok());
  EXPECT_EQ(Slurp(path), "whole");
  EXPECT_FALSE(f->Commit().ok());  // once only
}

TEST(AtomicFile, ErrorsNameTheDestinationAndTheReason) {
  const std::string dir = testing::MakeTempDir();
  absl::Status s = WriteFileAtomically(dir + "/missing/x.npy", "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot write '" + dir + "/missing/x.npy': its directory does not exist"),
            std::string::npos) << s;
  fs::create_directory(dir + "/sub");
  s = WriteFileAtomically(dir + "/sub", "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("it is a directory"), std::string::npos) << s;
  EXPECT_FALSE(WriteFileAtomically("", "x").ok());
}

// A write that runs out of room (here the file-size limit, which fails
// write(2) with EFBIG the way a full disk fails it with ENOSPC) leaves the
// old content in place and no temporary file. Runs in a child, as the limit
// is per process.
TEST(AtomicFile, AFailedWriteLeavesTheOldFile) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/out0.npy";
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {4096, 4096};
    setrlimit(RLIMIT_FSIZE, &limit);
    absl::Status s = WriteFileAtomically(path, std::string(1 << 20, 'n'));
    const bool named = !s.ok() && s.message().find("cannot write '" + path + "'") != std::string::npos;
    _exit(named ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the failed write was not reported naming the file";
  EXPECT_EQ(Slurp(path), "old");
  EXPECT_EQ(EntriesIn(dir), 1);
}

}  // namespace
}  // namespace neuron
