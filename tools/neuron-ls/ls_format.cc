#include "tools/neuron-ls/ls_format.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "absl/strings/str_format.h"
#include "lib/device/topology.h"
#include "lib/support/parse.h"

namespace neuron::ls {

using device::CoreHolder;
using device::DeviceRecord;

namespace {

constexpr size_t kCommandWidth = 40;
constexpr size_t kWideCommandWidth = 80;

std::string OrNa(const std::string& s) { return s.empty() ? "NA" : s; }

struct Column {
  std::string head1, head2;
};

// A table of cells with two-line centred headers and +---+ borders.
class Table {
 public:
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
  void AddRow(std::vector<std::string> cells) { rows_.push_back({std::move(cells), false}); }
  void AddSeparator() { rows_.push_back({{}, true}); }

  std::string Render() const {
    std::vector<size_t> width(columns_.size());
    for (size_t c = 0; c < columns_.size(); ++c) {
      width[c] = std::max(columns_[c].head1.size(), columns_[c].head2.size());
      for (const Row& r : rows_) {
        if (!r.separator) width[c] = std::max(width[c], r.cells[c].size());
      }
    }
    std::string border = "+";
    for (size_t w : width) border += std::string(w + 2, '-') + "+";
    border += "\n";
    auto centred = [&](auto head) {
      std::string line = "|";
      for (size_t c = 0; c < columns_.size(); ++c) {
        const std::string& h = head(columns_[c]);
        size_t left = (width[c] - h.size()) / 2;
        line += " " + std::string(left, ' ') + h + std::string(width[c] - h.size() - left, ' ') +
                " |";
      }
      return line + "\n";
    };
    std::string out = border;
    out += centred([](const Column& c) -> const std::string& { return c.head1; });
    out += centred([](const Column& c) -> const std::string& { return c.head2; });
    out += border;
    for (const Row& r : rows_) {
      if (r.separator) {
        out += border;
        continue;
      }
      std::string line = "|";
      for (size_t c = 0; c < columns_.size(); ++c) {
        line += " " + r.cells[c] + std::string(width[c] - r.cells[c].size(), ' ') + " |";
      }
      out += line + "\n";
    }
    if (rows_.empty() || !rows_.back().separator) out += border;
    return out;
  }

