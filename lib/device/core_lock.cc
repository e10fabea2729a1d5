#include "lib/device/core_lock.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "lib/support/atomic_file.h"
#include "lib/device/device_tree.h"
#include "lib/device/tree_files.h"
#include "lib/support/parse.h"
#include "neuron/version.h"

namespace neuron::device {
namespace {

std::string LockPath(const std::string& root, int device, int core) {
  return absl::StrFormat("%s/core%d.lock", SimDir(root, device), core);
}
std::string OwnerPath(const std::string& root, int device, int core) {
  return absl::StrFormat("%s/core%d.owner", SimDir(root, device), core);
}

struct flock WholeFile(short type) {
  struct flock fl;
  std::memset(&fl, 0, sizeof(fl));
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  return fl;
}

// Tests a core's lock without taking it.
bool LockHeldAt(const std::string& lock_path) {
  int fd = open(lock_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock fl = WholeFile(F_WRLCK);
  bool held = fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
  close(fd);
  return held;
}

std::string FormatOwner(const CoreOwner& owner, int logical_core, int lnc) {
  return absl::StrFormat("pid=%d\nlnc=%d\nlogical_core=%d\nruntime_version=%s\ncommand=%s\n",
                         owner.pid, lnc, logical_core, owner.runtime_version, owner.command);
}

void ParseOwner(const std::string& text, CoreHolder* holder) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "command") {
      holder->command = value;
    } else if (key == "runtime_version") {
      holder->runtime_version = value;
    } else if (key == "pid" || key == "lnc" || key == "logical_core") {
      absl::StatusOr<int64_t> v = ParseSigned(value);
      if (!v.ok() || *v < -1 || *v > (1 << 30)) continue;
      int iv = static_cast<int>(*v);
      (key == "pid" ? holder->pid : key == "lnc" ? holder->lnc : holder->logical_core) = iv;
    }
  }
}

CoreHolder ReadHolder(const std::string& root, int device, int core) {
  CoreHolder h;
  h.device = device;
  h.physical_core = core;
  h.command = "(unknown)";
  h.runtime_version = "NA";
  if (absl::StatusOr<std::string> text = ReadSmallFile(OwnerPath(root, device, core)); text.ok()) {
    ParseOwner(*text, &h);
  }
  return h;
}

// Devices present under root, ascending.
std::vector<int> DeviceIndices(const std::string& root) {
  std::vector<int> out;
  DIR* dir = opendir(root.c_str());
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    if (name.rfind("neuron", 0) != 0 || name.size() == 6) continue;
    absl::StatusOr<uint64_t> n = ParseUnsigned(name.substr(6), 1 << 20);
    if (n.ok()) out.push_back(static_cast<int>(*n));
  }
  closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

// Physical cores with a lock file in a device's sim directory, ascending.
std::vector<int> LockedCoreFiles(const std::string& root, int device) {
  std::vector<int> out;
  DIR* dir = opendir(SimDir(root, device).c_str());
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    const std::string suffix = ".lock";
    if (name.rfind("core", 0) != 0 || name.size() <= 4 + suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    absl::StatusOr<uint64_t> n =
        ParseUnsigned(name.substr(4, name.size() - 4 - suffix.size()), 1 << 20);
    if (n.ok()) out.push_back(static_cast<int>(*n));
  }
  closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

// "nc0-nc3" or "nc0-nc0,nc2-nc3": the runtime's spelling of a core range.
std::string FormatRequested(std::vector<int> ids) {
  std::sort(ids.begin(), ids.end());
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += absl::StrFormat("nc%d-nc%d", ids[i], ids[j]);
    i = j + 1;
  }
  return out;
}

bool LogicalCoreFree(const std::string& root, const LogicalCoreMap& map, int id) {
  LogicalCore core = map.Core(id);
  for (int p : core.PhysicalCores()) {
    if (LockHeldAt(LockPath(root, core.device, p))) return false;
  }
  return true;
}

}  // namespace

