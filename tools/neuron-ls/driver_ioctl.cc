#include "tools/neuron-ls/driver_ioctl.h"

#include <fcntl.h>
#include <linux/ioctl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>

#include "absl/strings/str_format.h"

namespace neuron::ls {
namespace {

// The driver's structures (aws-neuron-driver: neuron_ioctl.h and
// share/neuron_driver_shared.h), mirrored field for field; the asserts pin
// the layouts the driver copies to and from.
struct BdfArg {  // neuron_ioctl_device_bdf
  uint32_t bus_number;
  uint8_t slot;
  uint8_t func;
};
struct BdfExtArg {  // neuron_ioctl_device_bdf_ext
  uint32_t nd_index;  // in: relative to the device the file is open on
  uint32_t domain;
  uint32_t bus_number;
  uint8_t slot;
  uint8_t func;
};
struct AppInfo {  // neuron_app_info
  int32_t pid;
  uint8_t nc_lock_map;            // bit K: the process holds core K
  uint8_t uuid_data[4][32];       // the models it runs on those cores
  size_t host_mem_size;
  size_t device_mem_size;
};
struct AppsInfoHeader {  // neuron_ioctl_get_apps_info, before its app_data[]
  uint16_t apps_info_flags;
  uint32_t capacity;
  uint32_t size;
};
static_assert(sizeof(BdfArg) == 8 && sizeof(BdfExtArg) == 16);
static_assert(sizeof(AppInfo) == 152 && offsetof(AppInfo, host_mem_size) == 136);
static_assert(sizeof(AppsInfoHeader) == 12 && alignof(AppInfo) == 8);

// The driver declares these with a pointer as the size argument, so the
// number encodes sizeof(void*), not the structure's size.
constexpr unsigned long kIoctlDeviceBdf = _IOR('N', 101, void*);
constexpr unsigned long kIoctlDeviceBdfExt = _IOR('N', 106, void*);
constexpr unsigned long kIoctlGetAllAppsInfo = _IOR('N', 7, void*);

constexpr uint16_t kAppInfoNcLockInfo = 1;  // APP_INFO_PID_NC_LOCK_INFO
constexpr uint32_t kMaxAppsPerDevice = 16;  // NEURON_MAX_PROCESS_PER_DEVICE
constexpr int kLockMapBits = 4;             // APP_INFO_MAX_MODELS_PER_DEVICE

// The request: the header, padded as the driver's flexible array is, then
// room for every process the driver tracks.
struct AppsInfoRequest {
  AppsInfoHeader header;
  alignas(AppInfo) AppInfo apps[kMaxAppsPerDevice];
};
static_assert(offsetof(AppsInfoRequest, apps) == 16);

class DriverIoctl : public DeviceIoctl {
 public:
  explicit DriverIoctl(std::string dev_dir) : dev_dir_(std::move(dev_dir)) {}
  ~DriverIoctl() override {
    for (auto& [device, fd] : fds_) close(fd);
  }

  absl::StatusOr<std::string> PciBdf(int device) override {
    absl::StatusOr<int> fd = Open(device);
    if (!fd.ok()) return fd.status();
    BdfExtArg ext{};
    if (ioctl(*fd, kIoctlDeviceBdfExt, &ext) == 0) {
      return FormatPciBdf(ext.domain, ext.bus_number, ext.slot, ext.func);
    }
    // Drivers before the _EXT call: domain 0, for a device this process opened.
    BdfArg bdf{};
    if (ioctl(*fd, kIoctlDeviceBdf, &bdf) == 0) {
      return FormatPciBdf(0, bdf.bus_number, bdf.slot, bdf.func);
    }
    return Failure("NEURON_IOCTL_DEVICE_BDF", device, errno);
  }

  absl::StatusOr<std::vector<DriverApp>> Apps(int device) override {
    absl::StatusOr<int> fd = Open(device);
    if (!fd.ok()) return fd.status();
    AppsInfoRequest request{};
    request.header.apps_info_flags = kAppInfoNcLockInfo;
    request.header.capacity = kMaxAppsPerDevice;
    if (ioctl(*fd, kIoctlGetAllAppsInfo, &request) != 0) {
      return Failure("NEURON_IOCTL_DEVICE_GET_ALL_APPS_INFO", device, errno);
    }
    std::vector<DriverApp> out;
    const uint32_t n = std::min(request.header.size, kMaxAppsPerDevice);
    for (uint32_t i = 0; i < n; ++i) {
      DriverApp app;
      app.pid = request.apps[i].pid;
      for (int core = 0; core < kLockMapBits; ++core) {
        if (request.apps[i].nc_lock_map & (1u << core)) app.locked_cores.push_back(core);
      }
      out.push_back(std::move(app));
    }
    return out;
  }

 private:
  std::string NodePath(int device) const { return absl::StrFormat("%s/neuron%d", dev_dir_, device); }

  absl::Status Failure(const char* call, int device, int err) const {
    return absl::UnavailableError(
        absl::StrFormat("%s on '%s': %s", call, NodePath(device), std::strerror(err)));
  }

  // Read-write, as the runtime opens it: the driver answers the process
  // list only to an attached process.
  absl::StatusOr<int> Open(int device) {
    if (auto it = fds_.find(device); it != fds_.end()) return it->second;
    const std::string path = NodePath(device);
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      return absl::UnavailableError(absl::StrFormat("cannot open '%s': %s", path, std::strerror(err)));
    }
    fds_[device] = fd;
    return fd;
  }

  const std::string dev_dir_;
  std::map<int, int> fds_;
};

}  // namespace

std::unique_ptr<DeviceIoctl> OpenDriverIoctl(const std::string& dev_dir) {
  return std::make_unique<DriverIoctl>(dev_dir);
}

std::string FormatPciBdf(uint32_t domain, uint32_t bus, uint32_t slot, uint32_t function) {
  return absl::StrFormat("%04x:%02x:%02x.%x", domain, bus, slot, function);
}

}  // namespace neuron::ls
