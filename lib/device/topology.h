// Device interconnect and host placement: which devices link to which (the
// CONNECTED DEVICES column and sysfs connected_devices), the CPUs each
// device's proxy threads are pinned to, and the text drawing of
// `neuron-ls --topology`.
#ifndef NEURON_LIB_DEVICE_TOPOLOGY_H_
#define NEURON_LIB_DEVICE_TOPOLOGY_H_

#include <string>
#include <vector>

#include "lib/device/instance_catalog.h"

namespace neuron::device {

// Devices linked to `device`, in the driver's order: for a torus up, left,
// down, right (device 0 of a 4x4 torus: 12, 3, 4, 1); for a ring previous,
// next; nothing for a single device.
std::vector<int> ConnectedDevices(const InstanceType& instance, int device);

// "12, 3, 4, 1" (the sysfs and table spelling).
std::string FormatDeviceList(const std::vector<int>& devices);

// The host CPUs serving a NUMA node: the host's CPUs split over the
// instance's NUMA nodes the way a two-socket SMT host numbers them (node 0:
// first half of the cores plus their hyperthread siblings, e.g. 0-47,96-143
// of 192). Node -1 (no NUMA information) gets every CPU.
std::vector<int> CpusOfNumaNode(int numa_node, int numa_nodes, int host_cpus);

// The device's CPU affinity on this host.
std::vector<int> DeviceCpuAffinity(const InstanceType& instance, int device, int host_cpus);

// The interconnect drawn in text, inferred from the connection lists alone so
// it works for devices read from any root: a grid for a 2D torus, a row with
// wrap-around links for a ring, a note for a single device, and a plain
// adjacency list for anything else.
std::string DrawTopology(const std::vector<std::vector<int>>& connected);

}  // namespace neuron::device

#endif  // NEURON_LIB_DEVICE_TOPOLOGY_H_
