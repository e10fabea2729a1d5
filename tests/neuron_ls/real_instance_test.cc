// neuron-ls on a real instance, faked: class devices without the
// simulator's files, a PCI tree, DMI files, /proc entries, and a driver
// whose ioctls answer from a table. What the table shows must come from
// those sources, and what cannot be read must be said, not shown as 0.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_format.h"
#include "lib/device/tree_files.h"
#include "tests/device/fast_temp_dir.h"
#include "tools/neuron-ls/driver_ioctl.h"
#include "tools/neuron-ls/imds_client.h"
#include "tools/neuron-ls/instance_identity.h"
#include "tools/neuron-ls/ls_listing.h"

namespace neuron::ls {
namespace {

void Write(const std::string& path, const std::string& content, mode_t mode = 0644) {
  ASSERT_TRUE(device::MakeDirs(path.substr(0, path.rfind('/'))).ok()) << path;
  ASSERT_TRUE(device::WriteFilePlain(path, content).ok()) << path;
  ASSERT_EQ(chmod(path.c_str(), mode), 0) << path;
}

// The driver, answering from tables.
class FakeIoctl : public DeviceIoctl {
 public:
  std::map<int, std::string> bdf;             // a device missing here fails
  std::map<int, std::vector<DriverApp>> apps;
  bool nodes_missing = false;  // every call fails as a missing /dev node would
  absl::StatusOr<std::string> PciBdf(int device) override {
    if (nodes_missing) return NoNode(device);
    if (auto it = bdf.find(device); it != bdf.end()) return it->second;
    return absl::UnavailableError(absl::StrFormat("fake: no BDF for neuron%d", device));
  }
  absl::StatusOr<std::vector<DriverApp>> Apps(int device) override {
    if (nodes_missing) return NoNode(device);
    return apps[device];
  }
  static absl::Status NoNode(int device) {
    return absl::UnavailableError(absl::StrFormat("fake: no node neuron%d", device));
  }
};

// A trn1-like machine of two devices.
struct FakeMachine {
  std::string dir = testing::FastTempDir();
  InstancePaths paths;
  FakeIoctl driver;

  FakeMachine() {
    chmod(dir.c_str(), 0755);  // so a test may read it as nobody
    paths.device_root = dir + "/sys/devices/virtual/neuron_device";
    paths.dev_dir = dir + "/dev";
    paths.pci_devices = dir + "/sys/bus/pci/devices";
    paths.proc = dir + "/proc";
    paths.identity.dmi_dir = dir + "/sys/devices/virtual/dmi/id";
    paths.identity.ask_imds = false;
    const char* bdfs[] = {"0000:10:1c.0", "0000:a0:1d.0"};
    for (int d = 0; d < 2; ++d) {
      const std::string dev = absl::StrFormat("%s/neuron%d", paths.device_root, d);
      Write(dev + "/core_count", "2", 0400);
      Write(dev + "/connected_devices", absl::StrFormat("%d\n", 1 - d), 0400);
      Write(dev + "/info/architecture/instance_type", "Trn1\n");
      Write(dev + "/info/architecture/device_name", "Trainium\n");
      driver.bdf[d] = bdfs[d];
      Write(paths.pci_devices + "/" + bdfs[d] + "/numa_node", absl::StrFormat("%d\n", d));
      Write(paths.pci_devices + "/" + bdfs[d] + "/local_cpulist",
            d == 0 ? "0-31,64-95\n" : "32-63,96-127\n");
    }
    Write(paths.identity.dmi_dir + "/sys_vendor", "Amazon EC2\n");
    Write(paths.identity.dmi_dir + "/product_name", "trn1.32xlarge\n");
    Write(paths.identity.dmi_dir + "/board_asset_tag", "i-0123456789abcdef0\n");
  }

  void AddProcess(int pid, const std::string& cmdline, const std::string& maps) {
    Write(absl::StrFormat("%s/%d/cmdline", paths.proc, pid), cmdline);
    Write(absl::StrFormat("%s/%d/maps", paths.proc, pid), maps);
  }

