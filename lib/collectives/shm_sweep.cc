#include "lib/collectives/shm_sweep.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/log/log.h"

namespace neuron::collectives {
namespace {

constexpr std::string_view kPrefix = "neuron-cc-";

}  // namespace

std::string SegmentName(int leader_pid, unsigned long long nonce, int leader_rank) {
  char name[96];
  std::snprintf(name, sizeof(name), "/neuron-cc-%d-%016llx-%d", leader_pid, nonce, leader_rank);
  return name;
}

int SweepStaleSegments(const std::string& dir, std::chrono::seconds min_age) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return 0;
  int removed = 0;
  const time_t now = time(nullptr);
  while (dirent* e = readdir(d)) {
    const std::string name(e->d_name);
    if (name.compare(0, kPrefix.size(), kPrefix) != 0) continue;
    const std::string rest = name.substr(kPrefix.size());
    int pid = 0;
    if (!absl::SimpleAtoi(rest.substr(0, rest.find('-')), &pid) || pid <= 0) continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;  // its leader still runs
    const std::string path = absl::StrCat(dir, "/", name);
    struct stat st{};
    if (stat(path.c_str(), &st) != 0 || st.st_uid != geteuid()) continue;
    if (now - st.st_mtime < min_age.count()) continue;
    if (unlink(path.c_str()) == 0) {
      ++removed;
      NEURON_LOG(NRT, kInfo, "removed %s: shared memory of a job whose leader (pid %d) is gone",
                 path, pid);
    }
  }
  closedir(d);
  return removed;
}

}  // namespace neuron::collectives
