// The sysfs-like tree: creation, idempotence, rebuild, updates, reading.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "lib/device/core_lock.h"
#include "lib/device/device_tree.h"
#include "lib/device/device_tree_reader.h"
#include "lib/device/tree_files.h"
#include "tests/device/fast_temp_dir.h"

namespace neuron::device {
namespace {

const InstanceType& Instance(const char* name) { return **FindInstanceType(name); }

std::string Read(const std::string& path) {
  absl::StatusOr<std::string> s = ReadSmallFile(path);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : "";
}

config::EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(DeviceTreeTest, CreatesTheDriverLayout) {
  const std::string root = testing::FastTempDir() + "/sim";
  absl::StatusOr<std::unique_ptr<SimDeviceTree>> tree =
      SimDeviceTree::Open(root, Instance("trn2.48xlarge"));
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(Read(root + "/neuron0/core_count"), "8");  // no newline, like the driver
  EXPECT_EQ(Read(root + "/neuron0/connected_devices"), "12, 3, 4, 1\n");
  EXPECT_EQ(Read(root + "/neuron15/connected_devices"), "11, 14, 3, 12\n");
  EXPECT_EQ(Read(root + "/neuron3/info/architecture/device_name"), "Trainium2\n");
  EXPECT_EQ(Read(root + "/neuron3/info/architecture/instance_type"), "Trn2\n");
  EXPECT_EQ(Read(root + "/neuron3/neuron_core7/info/architecture/arch_type"), "NCv3\n");
  EXPECT_EQ(Read(root + "/neuron1/neuron_core7/stats/status/success/total"), "0\n");
  EXPECT_EQ(Read(root + "/neuron1/neuron_core0/stats/status/oob_error/present"), "0\n");
  for (MemoryCategory c : AllMemoryCategories()) {
    for (const char* f : {"total", "present", "peak"}) {
      EXPECT_EQ(Read(root + "/neuron2/neuron_core4/stats/memory_usage/device_mem/" +
                     MemoryCategoryName(c) + "/" + f),
                "0\n");
    }
  }
  for (const std::string& o : OtherInfoNames()) {
    EXPECT_EQ(Read(root + "/neuron0/neuron_core0/stats/other_info/" + o), "0\n");
  }
  EXPECT_FALSE(std::filesystem::exists(root + "/neuron16"));
  EXPECT_FALSE(std::filesystem::exists(root + "/neuron0/neuron_core8"));
  EXPECT_EQ(Read(root + "/neuron0/sim/instance_type"), "trn2.48xlarge\n");
  EXPECT_EQ(Read(root + "/neuron0/sim/pci_bdf"), "0000:cc:00.0\n");
  EXPECT_EQ(Read(root + "/neuron0/sim/numa_node"), "1\n");
  EXPECT_EQ(Read(root + "/neuron0/sim/memory_size"), "103079215104\n");
  EXPECT_EQ((*tree)->instance_id().rfind("i-", 0), 0u);
  EXPECT_EQ((*tree)->instance_id().size(), 19u);
}

TEST(DeviceTreeTest, ReaderReturnsWhatWasWritten) {
  const std::string root = testing::FastTempDir();
  auto tree = *SimDeviceTree::Open(root, Instance("inf2.24xlarge"));
  absl::StatusOr<std::vector<DeviceRecord>> devs = ReadDevices(root);
  ASSERT_TRUE(devs.ok()) << devs.status();
  ASSERT_EQ(devs->size(), 6u);
  const DeviceRecord& d = (*devs)[2];
  EXPECT_EQ(d.index, 2);
  EXPECT_EQ(d.core_count, 2);
  EXPECT_EQ(d.connected, (std::vector<int>{1, 3}));
  EXPECT_EQ(d.device_name, "Inferentia2");
  EXPECT_EQ(d.instance_type, "inf2.24xlarge");
  EXPECT_EQ(d.instance_id, tree->instance_id());
  EXPECT_EQ(d.memory_size, uint64_t{32} << 30);
  EXPECT_TRUE(d.has_numa_node);
  EXPECT_FALSE(d.cpu_affinity.empty());
  EXPECT_EQ(d.pci_bdf, Instance("inf2.24xlarge").pci_bdf[2]);
}

TEST(DeviceTreeTest, ReopeningTheSameInstanceKeepsTheTree) {
  const std::string root = testing::FastTempDir();
  auto first = *SimDeviceTree::Open(root, Instance("trn1.2xlarge"));
  ASSERT_TRUE(first->CountStatus(0, 1, NRT_SUCCESS, 3).ok());
  auto second = *SimDeviceTree::Open(root, Instance("trn1.2xlarge"));
  EXPECT_EQ(first->instance_id(), second->instance_id());
  EXPECT_EQ(ReadCoreCounters(root, 0, 1)->status["success"].total, 3u);
}

TEST(DeviceTreeTest, AnotherInstanceTypeRebuildsTheTree) {
  const std::string root = testing::FastTempDir();
  auto big = *SimDeviceTree::Open(root, Instance("inf2.48xlarge"));
  ASSERT_EQ(ReadDevices(root)->size(), 12u);
  auto small = *SimDeviceTree::Open(root, Instance("trn1.2xlarge"));
  absl::StatusOr<std::vector<DeviceRecord>> devs = ReadDevices(root);
  ASSERT_TRUE(devs.ok());
  ASSERT_EQ(devs->size(), 1u);
  EXPECT_EQ((*devs)[0].instance_type, "trn1.2xlarge");
  EXPECT_NE(big->instance_id(), small->instance_id());
}

TEST(DeviceTreeTest, RebuildIsRefusedWhileACoreIsHeld) {
  const std::string root = testing::FastTempDir();
  auto tree = *SimDeviceTree::Open(root, Instance("trn1.2xlarge"));
  LogicalCoreMap map = *LogicalCoreMap::Create(Instance("trn1.2xlarge"), 1);
  auto lease = AcquireCores(root, map, {1}, CurrentProcessOwner());
  ASSERT_TRUE(lease.ok()) << lease.status();
  absl::StatusOr<std::unique_ptr<SimDeviceTree>> other =
      SimDeviceTree::Open(root, Instance("trn2.48xlarge"));
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find(std::to_string(getpid())), std::string::npos)
      << other.status();
  EXPECT_EQ(ReadDevices(root)->size(), 1u);  // untouched
  lease->reset();
  EXPECT_TRUE(SimDeviceTree::Open(root, Instance("trn2.48xlarge")).ok());
}

TEST(DeviceTreeTest, ConcurrentCreationFromSeveralProcesses) {
  const std::string root = testing::FastTempDir() + "/shared";
  std::vector<pid_t> kids;
  for (int i = 0; i < 4; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto t = SimDeviceTree::Open(root, Instance("trn1.32xlarge"));
      _exit(t.ok() ? 0 : 1);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  absl::StatusOr<std::vector<DeviceRecord>> devs = ReadDevices(root);
  ASSERT_TRUE(devs.ok()) << devs.status();
  ASSERT_EQ(devs->size(), 16u);
  for (const DeviceRecord& d : *devs) EXPECT_EQ(d.instance_id, (*devs)[0].instance_id);
}

TEST(DeviceTreeTest, CounterUpdatesReadBack) {
  const std::string root = testing::FastTempDir();
  auto tree = *SimDeviceTree::Open(root, Instance("trn1.2xlarge"));
  ASSERT_TRUE(tree->CountStatus(0, 0, NRT_EXEC_OOB).ok());
  ASSERT_TRUE(tree->CountStatus(0, 0, NRT_EXEC_OOB, 2).ok());
  ASSERT_TRUE(tree->CountStatus(0, 0, NRT_TIMEOUT).ok());
  ASSERT_TRUE(tree->ResetPresentCounters(0, 0).ok());
  ASSERT_TRUE(tree->CountStatus(0, 0, NRT_TIMEOUT).ok());
  MemoryUsage u{1000, 200, 1500};
  ASSERT_TRUE(tree->SetMemoryUsage(0, 0, MemoryCategory::kTensors, u).ok());
  ASSERT_TRUE(tree->AddOtherInfo(0, 0, OtherInfo::kInferenceCount, 5).ok());
  ASSERT_TRUE(tree->AddOtherInfo(0, 0, OtherInfo::kInferenceCount, 2).ok());
  ASSERT_TRUE(tree->SetOtherInfo(0, 0, OtherInfo::kFlopCount, 123456789).ok());
  absl::StatusOr<CoreCounters> c = ReadCoreCounters(root, 0, 0);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->status["oob_error"].total, 3u);
  EXPECT_EQ(c->status["oob_error"].present, 0u);
  EXPECT_EQ(c->status["timeout"].total, 2u);
  EXPECT_EQ(c->status["timeout"].present, 1u);
  EXPECT_EQ(c->status["success"].total, 0u);
  const MemoryUsage& t = c->memory[static_cast<int>(MemoryCategory::kTensors)];
  EXPECT_EQ(t.total, 1000u);
  EXPECT_EQ(t.present, 200u);
  EXPECT_EQ(t.peak, 1500u);
  EXPECT_EQ(c->other_info["inference_count"], 7u);
  EXPECT_EQ(c->other_info["flop_count"], 123456789u);
  // The other core is untouched.
  EXPECT_EQ(ReadCoreCounters(root, 0, 1)->status["oob_error"].total, 0u);
}

TEST(DeviceTreeTest, UpdatesOutsideTheInstanceAreErrors) {
  const std::string root = testing::FastTempDir();
  auto tree = *SimDeviceTree::Open(root, Instance("trn1.2xlarge"));
  EXPECT_FALSE(tree->CountStatus(0, 2, NRT_SUCCESS).ok());
  EXPECT_FALSE(tree->CountStatus(1, 0, NRT_SUCCESS).ok());
  EXPECT_FALSE(tree->SetOtherInfo(-1, 0, OtherInfo::kFlopCount, 1).ok());
  EXPECT_FALSE(ReadCoreCounters(root, 0, 5).ok());
}

TEST(DeviceTreeTest, StatusCountersCoverEveryNrtStatus) {
  EXPECT_STREQ(StatusCounterName(NRT_SUCCESS), "success");
  EXPECT_STREQ(StatusCounterName(NRT_TIMEOUT), "timeout");
  EXPECT_STREQ(StatusCounterName(NRT_EXEC_OOB), "oob_error");
  EXPECT_STREQ(StatusCounterName(NRT_EXEC_BAD_INPUT), "exec_bad_input");
  EXPECT_STREQ(StatusCounterName(NRT_EXEC_COMPLETED_WITH_NUM_ERR),
               "infer_completed_with_num_error");
  EXPECT_STREQ(StatusCounterName(NRT_UNSUPPORTED_NEFF_VERSION), "unsupported_neff_version");
  EXPECT_STREQ(StatusCounterName(NRT_EXEC_HW_ERR_HBM_UE), "hw_error");
  for (int s = 0; s < 1300; ++s) {
    const std::string name = StatusCounterName(static_cast<NRT_STATUS>(s));
    const auto& all = StatusCounterNames();
    EXPECT_NE(std::find(all.begin(), all.end(), name), all.end()) << s;
  }
}

TEST(DeviceTreeTest, MalformedFilesAreClearErrors) {
  const std::string root = testing::FastTempDir();
  auto tree = *SimDeviceTree::Open(root, Instance("trn1.2xlarge"));
  ASSERT_TRUE(WriteFilePlain(root + "/neuron0/core_count", "two").ok());
  absl::StatusOr<std::vector<DeviceRecord>> devs = ReadDevices(root);
  ASSERT_FALSE(devs.ok());
  EXPECT_NE(devs.status().message().find("core_count"), std::string::npos) << devs.status();
  ASSERT_TRUE(WriteFilePlain(root + "/neuron0/core_count", "2").ok());
  ASSERT_TRUE(WriteFilePlain(root + "/neuron0/connected_devices", "1, x\n").ok());
  devs = ReadDevices(root);
  ASSERT_FALSE(devs.ok());
  EXPECT_NE(devs.status().message().find("connected_devices"), std::string::npos);
  ASSERT_TRUE(
      WriteFilePlain(root + "/neuron0/neuron_core0/stats/status/success/total", "-3\n").ok());
  absl::StatusOr<CoreCounters> c = ReadCoreCounters(root, 0, 0);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("success/total"), std::string::npos) << c.status();
}

