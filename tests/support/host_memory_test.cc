// Host memory limits read from a fake /proc and cgroup tree: which limits
// count, what each leaves, and which one binds.
#include "lib/support/host_memory.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/tool_runner.h"

namespace neuron {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kMiB = uint64_t{1} << 20;

class HostMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = testing::MakeTempDir();
    ASSERT_FALSE(dir.empty());
    paths_.proc = dir + "/proc";
    paths_.cgroup = dir + "/cgroup";
    paths_.rlimit_as = UINT64_MAX;  // not this test process's own
  }

  // Writes text to path, making its directories.
  static void Write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
  }
  void Proc(const std::string& name, const std::string& text) {
    Write(paths_.proc + "/" + name, text);
  }
  void Cgroup(const std::string& name, const std::string& text) {
    Write(paths_.cgroup + "/" + name, text);
  }

  HostMemoryReport Read() const { return ReadHostMemoryAt(paths_); }

  HostMemoryPaths paths_;
};

TEST_F(HostMemoryTest, MemAvailableOfMemTotal) {
  Proc("meminfo", "MemTotal:       16384000 kB\nMemFree:         1000 kB\n"
                  "MemAvailable:    8192000 kB\n");
  const HostMemoryReport r = Read();
  ASSERT_EQ(r.limits.size(), 1u);
  EXPECT_EQ(r.limits[0].what, "MemAvailable");
  EXPECT_EQ(r.limits[0].bytes, uint64_t{8192000} * 1024);
  EXPECT_EQ(r.limits[0].limit, uint64_t{16384000} * 1024);
  EXPECT_EQ(r.Available(), uint64_t{8192000} * 1024);
}

TEST_F(HostMemoryTest, V2LeafLimit) {
  Proc("self/cgroup", "0::/a/b\n");
  Cgroup("a/b/memory.max", std::to_string(3 * kGiB) + "\n");
  Cgroup("a/b/memory.current", std::to_string(1 * kGiB) + "\n");
  const HostMemoryReport r = Read();
  ASSERT_EQ(r.limits.size(), 1u);
  EXPECT_EQ(r.limits[0].bytes, 2 * kGiB);
  EXPECT_EQ(r.limits[0].limit, 3 * kGiB);
  EXPECT_EQ(r.limits[0].what, "cgroup v2 memory.max (" + paths_.cgroup + "/a/b)");
}

TEST_F(HostMemoryTest, V2TighterParentLimitBinds) {
  Proc("self/cgroup", "0::/a/b\n");
  Cgroup("a/b/memory.max", std::to_string(3 * kGiB));
  Cgroup("a/b/memory.current", std::to_string(1 * kGiB));
  Cgroup("a/memory.max", std::to_string(2 * kGiB));
  Cgroup("a/memory.current", std::to_string(1536 * kMiB));  // siblings use memory too
  const HostMemoryReport r = Read();
  ASSERT_EQ(r.limits.size(), 1u);
  EXPECT_EQ(r.limits[0].bytes, 512 * kMiB);
  EXPECT_EQ(r.limits[0].limit, 2 * kGiB);
  EXPECT_EQ(r.limits[0].what, "cgroup v2 memory.max (" + paths_.cgroup + "/a)");
}

TEST_F(HostMemoryTest, V2InactiveFileIsReclaimable) {
  Proc("self/cgroup", "0::/job\n");
  Cgroup("job/memory.max", std::to_string(4 * kGiB));
  Cgroup("job/memory.current", std::to_string(3 * kGiB));
  Cgroup("job/memory.stat", "anon 1073741824\nactive_file 536870912\ninactive_anon 7\n"
                            "inactive_file " + std::to_string(2 * kGiB) + "\n");
  const HostMemoryReport r = Read();
  ASSERT_EQ(r.limits.size(), 1u);
  EXPECT_EQ(r.limits[0].bytes, 3 * kGiB);  // 4 - (3 - 2)
}

TEST_F(HostMemoryTest, ReclaimableBeyondUsageLeavesTheWholeLimit) {
  Proc("self/cgroup", "0::/job\n");
  Cgroup("job/memory.max", std::to_string(4 * kGiB));
  Cgroup("job/memory.current", std::to_string(1 * kGiB));
  Cgroup("job/memory.stat", "inactive_file " + std::to_string(2 * kGiB) + "\n");
  ASSERT_EQ(Read().limits.size(), 1u);
  EXPECT_EQ(Read().limits[0].bytes, 4 * kGiB);
}

TEST_F(HostMemoryTest, V2UsageOverLimitLeavesZero) {
  Proc("self/cgroup", "0::/job\n");
  Cgroup("job/memory.max", std::to_string(1 * kGiB));
  Cgroup("job/memory.current", std::to_string(2 * kGiB));
  ASSERT_EQ(Read().limits.size(), 1u);
  EXPECT_EQ(Read().limits[0].bytes, 0u);
}

