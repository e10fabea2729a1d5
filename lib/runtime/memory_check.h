// Before anything big is done (building a model's buffers, drawing or
// reading gigabytes of inputs): does it fit? A model that does not fit the
// simulated core's HBM or what this process may still take of the host
// (MemAvailable, its cgroup's limits, RLIMIT_AS) fails at once with one
// error naming both figures, instead of working for a minute and then
// being ended by the kernel's OOM killer.
#ifndef NEURON_LIB_RUNTIME_MEMORY_CHECK_H_
#define NEURON_LIB_RUNTIME_MEMORY_CHECK_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "lib/program/manifest.h"

namespace neuron::runtime {

class Core;

// The plan's parts: " (inputs 14.5 GiB, outputs 550 B, 1 GiB of them in
// their inputs, scratch 124 MiB, constants 8.7 KiB)".
std::string DescribePlan(const program::MemoryPlan& plan);

// NRT_RESOURCE when `need` bytes exceed the core's free HBM: "<what> needs
// <need><parts> of device memory, and nc0 has <free> free of <capacity>".
absl::Status CheckDeviceMemory(const Core& core, uint64_t need, std::string_view what,
                               std::string_view parts = "");

// NRT_RESOURCE when `need` bytes exceed what this process may still take of
// the host's memory: "<what> needs <need><parts> of host memory, and
// <binding limit> leaves <bytes> of <limit>".
absl::Status CheckHostMemory(uint64_t need, std::string_view what, std::string_view parts = "");

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_MEMORY_CHECK_H_