  LsReport List(bool show_all = false) {
    absl::StatusOr<ListingSource> source = ResolveRealSource(paths, driver);
    EXPECT_TRUE(source.ok()) << source.status();
    if (!source.ok()) return {};
    absl::StatusOr<LsReport> report = ListDevices(*source, 1, show_all);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : LsReport{};
  }
};

TEST(RealInstanceTest, BdfFromTheDriverNumaAndAffinityFromPciSysfs) {
  FakeMachine m;
  LsReport r = m.List();
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0].bdf, "0000:10:1c.0");
  EXPECT_EQ(r.devices[0].numa_node, "0");
  EXPECT_EQ(r.devices[0].cpu_affinity, "0-31,64-95");
  EXPECT_EQ(r.devices[1].bdf, "0000:a0:1d.0");
  EXPECT_EQ(r.devices[1].numa_node, "1");
  EXPECT_EQ(r.devices[1].cpu_affinity, "32-63,96-127");
  EXPECT_EQ(r.instance_type, "trn1.32xlarge");
  EXPECT_EQ(r.instance_id, "i-0123456789abcdef0");
  if (geteuid() == 0) {
    EXPECT_TRUE(r.notes.empty()) << r.notes[0];
  }

  const std::string table = FormatLsTable(r, {});
  EXPECT_NE(table.find("| 0000:10:1c.0 | 0-31,64-95   | 0    |"), std::string::npos) << table;
  EXPECT_NE(table.find("| 0000:a0:1d.0 | 32-63,96-127 | 1    |"), std::string::npos) << table;
  nlohmann::json j = nlohmann::json::parse(FormatLsJson(r));
  EXPECT_EQ(j[1]["bdf"], "0000:a0:1d.0");
  EXPECT_EQ(j[1]["numa_node"], "1");
  // trn1 devices hold 32 GiB: the memory comes from the instance's chip.
  EXPECT_EQ(j[0]["memory_size"], uint64_t{32} << 30);
}

TEST(RealInstanceTest, NoNumaInformationShowsMinusOneAsTheKernelSays) {
  FakeMachine m;
  Write(m.paths.pci_devices + "/0000:10:1c.0/numa_node", "-1\n");
  EXPECT_EQ(m.List().devices[0].numa_node, "-1");
}

TEST(RealInstanceTest, ProcessesFromTheDriverWithCommandAndRuntime) {
  FakeMachine m;
  m.AddProcess(4242, std::string("python\0train.py\0", 16),
               "7f00-7f10 r-xp 0 00:00 1 /opt/aws/neuron/lib/libnrt.so.2.21.1\n");
  m.AddProcess(77, std::string("neuron-monitor\0", 15), "7f00-7f10 r-xp 0 00:00 1 /usr/lib/libc.so.6\n");
  m.driver.apps[1] = {{4242, {0, 1}}, {77, {}}};
  LsReport r = m.List();
  ASSERT_EQ(r.devices[1].processes.size(), 1u);  // the monitor runs no runtime
  const LsProcess& p = r.devices[1].processes[0];
  EXPECT_EQ(p.pid, 4242);
  EXPECT_EQ(p.command, "python train.py");
  EXPECT_EQ(p.runtime_version, "2.21.1");
  EXPECT_EQ(p.neuroncore_ids, (std::vector<int>{2, 3}));  // device 1's cores
  const std::string table = FormatLsTable(r, {});
  EXPECT_NE(table.find("| 4242 | python train.py | 2.21.1  |"), std::string::npos) << table;

  LsReport all = m.List(/*show_all=*/true);
  ASSERT_EQ(all.devices[1].processes.size(), 2u);
  EXPECT_EQ(all.devices[1].processes[1].runtime_version, "NA");
}

