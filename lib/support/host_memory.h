// How much more memory this process can take before the kernel's OOM
// killer (or its cgroup's limit) ends it: checked before committing large
// buffers, so a model too big for this host fails with one error line
// naming the limit that binds, instead of a kill.
#ifndef NEURON_LIB_SUPPORT_HOST_MEMORY_H_
#define NEURON_LIB_SUPPORT_HOST_MEMORY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace neuron {

// One limit on this process's memory and what is left under it.
struct HostMemoryLimit {
  uint64_t bytes = UINT64_MAX;  // what the process may still take under it
  std::string what;  // e.g. "MemAvailable", "cgroup v2 memory.max (/sys/fs/cgroup/x)"
  uint64_t limit = 0;  // the limit's own figure (memory.max, MemTotal, ...); 0 if none
};

// Every limit that could be read; those that could not are left out.
struct HostMemoryReport {
  std::vector<HostMemoryLimit> limits;

  // The limit leaving the least (the first on a tie); nullptr when there are
  // none. Points into limits.
  const HostMemoryLimit* Binding() const;
  // Binding()'s bytes, or UINT64_MAX when no limit could be read.
  uint64_t Available() const;
};

// Where ReadHostMemoryAt looks; the defaults are the real system's.
struct HostMemoryPaths {
  std::string proc = "/proc";             // meminfo, self/cgroup, self/status
  std::string cgroup = "/sys/fs/cgroup";  // v2 root; v1 memory hierarchy under memory/
  // RLIMIT_AS's soft limit in bytes, UINT64_MAX for none; unset: getrlimit's.
  std::optional<uint64_t> rlimit_as;
};

// Reads, in this order: MemAvailable (of MemTotal) from <proc>/meminfo; the
// tightest level of the process's cgroup v2 and v1 memory hierarchies,
// counting inactive page cache as reclaimable; RLIMIT_AS less VmSize from
// <proc>/self/status. Unreadable or malformed files mean no such limit.
HostMemoryReport ReadHostMemoryAt(const HostMemoryPaths& paths);
HostMemoryReport ReadHostMemory();

// One phrase naming the need and the binding limit, e.g. "needs 14.6 GiB, and
// cgroup v2 memory.max (/sys/fs/cgroup/x) leaves 2.9 GiB of 3.0 GiB".
std::string DescribeShortfall(uint64_t need, const HostMemoryReport& report);
// What a limit leaves: "cgroup v2 memory.max (/sys/fs/cgroup/x) leaves
// 2.9 GiB of 3.0 GiB".
std::string DescribeLimit(const HostMemoryLimit& limit);

// ReadHostMemory().Available(), except 0 when no limit could be read (and at
// least 1 when one could, so a spent limit does not read as unknown).
uint64_t HostMemoryAvailable();

}  // namespace neuron

#endif  // NEURON_LIB_SUPPORT_HOST_MEMORY_H_