TEST_F(HostMemoryTest, V2MaxIsUnlimitedAndMemoryHighIgnored) {
  Proc("self/cgroup", "0::/job\n");
  Cgroup("job/memory.max", "max\n");
  Cgroup("job/memory.high", std::to_string(1 * kGiB) + "\n");
  Cgroup("job/memory.current", std::to_string(512 * kMiB));
  Cgroup("memory.max", "max\n");
  Cgroup("memory.current", std::to_string(512 * kMiB));
  const HostMemoryReport r = Read();
  EXPECT_TRUE(r.limits.empty());
  EXPECT_EQ(r.Binding(), nullptr);
  EXPECT_EQ(r.Available(), UINT64_MAX);
}

TEST_F(HostMemoryTest, V1Limit) {
  Proc("self/cgroup", "12:pids:/job\n4:cpuset,memory:/job\n3:cpu,cpuacct:/job\n"
                      "1:name=systemd:/job\n");
  Cgroup("memory/job/memory.limit_in_bytes", std::to_string(6 * kGiB) + "\n");
  Cgroup("memory/job/memory.usage_in_bytes", std::to_string(4 * kGiB) + "\n");
  // The hierarchical counter counts; the cgroup's own one is not enough.
  Cgroup("memory/job/memory.stat", "inactive_file 1\ntotal_inactive_file " +
                                       std::to_string(1 * kGiB) + "\n");
  Cgroup("memory/memory.limit_in_bytes", "9223372036854771712\n");  // the root: unlimited
  Cgroup("memory/memory.usage_in_bytes", std::to_string(40 * kGiB));
  const HostMemoryReport r = Read();
  ASSERT_EQ(r.limits.size(), 1u);
  EXPECT_EQ(r.limits[0].bytes, 3 * kGiB);  // 6 - (4 - 1)
  EXPECT_EQ(r.limits[0].limit, 6 * kGiB);
  EXPECT_EQ(r.limits[0].what,
            "cgroup v1 memory.limit_in_bytes (" + paths_.cgroup + "/memory/job)");
}

TEST_F(HostMemoryTest, V1HugeValueIsUnlimited) {
  Proc("self/cgroup", "4:memory:/job\n");
  Cgroup("memory/job/memory.limit_in_bytes", "9223372036854771712\n");
  Cgroup("memory/job/memory.usage_in_bytes", std::to_string(1 * kGiB));
  Cgroup("memory/memory.limit_in_bytes", std::to_string(uint64_t{1} << 62));
  Cgroup("memory/memory.usage_in_bytes", std::to_string(1 * kGiB));
  EXPECT_TRUE(Read().limits.empty());
}

TEST_F(HostMemoryTest, ContainerPathMissingFallsBackToTheMountRoot) {
  // The container's own cgroup is mounted as the root; the host path in
  // /proc/self/cgroup does not exist under it.
  Proc("self/cgroup", "0::/kubepods/pod1/abc\n4:memory:/kubepods/pod1/abc\n");
  Cgroup("memory.max", std::to_string(2 * kGiB));
  Cgroup("memory.current", std::to_string(1 * kGiB));
  Cgroup("memory/memory.limit_in_bytes", std::to_string(3 * kGiB));
  Cgroup("memory/memory.usage_in_bytes", std::to_string(1 * kGiB));
  const HostMemoryReport r = Read();
  ASSERT_EQ(r.limits.size(), 2u);
  EXPECT_EQ(r.limits[0].bytes, 1 * kGiB);
  EXPECT_EQ(r.limits[0].what, "cgroup v2 memory.max (" + paths_.cgroup + ")");
  EXPECT_EQ(r.limits[1].bytes, 2 * kGiB);
  EXPECT_EQ(r.limits[1].what, "cgroup v1 memory.limit_in_bytes (" + paths_.cgroup + "/memory)");
}

TEST_F(HostMemoryTest, PathLeavingTheRootIsReadAsTheRoot) {
  Proc("self/cgroup", "0::/../../elsewhere\n");
  Cgroup("memory.max", std::to_string(2 * kGiB));
  Cgroup("memory.current", std::to_string(1 * kGiB));
  const HostMemoryReport r = Read();
  ASSERT_EQ(r.limits.size(), 1u);
  EXPECT_EQ(r.limits[0].what, "cgroup v2 memory.max (" + paths_.cgroup + ")");
}