TEST(RealInstanceTest, RuntimeVersionFromTheMappedLibrary) {
  FakeMachine m;
  m.AddProcess(1, "a", "1-2 r-xp 0 00:00 1 /opt/aws/neuron/lib/libnrt.so.1\n");
  m.AddProcess(2, "b", "1-2 r-xp 0 00:00 1 /x/libnrt.so.2.5.0\n");
  m.AddProcess(3, "c", "1-2 r-xp 0 00:00 1 /x/libc.so.6\n");
  m.AddProcess(5, "d", "1-2 r-xp 0 00:00 1 /x/libnrt.so.2.4.0 (deleted)\n");
  EXPECT_EQ(RuntimeVersionOf(m.paths.proc, 5), "2.4.0");
  EXPECT_EQ(RuntimeVersionOf(m.paths.proc, 1), "unknown");  // the soname alone
  EXPECT_EQ(RuntimeVersionOf(m.paths.proc, 2), "2.5.0");
  EXPECT_EQ(RuntimeVersionOf(m.paths.proc, 3), "NA");
  EXPECT_EQ(RuntimeVersionOf(m.paths.proc, 4), "");  // gone, or not ours to read
}

TEST(RealInstanceTest, DriverFailureIsOneNoteForAllDevicesNotACrash) {
  FakeMachine m;
  m.driver.bdf.clear();
  LsReport r = m.List();
  EXPECT_EQ(r.devices[0].bdf, "");
  EXPECT_EQ(r.devices[0].numa_node, "");
  ASSERT_EQ(r.notes.size(), geteuid() == 0 ? 1u : 2u);
  const std::string& note = r.notes.back();
  EXPECT_NE(note.find("fake: no BDF for neuron0 (and 1 more devices)"), std::string::npos) << note;
  EXPECT_NE(note.find("PCI BDF, NUMA node and CPU affinity unknown"), std::string::npos) << note;
}

TEST(RealInstanceTest, MissingDeviceNodesAreOneNote) {
  FakeMachine m;
  m.driver.nodes_missing = true;
  LsReport r = m.List();
  ASSERT_EQ(r.notes.size(), geteuid() == 0 ? 1u : 2u);
  EXPECT_EQ(r.notes.back(),
            "fake: no node neuron0 (and 1 more devices): PCI BDF, NUMA node, CPU affinity and "
            "processes unknown");
  EXPECT_EQ(r.devices[1].cpu_affinity, "");
  EXPECT_EQ(r.devices[1].nc_count, 2);  // the rest still shows
}

TEST(RealInstanceTest, RealDriverWithoutDeviceNodesSaysWhichNode) {
  FakeMachine m;
  std::unique_ptr<DeviceIoctl> driver = OpenDriverIoctl(m.paths.dev_dir);
  absl::StatusOr<std::string> bdf = driver->PciBdf(0);
  ASSERT_FALSE(bdf.ok());
  EXPECT_NE(bdf.status().message().find(m.paths.dev_dir + "/neuron0"), std::string::npos)
      << bdf.status();
  // A node that is not the driver's: the ioctl is refused, named.
  Write(m.paths.dev_dir + "/neuron0", "");
  bdf = driver->PciBdf(0);
  ASSERT_FALSE(bdf.ok());
  EXPECT_NE(bdf.status().message().find("NEURON_IOCTL_DEVICE_BDF"), std::string::npos)
      << bdf.status();
  EXPECT_FALSE(driver->Apps(0).ok());
}

TEST(RealInstanceTest, FormatPciBdf) {
  EXPECT_EQ(FormatPciBdf(0, 0xcc, 0, 0), "0000:cc:00.0");
  EXPECT_EQ(FormatPciBdf(1, 0x10, 0x1c, 3), "0001:10:1c.3");
}

// Runs the listing as nobody (root reads 0400 files regardless) or, when
// the tests are not root, with the files unreadable to their owner too.
// Returns the table and the notes, one per line after it.
std::string ListAsNormalUser(FakeMachine& m) {
  if (geteuid() != 0) {
    for (int d = 0; d < 2; ++d) {
      for (const char* f : {"core_count", "connected_devices"}) {
        chmod(absl::StrFormat("%s/neuron%d/%s", m.paths.device_root, d, f).c_str(), 0);
      }
    }
    LsReport r = m.List();
    std::string out = FormatLsTable(r, {});
    for (const std::string& n : r.notes) out += "note: " + n + "\n";
    return out;
  }
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
    absl::StatusOr<ListingSource> source = ResolveRealSource(m.paths, m.driver);
    std::string out;
    if (!source.ok()) {
      out = "error: " + std::string(source.status().message());
    } else {
      LsReport r = *ListDevices(*source, 1, false);
      out = FormatLsTable(r, {}) + FormatLsJson(r);
      for (const std::string& n : r.notes) out += "note: " + n + "\n";
    }
    (void)!write(fds[1], out.data(), out.size());
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;) out.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return out;
}

