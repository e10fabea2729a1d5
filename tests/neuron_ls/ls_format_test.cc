// What neuron-ls prints, from a simulated tree.
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lib/device/core_lock.h"
#include "lib/device/device_tree.h"
#include "tools/neuron-ls/ls_format.h"
#include "tests/device/fast_temp_dir.h"

namespace neuron::ls {
namespace {

using device::CoreHolder;
using device::DeviceRecord;
using device::FindInstanceType;
using device::ReadDevices;
using device::ReadHolders;
using device::SimDeviceTree;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<DeviceRecord> Devices(const char* instance, std::string* root_out = nullptr) {
  const std::string root = testing::FastTempDir();
  EXPECT_TRUE(SimDeviceTree::Open(root, **FindInstanceType(instance)).ok());
  if (root_out) *root_out = root;
  return *ReadDevices(root);
}

TEST(LsFormatTest, DeviceMemoryInGigabytes) {
  EXPECT_EQ(FormatDeviceMemory(uint64_t{96} << 30), "96 GB");
  EXPECT_EQ(FormatDeviceMemory(103079215104), "96 GB");
  EXPECT_EQ(FormatDeviceMemory(uint64_t{32} << 30), "32 GB");
  EXPECT_EQ(FormatDeviceMemory(0), "NA");
}

TEST(LsFormatTest, TruncateCommand) {
  EXPECT_EQ(TruncateCommand("short", 40), "short");
  std::string long_cmd(100, 'x');
  EXPECT_EQ(TruncateCommand(long_cmd, 40), std::string(37, 'x') + "...");
  EXPECT_EQ(TruncateCommand(long_cmd, 40).size(), 40u);
}

TEST(LsFormatTest, ReportGroupsCoresByLnc) {
  std::vector<DeviceRecord> devs = Devices("trn2.48xlarge");
  LsReport r = BuildLsReport(devs, {}, 2, false);
  EXPECT_EQ(r.instance_type, "trn2.48xlarge");
  EXPECT_EQ(r.lnc, 2);
  ASSERT_EQ(r.devices.size(), 16u);
  EXPECT_EQ(r.devices[0].nc_count, 4);
  EXPECT_EQ(r.devices[0].neuroncore_ids, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(r.devices[15].neuroncore_ids, (std::vector<int>{60, 61, 62, 63}));
  LsReport r1 = BuildLsReport(devs, {}, 1, false);
  EXPECT_EQ(r1.devices[15].nc_count, 8);
  EXPECT_EQ(r1.devices[15].neuroncore_ids.front(), 120);
}

TEST(LsFormatTest, TableHasTheRealColumnsAndBorders) {
  LsReport r = BuildLsReport(Devices("trn2.48xlarge"), {}, 2, false);
  std::vector<std::string> lines = Lines(FormatLsTable(r, {}));
  ASSERT_EQ(lines.size(), 4u + 16u + 1u);  // border, 2 header lines, border, rows, border
  for (const std::string& l : lines) EXPECT_EQ(l.size(), lines[0].size()) << l;
  EXPECT_EQ(lines[0].front(), '+');
  EXPECT_EQ(lines[0], lines[3]);
  EXPECT_EQ(lines[0], lines.back());
  for (const char* word : {"NEURON", "CONNECTED", "PCI", "CPU", "NUMA"}) {
    EXPECT_NE(lines[1].find(word), std::string::npos) << word;
  }
  for (const char* word : {"DEVICE", "CORES", "CORE IDS", "MEMORY", "DEVICES", "BDF",
                           "AFFINITY", "NODE"}) {
    EXPECT_NE(lines[2].find(word), std::string::npos) << word;
  }
  EXPECT_EQ(lines[2].find("PID"), std::string::npos);
  // Device 0 as the real tool prints it (affinity depends on this host).
  EXPECT_EQ(lines[4].rfind("| 0      | 4      | 0-3      | 96 GB  | 12, 3, 4, 1   | 0000:cc:00.0 |",
                          0),
            0u)
      << lines[4];
  EXPECT_NE(lines[19].find("| 60-63    |"), std::string::npos) << lines[19];
}

TEST(LsFormatTest, HeaderLines) {
  LsReport r = BuildLsReport(Devices("trn1.2xlarge"), {}, 1, false);
  std::vector<std::string> lines = Lines(FormatLsHeader(r));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "instance-type: trn1.2xlarge");
  EXPECT_EQ(lines[1].rfind("instance-id: i-", 0), 0u);
  EXPECT_EQ(lines[2], "logical-neuroncore-config: 1");
}

CoreHolder MakeHolder(int pid, int device, int core, const std::string& cmd,
                      const std::string& version = "2.0.0") {
  CoreHolder h;
  h.pid = pid;
  h.device = device;
  h.physical_core = core;
  h.command = cmd;
  h.runtime_version = version;
  return h;
}

TEST(LsFormatTest, ProcessesAddColumnsAndRows) {
  std::vector<DeviceRecord> devs = Devices("inf2.24xlarge");
  const std::string cmd = "python train.py --model llama --batch-size 64 --steps 1000 --seed 7";
  std::vector<CoreHolder> holders = {MakeHolder(111, 0, 0, cmd), MakeHolder(111, 0, 1, cmd),
                                     MakeHolder(222, 0, 1, "neuron-monitor", "NA"),
                                     MakeHolder(333, 2, 1, "serve")};
  LsReport r = BuildLsReport(devs, holders, 1, /*show_all_procs=*/false);
  ASSERT_EQ(r.devices[0].processes.size(), 1u) << "NA runtime hidden without -a";
  EXPECT_EQ(r.devices[0].processes[0].neuroncore_ids, (std::vector<int>{0, 1}));
  EXPECT_EQ(r.devices[2].processes[0].neuroncore_ids, (std::vector<int>{5}));
  std::string table = FormatLsTable(r, {});
  EXPECT_NE(table.find("PID"), std::string::npos);
  EXPECT_NE(table.find("RUNTIME"), std::string::npos);
  EXPECT_NE(table.find("| 111 "), std::string::npos);
  EXPECT_NE(table.find(TruncateCommand(cmd, 40) + " |"), std::string::npos) << table;
  EXPECT_EQ(table.find(cmd), std::string::npos) << "command must be truncated";
  // The CPU affinity and NUMA node stay beside the processes.
  EXPECT_NE(table.find("AFFINITY"), std::string::npos) << table;
  EXPECT_NE(table.find("NUMA"), std::string::npos) << table;
  EXPECT_LT(table.find("NUMA"), table.find("PID")) << "on the first header line" << table;
  std::string wide = FormatLsTable(r, {.wide = true});
  EXPECT_NE(wide.find(cmd), std::string::npos) << "fits in wide mode";

  LsReport all = BuildLsReport(devs, holders, 1, /*show_all_procs=*/true);
  ASSERT_EQ(all.devices[0].processes.size(), 2u);
  std::vector<std::string> lines = Lines(FormatLsTable(all, {.show_all_procs = true}));
  // The second process of device 0 is on its own row with empty device cells.
  bool found = false;
  for (const std::string& l : lines) {
    if (l.find("| 222 ") != std::string::npos) {
      found = true;
      EXPECT_EQ(l.rfind("|        |", 0), 0u) << l;
      EXPECT_NE(l.find("| NA "), std::string::npos) << l;
    }
    EXPECT_EQ(l.size(), lines[0].size());
  }
  EXPECT_TRUE(found);
}

TEST(LsFormatTest, JsonHasTheDocumentedKeys) {
  std::vector<DeviceRecord> devs = Devices("trn2.48xlarge");
  LsReport r = BuildLsReport(devs, {MakeHolder(42, 1, 3, "job")}, 2, false);
  nlohmann::json j = nlohmann::json::parse(FormatLsJson(r));
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 16u);
  const nlohmann::json& d0 = j[0];
  EXPECT_EQ(d0["neuron_device"], 0);
  EXPECT_EQ(d0["bdf"], "0000:cc:00.0");
  EXPECT_TRUE(d0["cpu_affinity"].is_string());
  EXPECT_EQ(d0["numa_node"], "1");
  EXPECT_EQ(d0["connected_to"], nlohmann::json({12, 3, 4, 1}));
  EXPECT_EQ(d0["nc_count"], 4);
  EXPECT_EQ(d0["logical_neuroncore_config"], 2);
  EXPECT_EQ(d0["memory_size"], 103079215104ull);
  EXPECT_EQ(d0["neuroncore_ids"], nlohmann::json({0, 1, 2, 3}));
  EXPECT_TRUE(d0["neuron_processes"].is_array());
  EXPECT_TRUE(d0["neuron_processes"].empty());
  const nlohmann::json& p = j[1]["neuron_processes"][0];
  EXPECT_EQ(p["pid"], 42);
  EXPECT_EQ(p["command"], "job");
  EXPECT_EQ(p["neuron_runtime_version"], "2.0.0");
  // Keys in the documented order.
  std::string text = FormatLsJson(r);
  EXPECT_LT(text.find("\"neuron_device\""), text.find("\"bdf\""));
  EXPECT_LT(text.find("\"memory_size\""), text.find("\"neuroncore_ids\""));
}

TEST(LsFormatTest, TopologyOfTheReport) {
  LsReport r = BuildLsReport(Devices("trn1.32xlarge"), {}, 1, false);
  std::string t = FormatLsTopology(r);
  EXPECT_NE(t.find("[ 0 ]◄––►[ 1 ]"), std::string::npos) << t;
  EXPECT_NE(t.find("[15 ]"), std::string::npos);
}

}  // namespace
}  // namespace neuron::ls