CoreOwner CurrentProcessOwner() {
  CoreOwner owner;
  owner.pid = getpid();
  owner.runtime_version =
      absl::StrFormat("%d.%d.0", NEURON_NRT_MAJOR_VERSION, NEURON_NRT_MINOR_VERSION);
  owner.command = ReadCommandLine("/proc/self/cmdline");
  return owner;
}

std::string ReadCommandLine(const std::string& cmdline_path) {
  absl::StatusOr<std::string> cmdline = ReadSmallFile(cmdline_path);
  if (!cmdline.ok()) return "";
  std::string cmd = *std::move(cmdline);
  while (!cmd.empty() && cmd.back() == '\0') cmd.pop_back();
  for (char& c : cmd) {
    if (c == '\0') c = ' ';
    else if (static_cast<unsigned char>(c) < 0x20) c = '?';
  }
  return cmd;
}

CoreLease::~CoreLease() {
  for (const Held& h : held_) {
    unlink(h.owner_path.c_str());  // before unlocking, so no one sees a stale owner
    close(h.fd);                   // drops the OFD lock
  }
}

absl::StatusOr<std::unique_ptr<CoreLease>> AcquireCores(const std::string& root,
                                                        const LogicalCoreMap& map,
                                                        const std::vector<int>& logical_cores,
                                                        const CoreOwner& owner) {
  std::vector<int> ids = logical_cores;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (int id : ids) {
    if (!map.Contains(id)) {
      return absl::OutOfRangeError(absl::StrFormat(
          "NeuronCore nc%d does not exist: the instance has %d logical cores (nc0-nc%d) at LNC %d",
          id, map.count(), map.count() - 1, map.lnc()));
    }
  }
  std::unique_ptr<CoreLease> lease(new CoreLease());
  lease->logical_cores_ = ids;
  for (int id : ids) {
    LogicalCore core = map.Core(id);
    for (int p : core.PhysicalCores()) {
      const std::string lock_path = LockPath(root, core.device, p);
      int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "cannot open core lock '%s': %s", lock_path, std::strerror(errno)));
      }
      struct flock fl = WholeFile(F_WRLCK);
      if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
        int err = errno;
        close(fd);
        if (err != EAGAIN && err != EACCES) {
          return absl::InternalError(
              absl::StrFormat("cannot lock '%s': %s", lock_path, std::strerror(err)));
        }
        CoreHolder holder = ReadHolder(root, core.device, p);
        lease.reset();  // release what this call took before counting
        int available = 0;
        for (int i = 0; i < map.count(); ++i) available += LogicalCoreFree(root, map, i);
        std::string command = holder.command;
        if (command.size() > 80) command = command.substr(0, 77) + "...";
        return absl::UnavailableError(absl::StrFormat(
            "NeuronCore(s) not available - Requested:%s Available:%d (nc%d held by pid %d: %s)",
            FormatRequested(ids), available, id, holder.pid, command));
      }
      const std::string owner_path = OwnerPath(root, core.device, p);
      lease->held_.push_back({fd, owner_path});
      if (absl::Status st = WriteFileAtomically(owner_path, FormatOwner(owner, id, map.lnc()));
          !st.ok()) {
        return st;
      }
    }
  }
  return lease;
}

bool IsCoreHeld(const std::string& root, int device, int physical_core) {
  return LockHeldAt(LockPath(root, device, physical_core));
}

std::vector<CoreHolder> ReadHolders(const std::string& root) {
  std::vector<CoreHolder> out;
  for (int d : DeviceIndices(root)) {
    for (int c : LockedCoreFiles(root, d)) {
      if (LockHeldAt(LockPath(root, d, c))) out.push_back(ReadHolder(root, d, c));
    }
  }
  return out;
}

std::optional<CoreHolder> FindAnyHolder(const std::string& root) {
  std::vector<CoreHolder> all = ReadHolders(root);
  if (all.empty()) return std::nullopt;
  return all.front();
}

}  // namespace neuron::device