 private:
  struct Row {
    std::vector<std::string> cells;
    bool separator;
  };
  std::vector<Column> columns_;
  std::vector<Row> rows_;
};

}  // namespace

std::string FormatDeviceMemory(uint64_t bytes) {
  if (bytes == 0) return "NA";
  return absl::StrFormat("%d GB", (bytes + (uint64_t{1} << 29)) >> 30);
}

std::string TruncateCommand(const std::string& command, size_t width) {
  if (command.size() <= width) return command;
  if (width <= 3) return command.substr(0, width);
  return command.substr(0, width - 3) + "...";
}

LsReport BuildLsReport(const std::vector<device::DeviceRecord>& devices,
                       const std::vector<device::CoreHolder>& holders, int lnc, bool show_all_procs) {
  LsReport report;
  report.lnc = std::max(lnc, 1);
  if (!devices.empty()) {
    const DeviceRecord& first = devices.front();
    report.instance_type = !first.instance_type.empty()     ? first.instance_type
                           : !first.instance_family.empty() ? first.instance_family
                                                            : "unknown";
    report.instance_id = OrNa(first.instance_id);
  }
  int next_id = 0;
  bool ids_known = true;
  std::map<int, size_t> position;  // device index -> report.devices slot
  std::map<int, int> first_id;     // device index -> its first logical id
  for (const DeviceRecord& r : devices) {
    LsDevice d;
    d.index = r.index;
    // Ids count the cores of every device before this one: one unknown count
    // leaves the rest unknown too, rather than wrong.
    ids_known &= r.core_count > 0;
    if (ids_known) {
      d.nc_count = std::max(1, r.core_count / report.lnc);
      for (int i = 0; i < d.nc_count; ++i) d.neuroncore_ids.push_back(next_id + i);
      first_id[r.index] = next_id;
      next_id += d.nc_count;
    } else if (r.core_count > 0) {
      d.nc_count = std::max(1, r.core_count / report.lnc);
    }
    d.memory_size = r.memory_size;
    d.connected = r.connected;
    d.connected_known = r.Readable("connected_devices");
    d.bdf = r.pci_bdf;
    d.cpu_affinity = r.cpu_affinity;
    d.numa_node = r.has_numa_node ? std::to_string(r.numa_node) : "";
    position[r.index] = report.devices.size();
    report.devices.push_back(std::move(d));
  }
  for (const CoreHolder& h : holders) {
    auto slot = position.find(h.device);
    if (slot == position.end()) continue;
    if (!show_all_procs && (h.runtime_version.empty() || h.runtime_version == "NA")) continue;
    LsDevice& d = report.devices[slot->second];
    auto p = std::find_if(d.processes.begin(), d.processes.end(),
                          [&](const LsProcess& x) { return x.pid == h.pid; });
    if (p == d.processes.end()) {
      d.processes.push_back({h.pid, h.command, h.runtime_version, {}});
      p = d.processes.end() - 1;
    }
    // The logical id under the LNC shown, from the physical core held (none
    // for a process attached without a core, or where ids are unknown).
    auto first = first_id.find(h.device);
    if (h.physical_core < 0 || first == first_id.end()) continue;
    const int id = first->second + h.physical_core / report.lnc;
    if (std::find(p->neuroncore_ids.begin(), p->neuroncore_ids.end(), id) ==
        p->neuroncore_ids.end()) {
      p->neuroncore_ids.push_back(id);
    }
  }
  return report;
}

std::string FormatLsHeader(const LsReport& report) {
  return absl::StrFormat("instance-type: %s\ninstance-id: %s\nlogical-neuroncore-config: %d\n",
                         OrNa(report.instance_type), OrNa(report.instance_id), report.lnc);
}

std::string FormatLsTable(const LsReport& report, const LsTableOptions& options) {
  bool any_process = false;
  bool multi_row = false;
  for (const LsDevice& d : report.devices) {
    any_process |= !d.processes.empty();
    multi_row |= d.processes.size() > 1;
  }
  const bool process_mode = any_process || options.wide || options.show_all_procs;
  // The CPU affinity and NUMA node stay when processes are shown: they are
  // where a process's proxy threads should run.
  std::vector<Column> columns = {{"NEURON", "DEVICE"},   {"NEURON", "CORES"},
                                 {"NEURON", "CORE IDS"}, {"NEURON", "MEMORY"},
                                 {"CONNECTED", "DEVICES"}, {"PCI", "BDF"},
                                 {"CPU", "AFFINITY"},    {"NUMA", "NODE"}};
  if (process_mode) {
    columns.push_back({"PID", ""});
    columns.push_back({"COMMAND", ""});
    columns.push_back({"RUNTIME", "VERSION"});
  }
  Table table(columns);
  const size_t command_width = options.wide ? kWideCommandWidth : kCommandWidth;
  for (size_t i = 0; i < report.devices.size(); ++i) {
    const LsDevice& d = report.devices[i];
    std::vector<std::string> cells = {
        std::to_string(d.index),
        d.nc_count > 0 ? std::to_string(d.nc_count) : "NA",
        d.neuroncore_ids.empty() ? "NA" : FormatRangeList(d.neuroncore_ids),
        FormatDeviceMemory(d.memory_size),
        d.connected_known ? device::FormatDeviceList(d.connected) : "NA",
        OrNa(d.bdf),
        OrNa(d.cpu_affinity),
        OrNa(d.numa_node)};
    if (!process_mode) {
      table.AddRow(cells);
      continue;
    }
    if (d.processes.empty()) {
      cells.insert(cells.end(), {"", "", ""});
      table.AddRow(cells);
    }
    for (size_t p = 0; p < d.processes.size(); ++p) {
      const LsProcess& proc = d.processes[p];
      if (p > 0) cells.assign(8, "");
      cells.push_back(std::to_string(proc.pid));
      cells.push_back(TruncateCommand(proc.command, command_width));
      cells.push_back(OrNa(proc.runtime_version));
      table.AddRow(cells);
    }
    if (multi_row && i + 1 < report.devices.size()) table.AddSeparator();
  }
  return table.Render();
}

std::string FormatLsJson(const LsReport& report) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const LsDevice& d : report.devices) {
    nlohmann::ordered_json procs = nlohmann::ordered_json::array();
    for (const LsProcess& p : d.processes) {
      procs.push_back({{"pid", p.pid},
                       {"command", p.command},
                       {"neuron_runtime_version", OrNa(p.runtime_version)}});
    }
    nlohmann::ordered_json dev = nlohmann::ordered_json::object();
    dev["neuron_device"] = d.index;
    dev["bdf"] = OrNa(d.bdf);
    dev["cpu_affinity"] = OrNa(d.cpu_affinity);
    dev["numa_node"] = OrNa(d.numa_node);
    dev["connected_to"] = d.connected_known ? nlohmann::ordered_json(d.connected) : nullptr;
    dev["nc_count"] = d.nc_count > 0 ? nlohmann::ordered_json(d.nc_count) : nullptr;
    dev["logical_neuroncore_config"] = report.lnc;
    dev["memory_size"] = d.memory_size > 0 ? nlohmann::ordered_json(d.memory_size) : nullptr;
    dev["neuroncore_ids"] =
        d.neuroncore_ids.empty() ? nullptr : nlohmann::ordered_json(d.neuroncore_ids);
    dev["neuron_processes"] = procs;
    out.push_back(std::move(dev));
  }
  // Invalid UTF-8 in a command line must not throw.
  return out.dump(4, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string FormatLsTopology(const LsReport& report) {
  std::vector<std::vector<int>> connected;
  for (const LsDevice& d : report.devices) connected.push_back(d.connected);
  return device::DrawTopology(connected);
}

}  // namespace neuron::ls
