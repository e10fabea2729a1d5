// Stale shared-memory segments: those of a leader that is gone are swept,
// those of a running one, or too young, or of another name, are kept.
#include "lib/collectives/shm_sweep.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace neuron::collectives {
namespace {

// A pid that belonged to a process that has exited and been reaped.
int DeadPid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

std::string Touch(const std::string& dir, const std::string& name, int age_s) {
  const std::string path = dir + name;
  const int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0600);
  close(fd);
  const timespec when[2] = {{time(nullptr) - age_s, 0}, {time(nullptr) - age_s, 0}};
  utimensat(AT_FDCWD, path.c_str(), when, 0);
  return path;
}

TEST(ShmSweep, RemovesOnlyOldSegmentsOfGoneLeaders) {
  char tmpl[] = "/tmp/shm_sweep_test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const int dead = DeadPid();
  const std::string stale = Touch(dir, SegmentName(dead, 0x1234, 0), 3600);
  const std::string young = Touch(dir, SegmentName(dead, 0x5678, 0), 0);
  const std::string alive = Touch(dir, SegmentName(getpid(), 0x1234, 0), 3600);
  const std::string other = Touch(dir, "/neuron-cc-notapid-1", 3600);
  EXPECT_EQ(SweepStaleSegments(dir, std::chrono::seconds(600)), 1);
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(young));
  EXPECT_TRUE(std::filesystem::exists(alive));
  EXPECT_TRUE(std::filesystem::exists(other));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace neuron::collectives
