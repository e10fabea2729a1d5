#include "lib/support/writer_tag.h"

#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace neuron {
namespace {

// This host's part of a tag.
std::string Host() {
  const std::string tag = WriterTag();
  return tag.substr(0, tag.find('.'));
}

// The pid of a process that has exited and been reaped.
pid_t DeadPid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

TEST(WriterTag, NamesThisHostAndProcess) {
  EXPECT_EQ(WriterTag(), Host() + "." + std::to_string(getpid()));
  EXPECT_EQ(Host().size(), 8u);
}

TEST(WriterTag, GoneOnlyForAnExitedProcessOfThisHost) {
  const pid_t dead = DeadPid();
  EXPECT_TRUE(WriterGone(Host() + "." + std::to_string(dead)));
  EXPECT_FALSE(WriterGone(WriterTag())) << "this process";
  EXPECT_FALSE(WriterGone(Host() + "." + std::to_string(getppid()))) << "a running process";
  std::string other = Host();
  other[0] = other[0] == '0' ? '1' : '0';
  EXPECT_FALSE(WriterGone(other + "." + std::to_string(dead))) << "another host's";
  for (const std::string& bad : {std::string(), Host(), Host() + ".", Host() + ".12x",
                                 Host() + ".-5", "x" + Host() + ".5"}) {
    EXPECT_FALSE(WriterGone(bad)) << bad;
  }
}

}  // namespace
}  // namespace neuron
