// Files appear whole or not at all: the destination changes only on a
// complete write, and no temporary file is left behind either way.
#include "lib/support/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <algorithm>

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

// Starts a child that opens `path` for writing, appends a little and then
// either kills itself (kill = true) or waits to be killed; returns its pid
// once it has written. `named` makes it use named temporaries.
pid_t StartWriter(const std::string& path, bool named, bool kill) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t child = fork();
  if (child != 0) {
    close(ready[1]);
    char c;
    if (read(ready[0], &c, 1) != 1) c = 0;
    close(ready[0]);
    return child;
  }
  if (named) UseNamedTemporariesForTesting();
  absl::StatusOr<AtomicFile> f = AtomicFile::Create(path);
  if (!f.ok() || !f->Append("partial").ok()) _exit(1);
  if (kill) raise(SIGKILL);
  if (write(ready[1], "r", 1) != 1) _exit(1);
  pause();
  _exit(0);
}

// The child dies before it can signal readiness; wait for it.
void Reap(pid_t child) {
  int status = 0;
  waitpid(child, &status, 0);
}

bool UnnamedTemporariesWork(const std::string& dir) {
  const int fd = open(dir.c_str(), O_TMPFILE | O_WRONLY, 0600);
  if (fd < 0) return false;
  close(fd);
  return true;
}

TEST(AtomicFile, AKilledWriterLeavesNothing) {
  const std::string dir = testing::MakeTempDir();
  if (!UnnamedTemporariesWork(dir)) GTEST_SKIP() << dir << " has no O_TMPFILE";
  const pid_t child = StartWriter(dir + "/out0.npy", /*named=*/false, /*kill=*/true);
  ASSERT_GT(child, 0);
  Reap(child);
  EXPECT_EQ(EntriesIn(dir), 0);
}

// Without O_TMPFILE a killed writer leaves its named temporary; the next
// write into the directory by another process removes it, and leaves alone
// the temporary of a writer still running.
std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(AtomicFile, NamedTemporariesOfGoneWritersAreSwept) {
  const std::string dir = testing::MakeTempDir();
  const pid_t dead = StartWriter(dir + "/out0.npy", /*named=*/true, /*kill=*/true);
  ASSERT_GT(dead, 0);
  Reap(dead);
  std::vector<std::string> names = Names(dir);
  ASSERT_EQ(names.size(), 1u);
  EXPECT_TRUE(names[0].starts_with(".out0.npy.tmp.")) << names[0];
  // The running writer's first write into the directory sweeps.
  const pid_t alive = StartWriter(dir + "/out1.npy", /*named=*/true, /*kill=*/false);
  ASSERT_GT(alive, 0);
  names = Names(dir);
  EXPECT_EQ(names.size(), 1u);
  EXPECT_TRUE(!names.empty() && names[0].starts_with(".out1.npy.tmp.")) << names[0];
  // This process sweeps too, and keeps the running writer's temporary.
  EXPECT_TRUE(WriteFileAtomically(dir + "/report.json", "{}").ok());
  names = Names(dir);
  EXPECT_EQ(names.size(), 2u);
  EXPECT_TRUE(!names.empty() && names[0].starts_with(".out1.npy.tmp.")) << names[0];
  kill(alive, SIGKILL);
  Reap(alive);
}

// Named temporaries write and replace files as unnamed ones do.
TEST(AtomicFile, NamedTemporariesWriteWholeFiles) {
  const std::string dir = testing::MakeTempDir();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    UseNamedTemporariesForTesting();
    const bool ok = WriteFileAtomically(dir + "/a", "first").ok() &&
                    WriteFileAtomically(dir + "/a", "second").ok();
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(Slurp(dir + "/a"), "second");
  EXPECT_EQ(EntriesIn(dir), 1);
}

}  // namespace
}  // namespace neuron
