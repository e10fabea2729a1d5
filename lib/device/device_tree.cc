#include "lib/device/device_tree.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <random>

#include "absl/strings/str_format.h"
#include "lib/support/atomic_file.h"
#include "lib/device/core_lock.h"
#include "lib/device/topology.h"
#include "lib/device/tree_files.h"
#include "lib/support/parse.h"

namespace neuron::device {
namespace {

constexpr const char* kMarkerFile = ".instance_type";
constexpr const char* kTreeLockFile = ".tree.lock";

// The driver's status counter directories, in the order its sysfs guide
// lists them.
const std::vector<std::string> kStatusNames = {
    "success",          "failure",         "timeout",
    "hw_error",         "exec_bad_input",  "oob_error",
    "invalid_error",    "generic_error",   "resource_error",
    "resource_nc_error", "unsupported_neff_version", "infer_completed_with_error",
    "infer_completed_with_num_error", "infer_failed_to_queue",
};

const std::vector<std::string> kOtherInfoNames = {
    "flop_count", "inference_count", "model_load_count",
    "reset_fail_count", "reset_req_count", "nc_time_in_use",
};

const char* kHardwareCounters[] = {"mem_ecc_uncorrected", "mem_ecc_repairable_uncorrected",
                                   "sram_ecc_uncorrected"};

// "Trn1", "Inf2": the family as the driver's instance_type attribute shows it.
std::string Family(const std::string& arch) {
  std::string f = arch;
  if (!f.empty()) f[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(f[0])));
  return f;
}

std::string RandomInstanceId() {
  std::random_device rd;
  uint64_t v = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return absl::StrFormat("i-0%016x", v);
}

// Holds an flock for the lifetime of the object.
class FileLock {
 public:
  static absl::StatusOr<FileLock> Exclusive(const std::string& path) {
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      return absl::InternalError(
          absl::StrFormat("cannot open lock file '%s': %s", path, std::strerror(errno)));
    }
    while (flock(fd, LOCK_EX) != 0) {
      if (errno != EINTR) {
        int err = errno;
        close(fd);
        return absl::InternalError(
            absl::StrFormat("cannot lock '%s': %s", path, std::strerror(err)));
      }
    }
    return FileLock(fd);
  }
  FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  ~FileLock() {
    if (fd_ >= 0) close(fd_);
  }

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

absl::Status WriteDevice(const std::string& root, const InstanceType& t, int d,
                         const std::string& instance_id, int host_cpus) {
  const std::string dir = DeviceDir(root, d);
  for (const char* sub : {"/info/architecture", "/stats/hardware", "/stats/power", "/sim"}) {
    if (absl::Status st = MakeDirs(dir + sub); !st.ok()) return st;
  }
  struct File {
    std::string path, content;
  };
  std::vector<File> files = {
      {"/core_count", std::to_string(t.physical_cores_per_device)},
      {"/connected_devices", FormatDeviceList(ConnectedDevices(t, d)) + "\n"},
      {"/info/serial_number", absl::StrFormat("%s%02x\n", instance_id.substr(2), d)},
      {"/info/notify_delay", "-1\n"},
      {"/info/architecture/arch_type", t.arch_type + "\n"},
      {"/info/architecture/device_name", t.device_name + "\n"},
      {"/info/architecture/instance_type", Family(t.arch) + "\n"},
      {"/stats/power/utilization",
       absl::StrFormat("POWER_STATUS_NO_DATA,%d,0.00,0.00,0.00\n", std::time(nullptr))},
      {"/sim/instance_type", t.name + "\n"},
      {"/sim/instance_id", instance_id + "\n"},
      {"/sim/pci_bdf", (d < static_cast<int>(t.pci_bdf.size()) ? t.pci_bdf[d] : "") + "\n"},
      {"/sim/cpu_affinity", FormatRangeList(DeviceCpuAffinity(t, d, host_cpus)) + "\n"},
      {"/sim/numa_node",
       std::to_string(d < static_cast<int>(t.numa_node.size()) ? t.numa_node[d] : -1) + "\n"},
      {"/sim/memory_size", std::to_string(t.hbm_bytes_per_device) + "\n"},
  };
  for (const char* hw : kHardwareCounters) files.push_back({std::string("/stats/hardware/") + hw, "0\n"});
  for (int c = 0; c < t.physical_cores_per_device; ++c) {
    const std::string core = absl::StrFormat("/neuron_core%d", c);
    if (absl::Status st = MakeDirs(dir + core + "/info/architecture"); !st.ok()) return st;
    files.push_back({core + "/info/architecture/arch_type", t.core_arch_type + "\n"});
    for (const std::string& s : kStatusNames) {
      const std::string sd = core + "/stats/status/" + s;
      if (absl::Status st = MakeDirs(dir + sd); !st.ok()) return st;
      files.push_back({sd + "/total", "0\n"});
      files.push_back({sd + "/present", "0\n"});
    }
    for (MemoryCategory m : AllMemoryCategories()) {
      const std::string md =
          core + "/stats/memory_usage/device_mem/" + MemoryCategoryName(m);
      if (absl::Status st = MakeDirs(dir + md); !st.ok()) return st;
      for (const char* f : {"/total", "/present", "/peak"}) files.push_back({md + f, "0\n"});
    }
    if (absl::Status st = MakeDirs(dir + core + "/stats/other_info"); !st.ok()) return st;
    for (const std::string& o : kOtherInfoNames) {
      files.push_back({core + "/stats/other_info/" + o, "0\n"});
    }
  }
  for (const File& f : files) {
    if (absl::Status st = WriteFilePlain(dir + f.path, f.content); !st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status RemoveDeviceDirs(const std::string& root) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("neuron", 0) != 0) continue;
    std::filesystem::remove_all(entry.path(), ec);
    if (ec) {
      return absl::InternalError(absl::StrFormat("cannot remove '%s': %s",
                                                 entry.path().string(), ec.message()));
    }
  }
  if (ec) {
    return absl::InternalError(absl::StrFormat("cannot list '%s': %s", root, ec.message()));
  }
  return absl::OkStatus();
}

std::string CounterPath(const std::string& root, int device, int core, const std::string& rel) {
  return CoreDir(root, device, core) + "/stats/" + rel;
}

absl::Status AddToCounter(const std::string& path, uint64_t n) {
  absl::StatusOr<uint64_t> v = ReadCounter(path);
  if (!v.ok()) return v.status();
  return WriteFileAtomically(path, std::to_string(*v + n) + "\n");
}

}  // namespace

