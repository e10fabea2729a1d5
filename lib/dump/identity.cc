#include "lib/dump/identity.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <functional>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace neuron::dump {

std::string InstanceId() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const uint64_t h = std::hash<std::string>()(host) ^ static_cast<uint64_t>(gethostid());
  return absl::StrFormat("i-%017x", h & 0xfffffffffffffffull);
}

DumpIdentity CurrentIdentity() {
  static std::atomic<uint64_t> next_log_id{0};
  DumpIdentity id;
  id.time = absl::Now();
  id.pid = getpid();
  id.tid = static_cast<int64_t>(syscall(SYS_gettid));
  id.log_id = next_log_id.fetch_add(1);
  id.instance_id = InstanceId();
  return id;
}

std::string PathDateTime(absl::Time time) {
  return absl::FormatTime("%Y%m%d-%H%M%S", time, absl::UTCTimeZone());
}

std::string FlagDateTime(absl::Time time) {
  return absl::FormatTime("%Y-%m-%d-%H-%M", time, absl::UTCTimeZone());
}

std::string ExpandPathTemplate(std::string_view templ, const DumpIdentity& id) {
  std::string out;
  for (size_t i = 0; i < templ.size(); ++i) {
    if (templ[i] != '%' || i + 1 == templ.size()) {
      out.push_back(templ[i]);
      continue;
    }
    const char v = templ[++i];
    switch (v) {
      case 'd': out += PathDateTime(id.time); break;
      case 'c': out += id.cluster_id; break;
      case 'p': out += absl::StrFormat("%d", id.pid); break;
      case 't': out += absl::StrFormat("%d", id.tid); break;
      case 'l': out += absl::StrFormat("%d", id.log_id); break;
      case 'i': out += id.instance_id; break;
      case '%': out.push_back('%'); break;
      default:  // unknown: kept as written
        out.push_back('%');
        out.push_back(v);
    }
  }
  return out;
}

}  // namespace neuron::dump
