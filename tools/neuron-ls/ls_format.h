// What neuron-ls shows: a report built from the device tree (devices, the
// processes holding their cores, the LNC in effect) and its renderings as
// the real tool prints them: header lines, the bordered table, the JSON
// array, and the topology drawing.
#ifndef NEURON_TOOLS_NEURON_LS_LS_FORMAT_H_
#define NEURON_TOOLS_NEURON_LS_LS_FORMAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lib/device/core_lock.h"
#include "lib/device/device_tree_reader.h"

namespace neuron::ls {

struct LsProcess {
  int pid = 0;
  std::string command;
  std::string runtime_version;
  std::vector<int> neuroncore_ids;  // the logical cores it holds on this device
};

struct LsDevice {
  int index = 0;
  int nc_count = 0;                 // logical cores; 0 = unknown
  std::vector<int> neuroncore_ids;  // global logical ids
  uint64_t memory_size = 0;         // bytes; 0 = unknown
  std::vector<int> connected;
  bool connected_known = true;
  std::string bdf;                  // "" = unknown
  std::string cpu_affinity;         // "" = unknown
  std::string numa_node;            // "" = unknown
  std::vector<LsProcess> processes;
};

struct LsReport {
  std::string instance_type;
  std::string instance_id;
  int lnc = 1;
  std::vector<LsDevice> devices;
  std::vector<std::string> notes;  // what could not be learned and why, one line each
};

// Groups physical cores into logical ones (numbered across devices) and
// attaches holders to their devices. A device whose core count is unknown
// gets no logical ids, and the numbering of the devices after it stops. Without show_all_procs, processes that
// do not run a Neuron runtime (version "NA") are left out, as the real tool
// does.
LsReport BuildLsReport(const std::vector<device::DeviceRecord>& devices,
                       const std::vector<device::CoreHolder>& holders, int lnc, bool show_all_procs);

// "instance-type: ...\ninstance-id: ...\nlogical-neuroncore-config: N\n"
std::string FormatLsHeader(const LsReport& report);

struct LsTableOptions {
  bool wide = false;            // commands up to ~80 characters instead of ~40
  bool show_all_procs = false;  // process columns even when no process holds a core
};
// The bordered table. Process columns (PID, COMMAND, RUNTIME VERSION) appear
// when a process holds a core, or with -w/-a.
std::string FormatLsTable(const LsReport& report, const LsTableOptions& options);

// The JSON array, one object per device, with the real tool's keys; an
// unknown value is null.
std::string FormatLsJson(const LsReport& report);

// The interconnect drawing of --topology.
std::string FormatLsTopology(const LsReport& report);

// "96 GB" (binary gigabytes, as neuron-ls prints memory); "NA" for 0.
std::string FormatDeviceMemory(uint64_t bytes);

// Cuts a command to width characters, ending in "..." when cut.
std::string TruncateCommand(const std::string& command, size_t width);

}  // namespace neuron::ls

#endif  // NEURON_TOOLS_NEURON_LS_LS_FORMAT_H_