TEST(DeviceTreeTest, MissingOrEmptyRootIsAnError) {
  const std::string dir = testing::FastTempDir();
  EXPECT_FALSE(ReadDevices(dir + "/nope").ok());
  absl::StatusOr<std::vector<DeviceRecord>> empty = ReadDevices(dir);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("no Neuron devices"), std::string::npos);
}

TEST(DeviceTreeTest, UnusableRootIsAnError) {
  const std::string dir = testing::FastTempDir();
  ASSERT_TRUE(WriteFilePlain(dir + "/file", "x").ok());
  absl::StatusOr<std::unique_ptr<SimDeviceTree>> t =
      SimDeviceTree::Open(dir + "/file/sub", Instance("trn1.2xlarge"));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("NEURON_SIM_ROOT"), std::string::npos) << t.status();
}

TEST(DeviceTreeTest, RootSelection) {
  EXPECT_EQ(SimulatedRootPath(Env({{"NEURON_SIM_ROOT", "/x/y"}})), "/x/y");
  EXPECT_EQ(SimulatedRootPath(Env({{"XDG_RUNTIME_DIR", "/run/user/7"}})),
            "/run/user/7/neuron-sim");
  EXPECT_EQ(SimulatedRootPath(Env({})), "/tmp/neuron-sim-" + std::to_string(getuid()));
  DeviceRoot r = ListingRoot(Env({{"NEURON_SIM_ROOT", "/x/y"}}));
  EXPECT_TRUE(r.simulated);
  EXPECT_EQ(r.path, "/x/y");
}

}  // namespace
}  // namespace neuron::device
