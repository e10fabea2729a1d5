#include "lib/support/host_memory.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>

namespace neuron {
namespace {

uint64_t MemAvailable() {
  FILE* f = std::fopen("/proc/meminfo", "r");
  if (f == nullptr) return 0;
  uint64_t bytes = 0;
  char line[256];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long long kib = 0;
    if (std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
      bytes = static_cast<uint64_t>(kib) * 1024;
      break;
    }
  }
  std::fclose(f);
  return bytes;
}

bool ReadNumber(const std::string& path, uint64_t* out) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return false;
  try {
    *out = std::stoull(text);
  } catch (...) {
    return false;
  }
  return true;
}

// memory.max - memory.current of the cgroup named by "0::/path".
uint64_t CgroupHeadroom() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) != 0) continue;
    const std::string dir = "/sys/fs/cgroup" + line.substr(3);
    uint64_t max = 0, current = 0;
    if (ReadNumber(dir + "/memory.max", &max) && ReadNumber(dir + "/memory.current", &current)) {
      return max > current ? max - current : 1;
    }
  }
  return std::numeric_limits<uint64_t>::max();
}

}  // namespace

uint64_t HostMemoryAvailable() {
  const uint64_t host = MemAvailable();
  const uint64_t cgroup = CgroupHeadroom();
  if (host == 0) return cgroup == std::numeric_limits<uint64_t>::max() ? 0 : cgroup;
  return host < cgroup ? host : cgroup;
}

}  // namespace neuron
