#include "lib/support/writer_tag.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>

#include "absl/strings/str_format.h"

namespace neuron {
namespace {

// FNV-1a of the host name, 8 hex digits: short enough for file names.
const std::string& HostHash() {
  static const std::string hash = [] {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    uint32_t h = 2166136261u;
    for (const char* c = host; *c != '\0'; ++c) h = (h ^ static_cast<uint8_t>(*c)) * 16777619u;
    return absl::StrFormat("%08x", h);
  }();
  return hash;
}

}  // namespace

std::string WriterTag() { return absl::StrFormat("%s.%d", HostHash(), getpid()); }

bool WriterGone(std::string_view tag) {
  const std::string& host = HostHash();
  if (tag.size() <= host.size() + 1 || tag.substr(0, host.size()) != host ||
      tag[host.size()] != '.') {
    return false;
  }
  const std::string_view digits = tag.substr(host.size() + 1);
  int pid = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (ec != std::errc() || end != digits.data() + digits.size() || pid <= 0 || pid == getpid()) {
    return false;
  }
  return kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace neuron
