// Exclusive core ownership across processes.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "lib/device/core_lock.h"
#include "lib/device/device_tree.h"
#include "tests/device/fast_temp_dir.h"

namespace neuron::device {
namespace {

const InstanceType& Instance(const char* name) { return **FindInstanceType(name); }

// A child process that holds logical cores until killed.
class Holder {
 public:
  Holder(const std::string& root, const LogicalCoreMap& map, std::vector<int> cores,
         const std::string& command) {
    int ready[2];
    EXPECT_EQ(pipe(ready), 0);
    pid_ = fork();
    if (pid_ == 0) {
      close(ready[0]);
      CoreOwner owner = CurrentProcessOwner();
      owner.command = command;
      auto lease = AcquireCores(root, map, cores, owner);
      char ok = lease.ok() ? 'y' : 'n';
      (void)!write(ready[1], &ok, 1);
      if (!lease.ok()) _exit(1);
      for (;;) pause();
    }
    close(ready[1]);
    char ok = 0;
    EXPECT_EQ(read(ready[0], &ok, 1), 1);
    close(ready[0]);
    acquired_ = ok == 'y';
  }
  ~Holder() { Kill(); }
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  pid_t pid() const { return pid_; }
  bool acquired() const { return acquired_; }

 private:
  pid_t pid_ = -1;
  bool acquired_ = false;
};

class CoreLockTest : public ::testing::Test {
 protected:
  void Open(const char* instance) {
    root_ = testing::FastTempDir();
    ASSERT_TRUE(SimDeviceTree::Open(root_, Instance(instance)).ok());
  }
  std::string root_;
};

TEST_F(CoreLockTest, AcquireAndReleaseInOneProcess) {
  Open("trn1.2xlarge");
  LogicalCoreMap map = *LogicalCoreMap::Create(Instance("trn1.2xlarge"), 1);
  {
    auto lease = AcquireCores(root_, map, {0, 1}, CurrentProcessOwner());
    ASSERT_TRUE(lease.ok()) << lease.status();
    EXPECT_EQ((*lease)->logical_cores(), (std::vector<int>{0, 1}));
    EXPECT_TRUE(IsCoreHeld(root_, 0, 0));
    EXPECT_TRUE(IsCoreHeld(root_, 0, 1));
    auto again = AcquireCores(root_, map, {1}, CurrentProcessOwner());
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.status().code(), absl::StatusCode::kUnavailable);
    std::vector<CoreHolder> holders = ReadHolders(root_);
    ASSERT_EQ(holders.size(), 2u);
    EXPECT_EQ(holders[0].pid, getpid());
    EXPECT_EQ(holders[1].logical_core, 1);
  }
  EXPECT_FALSE(IsCoreHeld(root_, 0, 0));
  EXPECT_TRUE(ReadHolders(root_).empty());
  EXPECT_TRUE(AcquireCores(root_, map, {1}, CurrentProcessOwner()).ok());
}

TEST_F(CoreLockTest, BusyCoreNamesTheHolderInTheRuntimesWords) {
  Open("trn1.2xlarge");
  LogicalCoreMap map = *LogicalCoreMap::Create(Instance("trn1.2xlarge"), 1);
  Holder child(root_, map, {1}, "python train.py");
  ASSERT_TRUE(child.acquired());
  auto lease = AcquireCores(root_, map, {1}, CurrentProcessOwner());
  ASSERT_FALSE(lease.ok());
  EXPECT_EQ(lease.status().code(), absl::StatusCode::kUnavailable);
  const std::string expect = "NeuronCore(s) not available - Requested:nc1-nc1 Available:1 (nc1 held by pid " +
                             std::to_string(child.pid()) + ": python train.py)";
  EXPECT_EQ(std::string(lease.status().message()), expect);

  std::vector<CoreHolder> holders = ReadHolders(root_);
  ASSERT_EQ(holders.size(), 1u);
  EXPECT_EQ(holders[0].pid, child.pid());
  EXPECT_EQ(holders[0].command, "python train.py");
  EXPECT_EQ(holders[0].runtime_version, "2.0.0");
  EXPECT_EQ(holders[0].device, 0);
  EXPECT_EQ(holders[0].physical_core, 1);

  // The other core is still free.
  EXPECT_TRUE(AcquireCores(root_, map, {0}, CurrentProcessOwner()).ok());
}

TEST_F(CoreLockTest, LockDiesWithItsProcessAndStaleInfoIsIgnored) {
  Open("trn1.2xlarge");
  LogicalCoreMap map = *LogicalCoreMap::Create(Instance("trn1.2xlarge"), 1);
  Holder child(root_, map, {0}, "worker");
  ASSERT_TRUE(child.acquired());
  EXPECT_TRUE(IsCoreHeld(root_, 0, 0));
  child.Kill();  // no cleanup runs: the owner file stays behind
  EXPECT_TRUE(std::filesystem::exists(SimDir(root_, 0) + "/core0.owner"));
  EXPECT_FALSE(IsCoreHeld(root_, 0, 0));
  EXPECT_TRUE(ReadHolders(root_).empty());
  auto lease = AcquireCores(root_, map, {0}, CurrentProcessOwner());
  ASSERT_TRUE(lease.ok()) << lease.status();
  std::vector<CoreHolder> holders = ReadHolders(root_);
  ASSERT_EQ(holders.size(), 1u);
  EXPECT_EQ(holders[0].pid, getpid());
}

TEST_F(CoreLockTest, AllOrNothing) {
  Open("trn1.32xlarge");
  LogicalCoreMap map = *LogicalCoreMap::Create(Instance("trn1.32xlarge"), 1);
  Holder child(root_, map, {3}, "holder");
  ASSERT_TRUE(child.acquired());
  auto lease = AcquireCores(root_, map, {0, 1, 2, 3}, CurrentProcessOwner());
  ASSERT_FALSE(lease.ok());
  const std::string msg(lease.status().message());
  EXPECT_NE(msg.find("Requested:nc0-nc3 Available:31"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nc3 held by pid " + std::to_string(child.pid())), std::string::npos);
  for (int p = 0; p < 2; ++p) EXPECT_FALSE(IsCoreHeld(root_, 0, p)) << "leaked core " << p;
  EXPECT_FALSE(IsCoreHeld(root_, 1, 0));
}

TEST_F(CoreLockTest, DifferentLncSizesExcludeEachOther) {
  Open("trn2.3xlarge");
  LogicalCoreMap lnc1 = *LogicalCoreMap::Create(Instance("trn2.3xlarge"), 1);
  LogicalCoreMap lnc2 = *LogicalCoreMap::Create(Instance("trn2.3xlarge"), 2);
  Holder child(root_, lnc1, {3}, "lnc1 job");  // physical core 3
  ASSERT_TRUE(child.acquired());
  auto lease = AcquireCores(root_, lnc2, {1}, CurrentProcessOwner());  // physical 2 and 3
  ASSERT_FALSE(lease.ok());
  EXPECT_NE(lease.status().message().find("Available:3"), std::string::npos) << lease.status();
  EXPECT_TRUE(AcquireCores(root_, lnc2, {0, 2, 3}, CurrentProcessOwner()).ok());
}

TEST_F(CoreLockTest, UnknownCoreIsOutOfRange) {
  Open("trn1.2xlarge");
  LogicalCoreMap map = *LogicalCoreMap::Create(Instance("trn1.2xlarge"), 1);
  auto lease = AcquireCores(root_, map, {2}, CurrentProcessOwner());
  ASSERT_FALSE(lease.ok());
  EXPECT_EQ(lease.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(lease.status().message().find("nc2"), std::string::npos);
}

TEST_F(CoreLockTest, CurrentProcessOwner) {
  CoreOwner o = CurrentProcessOwner();
  EXPECT_EQ(o.pid, getpid());
  EXPECT_NE(o.command.find("device_tests"), std::string::npos) << o.command;
  EXPECT_EQ(o.runtime_version, "2.0.0");
}

}  // namespace
}  // namespace neuron::device
