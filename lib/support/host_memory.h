// How much more memory this process can take before the kernel's OOM
// killer (or its cgroup's limit) ends it: checked before committing large
// buffers, so a model too big for this host fails with one error line
// instead of a kill.
#ifndef NEURON_LIB_SUPPORT_HOST_MEMORY_H_
#define NEURON_LIB_SUPPORT_HOST_MEMORY_H_

#include <cstdint>

namespace neuron {

// The smaller of the host's MemAvailable and what the process's cgroup
// (v2) still allows; 0 when neither can be read.
uint64_t HostMemoryAvailable();

}  // namespace neuron

#endif  // NEURON_LIB_SUPPORT_HOST_MEMORY_H_