std::string SimulatedRootPath(const config::EnvLookup& env) {
  if (std::optional<std::string> root = env(kSimRootVariable); root && !root->empty()) {
    return *root;
  }
  if (std::optional<std::string> xdg = env("XDG_RUNTIME_DIR"); xdg && !xdg->empty()) {
    return *xdg + "/neuron-sim";
  }
  return absl::StrFormat("/tmp/neuron-sim-%d", getuid());
}

DeviceRoot ListingRoot(const config::EnvLookup& env) {
  std::optional<std::string> sim = env(kSimRootVariable);
  std::error_code ec;
  if ((!sim || sim->empty()) &&
      std::filesystem::exists(DeviceDir(std::string(kRealDeviceRoot), 0), ec)) {
    return {std::string(kRealDeviceRoot), false};
  }
  return {SimulatedRootPath(env), true};
}

const std::vector<std::string>& StatusCounterNames() { return kStatusNames; }

const char* StatusCounterName(NRT_STATUS status) {
  switch (status) {
    case NRT_SUCCESS:
      return "success";
    case NRT_FAILURE:
      return "failure";
    case NRT_TIMEOUT:
      return "timeout";
    case NRT_HW_ERROR:
    case NRT_EXEC_UNIT_UNRECOVERABLE:
    case NRT_EXEC_HW_ERR_COLLECTIVES:
    case NRT_EXEC_HW_ERR_HBM_UE:
    case NRT_EXEC_HW_ERR_NC_UE:
    case NRT_EXEC_HW_ERR_DMA_ABORT:
    case NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE:
      return "hw_error";
    case NRT_EXEC_BAD_INPUT:
      return "exec_bad_input";
    case NRT_EXEC_OOB:
      return "oob_error";
    case NRT_INVALID:
    case NRT_INVALID_HANDLE:
      return "invalid_error";
    case NRT_RESOURCE:
    case NRT_FAIL_HOST_MEM_ALLOC:
      return "resource_error";
    case NRT_LOAD_NOT_ENOUGH_NC:
    case NRT_EXEC_NC_BUSY:
      return "resource_nc_error";
    case NRT_UNSUPPORTED_NEFF_VERSION:
      return "unsupported_neff_version";
    case NRT_EXEC_COMPLETED_WITH_ERR:
      return "infer_completed_with_error";
    case NRT_EXEC_COMPLETED_WITH_NUM_ERR:
      return "infer_completed_with_num_error";
    case NRT_QUEUE_FULL:
    case NRT_EXEC_SW_NQ_OVERFLOW:
      return "infer_failed_to_queue";
    default:
      return "generic_error";
  }
}