TEST_F(HostMemoryTest, AddressSpaceLimitLessVmSize) {
  paths_.rlimit_as = 8 * kGiB;
  Proc("self/status", "Name:\tneuron\nVmPeak:\t 9999999 kB\nVmSize:\t 2097152 kB\n");
  const HostMemoryReport r = Read();
  ASSERT_EQ(r.limits.size(), 1u);
  EXPECT_EQ(r.limits[0].what, "RLIMIT_AS");
  EXPECT_EQ(r.limits[0].bytes, 6 * kGiB);
  EXPECT_EQ(r.limits[0].limit, 8 * kGiB);
}

TEST_F(HostMemoryTest, AddressSpaceWithoutLimitOrVmSizeIsNoLimit) {
  Proc("self/status", "VmSize:\t 2097152 kB\n");
  EXPECT_TRUE(Read().limits.empty());  // rlimit_as is UINT64_MAX: none
  paths_.rlimit_as = 8 * kGiB;
  Proc("self/status", "Name:\tneuron\n");
  EXPECT_TRUE(Read().limits.empty());
}

TEST_F(HostMemoryTest, GarbageAndEmptyFilesAreNoLimit) {
  paths_.rlimit_as = 8 * kGiB;
  Proc("meminfo", "MemAvailable: lots kB\nMemTotal: 18446744073709551615 kB\n");
  Proc("self/status", "VmSize:\t 18446744073709551615 kB\n");  // overflows as bytes
  Proc("self/cgroup", "0::/a\n4:memory:/a\ngarbage\n::\n");
  Cgroup("a/memory.max", "garbage\n");
  Cgroup("a/memory.current", "1");
  Cgroup("memory.max", "99999999999999999999999\n");  // overflows
  Cgroup("memory.current", "");
  Cgroup("memory/a/memory.limit_in_bytes", "-1\n");
  Cgroup("memory/a/memory.usage_in_bytes", "1");
  Cgroup("memory/memory.limit_in_bytes", std::to_string(1 * kGiB));
  Cgroup("memory/memory.usage_in_bytes", "");  // a limit without usage tells nothing
  const HostMemoryReport r = Read();
  EXPECT_TRUE(r.limits.empty());
  EXPECT_EQ(r.Available(), UINT64_MAX);
}

TEST_F(HostMemoryTest, MissingTreeIsNoLimit) {
  EXPECT_TRUE(Read().limits.empty());
  Proc("self/cgroup", "");
  EXPECT_TRUE(Read().limits.empty());
}

TEST_F(HostMemoryTest, BindingPicksTheSmallest) {
  paths_.rlimit_as = 64 * kGiB;
  Proc("meminfo", "MemTotal: 33554432 kB\nMemAvailable: 16777216 kB\n");  // 16 GiB left
  Proc("self/status", "VmSize: 1048576 kB\n");                            // 63 GiB left
  Proc("self/cgroup", "0::/job\n");
  Cgroup("job/memory.max", std::to_string(4 * kGiB));
  Cgroup("job/memory.current", std::to_string(1 * kGiB));  // 3 GiB left
  const HostMemoryReport r = Read();
  ASSERT_EQ(r.limits.size(), 3u);
  ASSERT_NE(r.Binding(), nullptr);
  EXPECT_EQ(r.Binding(), &r.limits[1]);
  EXPECT_EQ(r.Available(), 3 * kGiB);

  HostMemoryReport made;
  made.limits = {{5, "a", 0}, {2, "b", 0}, {2, "c", 0}, {9, "d", 0}};
  EXPECT_EQ(made.Binding()->what, "b");  // the first of equals
  EXPECT_EQ(made.Available(), 2u);
}

TEST_F(HostMemoryTest, DescribeShortfallNamesBothFigures) {
  HostMemoryReport r;
  r.limits = {{8 * kGiB, "MemAvailable", 16 * kGiB},
              {2900 * kMiB, "cgroup v2 memory.max (/sys/fs/cgroup/x)", 3 * kGiB}};
  EXPECT_EQ(DescribeShortfall(14950 * kMiB, r),
            "needs 14.6 GiB, and cgroup v2 memory.max (/sys/fs/cgroup/x) leaves 2.8 GiB of 3 GiB");

  r.limits = {{512 * kMiB, "MemAvailable", 0}};  // no MemTotal: no second figure
  EXPECT_EQ(DescribeShortfall(1 * kGiB, r), "needs 1 GiB, and MemAvailable leaves 512 MiB");

  EXPECT_EQ(DescribeShortfall(1 * kGiB, HostMemoryReport{}),
            "needs 1 GiB, and no host memory limit could be read");
}

TEST(HostMemory, ThisHostReportsSomething) {
  // Every Linux kernel since 3.14 has MemAvailable.
  EXPECT_GT(HostMemoryAvailable(), 0u);
  EXPECT_FALSE(ReadHostMemory().limits.empty());
}

}  // namespace
}  // namespace neuron