size_t CountNotes(const std::string& text) {
  size_t n = 0;
  for (size_t p = text.find("note: "); p != std::string::npos; p = text.find("note: ", p + 1)) ++n;
  return n;
}

TEST(RealInstanceTest, RootOnlyFilesGiveOneLineAndTheCatalogsValues) {
  FakeMachine m;
  // One device of a trn1.2xlarge: the catalog knows its links too.
  Write(m.paths.identity.dmi_dir + "/product_name", "trn1.2xlarge\n");
  ASSERT_EQ(system(("rm -rf " + m.paths.device_root + "/neuron1").c_str()), 0);
  const std::string out = ListAsNormalUser(m);
  EXPECT_EQ(CountNotes(out), 1u) << out;
  EXPECT_NE(out.find("note: the driver's core_count and connected_devices are readable by root "
                     "only (mode 0400): the instance catalog's values shown; run neuron-ls as "
                     "root for the driver's own values\n"),
            std::string::npos)
      << out;
  // Two cores, from the catalog: never 0, never NA.
  EXPECT_NE(out.find("| 0      | 2      | 0-1      | 32 GB  |"), std::string::npos) << out;
  EXPECT_EQ(out.find("error"), std::string::npos) << out;
}

TEST(RealInstanceTest, RootOnlyLinksUnknownWhereTheCatalogCannotTellSayNA) {
  FakeMachine m;  // two devices seen of a trn1.32xlarge's sixteen
  const std::string out = ListAsNormalUser(m);
  EXPECT_EQ(CountNotes(out), 1u) << out;
  EXPECT_NE(out.find("(mode 0400): the instance catalog's values shown, NA where it cannot tell;"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("| 0      | 2      | 0-1      | 32 GB  | NA        |"), std::string::npos)
      << out;
  if (geteuid() == 0) {
    EXPECT_NE(out.find("\"connected_to\": null"), std::string::npos) << out;
  }
}

TEST(RealInstanceTest, RootOnlyFilesOfAnUnknownChipAreNAWithTheLine) {
  FakeMachine m;
  for (int d = 0; d < 2; ++d) {
    Write(absl::StrFormat("%s/neuron%d/info/architecture/instance_type", m.paths.device_root, d),
          "Zzz9\n");
  }
  Write(m.paths.identity.dmi_dir + "/product_name", "zzz9.large\n");
  const std::string out = ListAsNormalUser(m);
  EXPECT_EQ(CountNotes(out), 1u) << out;
  EXPECT_NE(out.find("(mode 0400): shown as NA; run neuron-ls as root"), std::string::npos)
      << out;
  EXPECT_NE(out.find("| 0      | NA     | NA       | NA     | NA        |"), std::string::npos)
      << out;
  if (geteuid() == 0) {
    EXPECT_NE(out.find("\"nc_count\": null"), std::string::npos) << out;
    EXPECT_EQ(out.find("\"nc_count\": 0"), std::string::npos) << out;
  }
}

// A metadata service on the loopback: answers a token to a PUT, and the
// values to GETs that carry it; counts what it was asked.
class FakeImds {
 public:
  FakeImds() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    listen(fd_, 8);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeImds() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  ImdsEndpoint Endpoint() const { return {"127.0.0.1", port_, 2000}; }
  int requests() const { return requests_; }
  bool token_missing() const { return token_missing_; }

 private:
  void Serve() {
    for (;;) {
      const int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string req;
      char buf[1024];
      while (req.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = read(c, buf, sizeof(buf));
        if (n <= 0) break;
        req.append(buf, n);
      }
      ++requests_;
      std::string body = "", status = "200 OK";
      if (req.rfind("PUT /latest/api/token ", 0) == 0) {
        body = "TOKEN123";
      } else if (req.find("X-aws-ec2-metadata-token: TOKEN123\r\n") == std::string::npos) {
        token_missing_ = true;
        status = "401 Unauthorized";
      } else if (req.rfind("GET /latest/meta-data/instance-type ", 0) == 0) {
        body = "trn2.48xlarge";
      } else if (req.rfind("GET /latest/meta-data/instance-id ", 0) == 0) {
        body = "i-0fedcba9876543210";
      } else {
        status = "404 Not Found";
      }
      const std::string answer = "HTTP/1.1 " + status + "\r\nContent-Length: " +
                                 std::to_string(body.size()) + "\r\n\r\n" + body;
      (void)!write(c, answer.data(), answer.size());
      close(c);
    }
  }
  int fd_;
  int port_ = 0;
  std::atomic<int> requests_{0};
  std::atomic<bool> token_missing_{false};
  std::thread thread_;
};

TEST(InstanceIdentityTest, MetadataServiceWhenDmiDoesNotSayTokenFirst) {
  FakeMachine m;
  FakeImds imds;
  Write(m.paths.identity.dmi_dir + "/product_name", "HVM domU\n");  // a Xen instance
  Write(m.paths.identity.dmi_dir + "/board_asset_tag", "\n");
  m.paths.identity.ask_imds = true;
  m.paths.identity.imds = imds.Endpoint();
  InstanceIdentity id = ReadInstanceIdentity(m.paths.identity);
  EXPECT_EQ(id.type, "trn2.48xlarge");
  EXPECT_EQ(id.id, "i-0fedcba9876543210");
  EXPECT_EQ(id.note, "");
  EXPECT_EQ(imds.requests(), 3);
  EXPECT_FALSE(imds.token_missing());
}

TEST(InstanceIdentityTest, DmiFirstAndNoNetworkOffEc2) {
  FakeMachine m;
  FakeImds imds;
  m.paths.identity.ask_imds = true;
  m.paths.identity.imds = imds.Endpoint();
  InstanceIdentity id = ReadInstanceIdentity(m.paths.identity);
  EXPECT_EQ(id.type, "trn1.32xlarge");  // DMI said it: the service is not asked
  EXPECT_EQ(imds.requests(), 0);
  Write(m.paths.identity.dmi_dir + "/product_name", "Standard PC (Q35)\n");
  Write(m.paths.identity.dmi_dir + "/sys_vendor", "QEMU\n");
  id = ReadInstanceIdentity(m.paths.identity);
  EXPECT_EQ(id.type, "");  // not EC2: not asked either
  EXPECT_EQ(id.note, "");
  EXPECT_EQ(imds.requests(), 0);
}

TEST(InstanceIdentityTest, UnreachableServiceIsANoteNotAnError) {
  // A port nothing listens on: the connection is refused at once.
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len);
  close(s);
  absl::StatusOr<std::map<std::string, std::string>> r =
      QueryImds({"127.0.0.1", ntohs(addr.sin_port), 500}, {"instance-type"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("token"), std::string::npos) << r.status();
}

TEST(InstanceIdentityTest, WhatLooksLikeATypeOrAnId) {
  EXPECT_TRUE(LooksLikeInstanceType("trn1.32xlarge"));
  EXPECT_TRUE(LooksLikeInstanceType("inf2.xlarge"));
  EXPECT_FALSE(LooksLikeInstanceType("HVM domU"));
  EXPECT_FALSE(LooksLikeInstanceType("Standard PC (Q35 + ICH9, 2009)"));
  EXPECT_FALSE(LooksLikeInstanceType(".large"));
  EXPECT_TRUE(LooksLikeInstanceId("i-0123456789abcdef0"));
  EXPECT_FALSE(LooksLikeInstanceId("Not Specified"));
  EXPECT_FALSE(LooksLikeInstanceId("i-xyz"));
}

}  // namespace
}  // namespace neuron::ls
