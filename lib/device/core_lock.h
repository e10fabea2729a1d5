// Exclusive ownership of NeuronCores by processes, as the real driver
// enforces it: a second process asking for a held core is refused with the
// runtime's "not available" error, plus the holder's PID and command.
//
// Each physical core has a lock file (<root>/neuronN/sim/coreK.lock) held with
// an open-file-description lock (F_OFD_SETLK): the kernel drops it when the
// holder exits or crashes, so a lock is never stale. OFD locks rather than
// flock because F_OFD_GETLK tests a lock without taking it (neuron-ls never
// makes a runtime's acquire fail by looking), and they conflict between two
// acquisitions in one process too. Locking physical cores makes two
// processes with different LNC sizes exclude each other correctly. Beside
// each lock, coreK.owner records pid, command and runtime version for
// neuron-ls; an owner file whose lock is free is ignored.
#ifndef NEURON_LIB_DEVICE_CORE_LOCK_H_
#define NEURON_LIB_DEVICE_CORE_LOCK_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/device/logical_cores.h"

namespace neuron::device {

// Who holds a core.
struct CoreOwner {
  int pid = 0;
  std::string command;          // the command line, arguments joined by spaces
  std::string runtime_version;  // "2.0.0"; "NA" for a process without a runtime
};

// This process: its pid, /proc/self/cmdline and the runtime version of
// include/neuron/version.h.
CoreOwner CurrentProcessOwner();

// A /proc/PID/cmdline file as one line: arguments joined by spaces, control
// characters as '?'; "" when it cannot be read (the process is gone).
std::string ReadCommandLine(const std::string& cmdline_path);

// A held physical core, as read back from the tree.
struct CoreHolder : CoreOwner {
  int device = 0;
  int physical_core = 0;  // within the device
  int logical_core = -1;  // the holder's logical id for it (-1 when unknown)
  int lnc = 1;            // the holder's LNC size
};

// Releases its cores on destruction.
class CoreLease {
 public:
  ~CoreLease();
  CoreLease(const CoreLease&) = delete;
  CoreLease& operator=(const CoreLease&) = delete;
  const std::vector<int>& logical_cores() const { return logical_cores_; }

 private:
  friend absl::StatusOr<std::unique_ptr<CoreLease>> AcquireCores(const std::string&,
                                                                 const LogicalCoreMap&,
                                                                 const std::vector<int>&,
                                                                 const CoreOwner&);
  struct Held {
    int fd;
    std::string owner_path;
  };
  CoreLease() = default;
  std::vector<int> logical_cores_;
  std::vector<Held> held_;
};

// Takes every physical core of the given logical cores, all or nothing. The
// device tree must exist (SimDeviceTree::Open). A held core gives
// Unavailable: "NeuronCore(s) not available - Requested:nc1-nc1 Available:0
// (nc1 held by pid 1234: python train.py)"; an id outside the map gives
// OutOfRange.
absl::StatusOr<std::unique_ptr<CoreLease>> AcquireCores(const std::string& root,
                                                        const LogicalCoreMap& map,
                                                        const std::vector<int>& logical_cores,
                                                        const CoreOwner& owner);

// Whether a process holds the physical core (tests the lock, never takes it).
bool IsCoreHeld(const std::string& root, int device, int physical_core);

// Every held core under root, ordered by device and core.
std::vector<CoreHolder> ReadHolders(const std::string& root);

// The first held core, if any.
std::optional<CoreHolder> FindAnyHolder(const std::string& root);

}  // namespace neuron::device

#endif  // NEURON_LIB_DEVICE_CORE_LOCK_H_
