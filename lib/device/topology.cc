#include "lib/device/topology.h"

#include <cmath>

#include "absl/strings/str_format.h"

namespace neuron::device {

std::vector<int> ConnectedDevices(const InstanceType& instance, int device) {
  const int n = instance.devices;
  if (device < 0 || device >= n) return {};
  switch (instance.interconnect) {
    case Interconnect::kNone:
      return {};
    case Interconnect::kRing:
      if (n == 1) return {};
      if (n == 2) return {1 - device};
      return {(device + n - 1) % n, (device + 1) % n};
    case Interconnect::kTorus: {
      const int rows = instance.torus_rows, cols = instance.torus_cols;
      const int r = device / cols, c = device % cols;
      return {((r + rows - 1) % rows) * cols + c, r * cols + (c + cols - 1) % cols,
              ((r + 1) % rows) * cols + c, r * cols + (c + 1) % cols};
    }
  }
  return {};
}

std::string FormatDeviceList(const std::vector<int>& devices) {
  std::string out;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(devices[i]);
  }
  return out;
}

std::vector<int> CpusOfNumaNode(int numa_node, int numa_nodes, int host_cpus) {
  std::vector<int> cpus;
  if (host_cpus < 1) host_cpus = 1;
  if (numa_nodes < 1) numa_nodes = 1;
  if (numa_node < 0 || numa_node >= numa_nodes || host_cpus < numa_nodes) {
    for (int c = 0; c < host_cpus; ++c) cpus.push_back(c);
    return cpus;
  }
  if (host_cpus % 2 == 0 && host_cpus >= 2 * numa_nodes) {
    // Two hyperthreads per core: CPU i and i + host_cpus/2 are siblings.
    const int cores = host_cpus / 2;
    const int lo = numa_node * cores / numa_nodes, hi = (numa_node + 1) * cores / numa_nodes;
    for (int c = lo; c < hi; ++c) cpus.push_back(c);
    for (int c = lo; c < hi; ++c) cpus.push_back(cores + c);
    return cpus;
  }
  const int lo = numa_node * host_cpus / numa_nodes;
  const int hi = (numa_node + 1) * host_cpus / numa_nodes;
  for (int c = lo; c < hi; ++c) cpus.push_back(c);
  return cpus;
}

std::vector<int> DeviceCpuAffinity(const InstanceType& instance, int device, int host_cpus) {
  int node = device >= 0 && device < static_cast<int>(instance.numa_node.size())
                 ? instance.numa_node[device]
                 : -1;
  return CpusOfNumaNode(node, instance.numa_nodes, host_cpus);
}

namespace {

// Box of one device: "[ 0 ]", "[12 ]".
std::string Box(int d) { return absl::StrFormat("[%2d ]", d); }

bool IsTorus(const std::vector<std::vector<int>>& connected, int rows, int cols) {
  for (int d = 0; d < rows * cols; ++d) {
    const int r = d / cols, c = d % cols;
    std::vector<int> expect = {((r + rows - 1) % rows) * cols + c,
                               r * cols + (c + cols - 1) % cols, ((r + 1) % rows) * cols + c,
                               r * cols + (c + 1) % cols};
    if (connected[d] != expect) return false;
  }
  return true;
}

bool IsRing(const std::vector<std::vector<int>>& connected) {
  const int n = static_cast<int>(connected.size());
  for (int d = 0; d < n; ++d) {
    if (connected[d] != std::vector<int>{(d + n - 1) % n, (d + 1) % n}) return false;
  }
  return true;
}

// A row of the grid: "*––►[ 0 ]◄––►[ 1 ]◄––*" with wrap-around ends.
std::string DeviceRow(int first, int count) {
  std::string line = "*––►";
  for (int i = 0; i < count; ++i) {
    if (i) line += "◄––►";
    line += Box(first + i);
  }
  line += "◄––*";
  return line;
}

// A line with one glyph under the middle of each box of a row.
std::string ColumnMarks(int count, const char* glyph) {
  std::string line = "    ";  // under "*––►"
  for (int i = 0; i < count; ++i) {
    if (i) line += "    ";  // under "◄––►"
    line += "  ";
    line += glyph;
    line += "  ";
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

}  // namespace

std::string DrawTopology(const std::vector<std::vector<int>>& connected) {
  const int n = static_cast<int>(connected.size());
  std::string out = "Neuron Device Topology\n";
  if (n == 0) return out + "  (no Neuron devices)\n";
  if (n == 1) {
    return out + "  " + Box(0) + "  single device, no device-to-device links\n";
  }
  // A square-ish torus (rows x cols, rows <= cols) with the driver's order.
  for (int rows = static_cast<int>(std::sqrt(n)); rows >= 2; --rows) {
    if (n % rows != 0) continue;
    const int cols = n / rows;
    if (cols < 3 || rows < 3 || !IsTorus(connected, rows, cols)) continue;
    out += ColumnMarks(cols, "*") + "\n";
    out += ColumnMarks(cols, "│") + "\n";
    out += ColumnMarks(cols, "▼") + "\n";
    for (int r = 0; r < rows; ++r) {
      out += DeviceRow(r * cols, cols) + "\n";
      out += ColumnMarks(cols, "▲") + "\n";
      out += ColumnMarks(cols, "│") + "\n";
      out += ColumnMarks(cols, r + 1 < rows ? "▼" : "*") + "\n";
    }
    out += "\nLegend:\n\n        *––► = Wrap-around link\n";
    return out;
  }
  if (n >= 3 && IsRing(connected)) {
    out += DeviceRow(0, n) + "\n";
    out += "\nLegend:\n\n        *––► = Wrap-around link (ring)\n";
    return out;
  }
  for (int d = 0; d < n; ++d) {
    out += absl::StrFormat("  %s ◄––► %s\n", Box(d),
                           connected[d].empty() ? "(none)" : FormatDeviceList(connected[d]));
  }
  return out;
}

}  // namespace neuron::device
