#include "lib/profile/host_sampler.h"
#include "lib/support/host_memory.h"

#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

namespace neuron::profile {

HostSample SampleHost() {
  HostSample s;
  s.wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now().time_since_epoch())
                  .count();
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
    s.process_cpu_ns = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  if (FILE* f = std::fopen("/proc/stat", "r")) {
    unsigned long long v[8] = {};
    if (std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                    &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
      for (unsigned long long x : v) s.host_total_ticks += x;
      s.host_busy_ticks = s.host_total_ticks - v[3] - v[4];  // minus idle, iowait
    }
    std::fclose(f);
  }
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    unsigned long long size = 0, resident = 0;
    if (std::fscanf(f, "%llu %llu", &size, &resident) == 2)
      s.rss_bytes = resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    std::fclose(f);
  }
  s.host_available_bytes = HostMemoryAvailable();
  return s;
}

double ProcessCpuPercent(const HostSample& a, const HostSample& b) {
  const int64_t wall = b.wall_ns - a.wall_ns;
  if (wall <= 0) return 0;
  return 100.0 * static_cast<double>(b.process_cpu_ns - a.process_cpu_ns) / wall;
}

double HostCpuPercent(const HostSample& a, const HostSample& b) {
  if (b.host_total_ticks <= a.host_total_ticks) return 0;
  return 100.0 * static_cast<double>(b.host_busy_ticks - a.host_busy_ticks) /
         static_cast<double>(b.host_total_ticks - a.host_total_ticks);
}

}  // namespace neuron::profile
