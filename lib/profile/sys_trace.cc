#include "lib/profile/sys_trace.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

namespace neuron::profile {
namespace {

// The open recorders. Hooks run on every load, execution and transfer, so
// the common case (none open) is one relaxed atomic load.
std::atomic<int> g_open{0};
std::mutex& OpenMutex() {
  static std::mutex mu;
  return mu;
}
std::vector<SysTrace*>& OpenTraces() {
  static auto* traces = new std::vector<SysTrace*>();
  return *traces;
}
std::atomic<uint64_t> g_seq{0};

}  // namespace

const std::vector<std::string>& SysTraceEventTypes() {
  static const std::vector<std::string> kTypes = {"load",   "unload", "exec",
                                                  "tensor", "memory", "cc_running"};
  return kTypes;
}

bool IsSysTraceEventType(std::string_view type) {
  const auto& t = SysTraceEventTypes();
  return std::find(t.begin(), t.end(), type) != t.end();
}

SysTrace::SysTrace(SysTraceOptions options) : options_(std::move(options)) {}

SysTrace::~SysTrace() { Close(); }

void SysTrace::Open() {
  std::lock_guard<std::mutex> lock(OpenMutex());
  auto& open = OpenTraces();
  if (std::find(open.begin(), open.end(), this) != open.end()) return;
  open.push_back(this);
  g_open.store(static_cast<int>(open.size()));
}

void SysTrace::Close() {
  std::lock_guard<std::mutex> lock(OpenMutex());
  auto& open = OpenTraces();
  open.erase(std::remove(open.begin(), open.end(), this), open.end());
  g_open.store(static_cast<int>(open.size()));
}

bool SysTrace::Wants(std::string_view type, int core) const {
  return !options_.disabled_cores.count(core) && !options_.disabled_types.count(std::string(type));
}

void SysTrace::Add(const SysEvent& event) {
  std::lock_guard<std::mutex> lock(mu_);
  std::deque<SysEvent>& ring = rings_[event.core];
  if (options_.max_events_per_nc != 0 && ring.size() >= options_.max_events_per_nc) {
    ring.pop_front();
    ++dropped_[event.core];
  }
  ring.push_back(event);
}

std::vector<SysEvent> SysTrace::Take(std::optional<int> core, uint64_t max_per_core) {
  std::vector<SysEvent> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [c, ring] : rings_) {
    if (core.has_value() && c != *core) continue;
    const size_t n = max_per_core == 0 ? ring.size() : std::min<size_t>(ring.size(), max_per_core);
    std::move(ring.begin(), ring.begin() + n, std::back_inserter(out));
    ring.erase(ring.begin(), ring.begin() + n);
  }
  std::sort(out.begin(), out.end(),
            [](const SysEvent& a, const SysEvent& b) { return a.seq < b.seq; });
  return out;
}

std::map<int, uint64_t> SysTrace::Dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

bool SysTraceWanted(std::string_view type) {
  if (g_open.load(std::memory_order_relaxed) == 0) return false;
  std::lock_guard<std::mutex> lock(OpenMutex());
  for (const SysTrace* t : OpenTraces()) {
    if (!t->options().disabled_types.count(std::string(type))) return true;
  }
  return false;
}

void RecordSysEvent(SysEvent event) {
  if (g_open.load(std::memory_order_relaxed) == 0) return;
  event.seq = g_seq.fetch_add(1) + 1;
  if (event.thread_id == 0) event.thread_id = static_cast<uint64_t>(syscall(SYS_gettid));
  if (event.end_ns < event.begin_ns) event.end_ns = event.begin_ns;
  std::lock_guard<std::mutex> lock(OpenMutex());
  for (SysTrace* t : OpenTraces()) {
    if (t->Wants(event.type, event.core)) t->Add(event);
  }
}

std::string SysEventsJson(const std::vector<SysEvent>& events,
                          const std::map<int, uint64_t>& dropped) {
  nlohmann::json list = nlohmann::json::array();
  for (const SysEvent& e : events) {
    list.push_back({{"seq", e.seq},
                    {"type", e.type},
                    {"name", e.name},
                    {"nc_idx", e.core},
                    {"begin_ns", e.begin_ns},
                    {"end_ns", e.end_ns},
                    {"thread_id", e.thread_id},
                    {"args", e.args}});
  }
  nlohmann::json doc = {{"events", std::move(list)}};
  nlohmann::json d = nlohmann::json::object();
  for (const auto& [core, n] : dropped) d[std::to_string(core)] = n;
  doc["dropped_per_nc"] = std::move(d);
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace neuron::profile
