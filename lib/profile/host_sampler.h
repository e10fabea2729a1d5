// Host samples for NEURON_RT_INSPECT_CPU_UTIL and NEURON_RT_INSPECT_HOST_MEMORY,
// read from /proc: the process's CPU time and the host's busy time (for
// utilisation between two samples), the process's resident memory and the
// host's available memory. Fields stay 0 where /proc cannot be read.
#ifndef NEURON_LIB_PROFILE_HOST_SAMPLER_H_
#define NEURON_LIB_PROFILE_HOST_SAMPLER_H_

#include <cstdint>

namespace neuron::profile {

struct HostSample {
  int64_t wall_ns = 0;          // steady clock
  int64_t process_cpu_ns = 0;   // user + system time of this process
  uint64_t host_busy_ticks = 0, host_total_ticks = 0;
  uint64_t rss_bytes = 0;       // this process
  uint64_t host_available_bytes = 0;
};

HostSample SampleHost();

// CPU utilisation between two samples, in percent: of one CPU for the
// process (may exceed 100 with several threads), of all CPUs for the host.
double ProcessCpuPercent(const HostSample& a, const HostSample& b);
double HostCpuPercent(const HostSample& a, const HostSample& b);

}  // namespace neuron::profile

#endif  // NEURON_LIB_PROFILE_HOST_SAMPLER_H_