const char* OtherInfoName(OtherInfo info) {
  return kOtherInfoNames[static_cast<int>(info)].c_str();
}
const std::vector<std::string>& OtherInfoNames() { return kOtherInfoNames; }

std::string DeviceDir(const std::string& root, int device) {
  return absl::StrFormat("%s/neuron%d", root, device);
}
std::string CoreDir(const std::string& root, int device, int physical_core) {
  return absl::StrFormat("%s/neuron%d/neuron_core%d", root, device, physical_core);
}
std::string SimDir(const std::string& root, int device) {
  return absl::StrFormat("%s/neuron%d/sim", root, device);
}

absl::StatusOr<std::unique_ptr<SimDeviceTree>> SimDeviceTree::Open(
    const std::string& root, const InstanceType& instance) {
  auto opened = [&](std::string id) {
    return std::unique_ptr<SimDeviceTree>(new SimDeviceTree(root, &instance, std::move(id)));
  };
  const std::string marker = root + "/" + kMarkerFile;
  auto current = [&]() -> std::optional<std::string> {
    absl::StatusOr<std::string> type = ReadTrimmed(marker);
    if (!type.ok()) return std::nullopt;
    return *type;
  };
  auto existing_id = [&]() -> absl::StatusOr<std::string> {
    return ReadTrimmed(SimDir(root, 0) + "/instance_id");
  };
  // Fast path: the tree is there for this instance.
  if (current() == instance.name) {
    if (absl::StatusOr<std::string> id = existing_id(); id.ok()) return opened(*id);
  }
  if (absl::Status st = MakeDirs(root); !st.ok()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: %s", kSimRootVariable, st.message()));
  }
  absl::StatusOr<FileLock> lock = FileLock::Exclusive(root + "/" + kTreeLockFile);
  if (!lock.ok()) return lock.status();
  std::optional<std::string> now = current();
  if (now == instance.name) {
    if (absl::StatusOr<std::string> id = existing_id(); id.ok()) return opened(*id);
  }
  // Another instance type (or a tree left half-built): rebuild it, unless a
  // process still owns a core of the old one.
  if (std::optional<CoreHolder> holder = FindAnyHolder(root); holder.has_value()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "simulated device tree '%s' is in use as %s (core %d of device %d held by pid %d: "
        "%s); cannot switch it to %s",
        root, now.value_or("another instance type"), holder->physical_core, holder->device,
        holder->pid, holder->command, instance.name));
  }
  unlink(marker.c_str());
  if (absl::Status st = RemoveDeviceDirs(root); !st.ok()) return st;
  const std::string id = RandomInstanceId();
  const int host_cpus = HostCpuCount();
  for (int d = 0; d < instance.devices; ++d) {
    if (absl::Status st = WriteDevice(root, instance, d, id, host_cpus); !st.ok()) return st;
  }
  if (absl::Status st = WriteFileAtomically(marker, instance.name + "\n"); !st.ok()) return st;
  return opened(id);
}

absl::Status SimDeviceTree::CheckCore(int device, int physical_core) const {
  if (device < 0 || device >= instance_->devices || physical_core < 0 ||
      physical_core >= instance_->physical_cores_per_device) {
    return absl::OutOfRangeError(absl::StrFormat(
        "no physical core %d on device %d of %s (%d devices of %d cores)", physical_core,
        device, instance_->name, instance_->devices, instance_->physical_cores_per_device));
  }
  return absl::OkStatus();
}

absl::Status SimDeviceTree::CountStatus(int device, int physical_core, NRT_STATUS status,
                                        uint64_t n) {
  if (absl::Status st = CheckCore(device, physical_core); !st.ok()) return st;
  std::lock_guard<std::mutex> lock(mu_);
  const std::string dir = std::string("status/") + StatusCounterName(status);
  if (absl::Status st = AddToCounter(CounterPath(root_, device, physical_core, dir + "/total"), n);
      !st.ok()) {
    return st;
  }
  return AddToCounter(CounterPath(root_, device, physical_core, dir + "/present"), n);
}

absl::Status SimDeviceTree::ResetPresentCounters(int device, int physical_core) {
  if (absl::Status st = CheckCore(device, physical_core); !st.ok()) return st;
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& s : kStatusNames) {
    absl::Status st =
        WriteFileAtomically(CounterPath(root_, device, physical_core, "status/" + s + "/present"),
                        "0\n");
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status SimDeviceTree::SetMemoryUsage(int device, int physical_core,
                                           MemoryCategory category, const MemoryUsage& usage) {
  if (absl::Status st = CheckCore(device, physical_core); !st.ok()) return st;
  std::lock_guard<std::mutex> lock(mu_);
  const std::string dir =
      std::string("memory_usage/device_mem/") + MemoryCategoryName(category) + "/";
  const std::pair<const char*, uint64_t> values[] = {
      {"total", usage.total}, {"present", usage.present}, {"peak", usage.peak}};
  for (const auto& [name, value] : values) {
    absl::Status st = WriteFileAtomically(CounterPath(root_, device, physical_core, dir + name),
                                      std::to_string(value) + "\n");
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status SimDeviceTree::SetMemoryUsage(int device, int physical_core,
                                           const MemoryBreakdown& usage) {
  for (MemoryCategory c : AllMemoryCategories()) {
    if (absl::Status st = SetMemoryUsage(device, physical_core, c, usage[static_cast<int>(c)]);
        !st.ok()) {
      return st;
    }
  }
  return absl::OkStatus();
}

absl::Status SimDeviceTree::AddOtherInfo(int device, int physical_core, OtherInfo info,
                                         uint64_t delta) {
  if (absl::Status st = CheckCore(device, physical_core); !st.ok()) return st;
  std::lock_guard<std::mutex> lock(mu_);
  return AddToCounter(
      CounterPath(root_, device, physical_core, std::string("other_info/") + OtherInfoName(info)),
      delta);
}

absl::Status SimDeviceTree::SetOtherInfo(int device, int physical_core, OtherInfo info,
                                         uint64_t value) {
  if (absl::Status st = CheckCore(device, physical_core); !st.ok()) return st;
  std::lock_guard<std::mutex> lock(mu_);
  return WriteFileAtomically(
      CounterPath(root_, device, physical_core, std::string("other_info/") + OtherInfoName(info)),
      std::to_string(value) + "\n");
}

}  // namespace neuron::device
