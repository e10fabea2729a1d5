#include "lib/support/progress.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace neuron {
namespace {

enum class Mode { kOff, kTerminal, kLog };

std::mutex& ToolMutex() {
  static std::mutex mu;
  return mu;
}
std::string& ToolName() {
  static std::string name;
  return name;
}
std::atomic<Mode> g_mode{Mode::kOff};
// NEURON_TOOLS_PROGRESS=always: quick work is shown too (logs, tests).
std::atomic<bool> g_always{false};

constexpr auto kQuietStart = std::chrono::milliseconds(500);
constexpr auto kTerminalPeriod = std::chrono::milliseconds(100);
constexpr auto kLogPeriod = std::chrono::seconds(1);

}  // namespace

void Progress::EnableForTool(std::string_view tool, bool quiet) {
  {
    std::lock_guard<std::mutex> lock(ToolMutex());
    ToolName() = std::string(tool);
  }
  const char* env = std::getenv("NEURON_TOOLS_PROGRESS");
  const std::string_view setting = env != nullptr ? env : "";
  Mode mode = Mode::kOff;
  if (quiet || setting == "never") {
    mode = Mode::kOff;
  } else if (setting == "always") {
    mode = isatty(STDERR_FILENO) ? Mode::kTerminal : Mode::kLog;
  } else if (isatty(STDERR_FILENO)) {
    mode = Mode::kTerminal;
  }
  g_mode.store(mode);
  g_always.store(mode != Mode::kOff && setting == "always");
}

Progress::Progress(std::string_view what, uint64_t total)
    : what_(what), total_(total), start_(Clock::now()), last_draw_(start_) {}

Progress::~Progress() {
  // A terminal line is erased; a log keeps its lines.
  if (drawn_ && g_mode.load() == Mode::kTerminal) std::fputs("\r\033[K", stderr);
}

void Progress::Update(uint64_t done, std::string_view detail) {
  const Mode mode = g_mode.load();
  if (mode == Mode::kOff) return;
  const Clock::time_point now = Clock::now();
  if (!g_always.load() && now - start_ < kQuietStart) return;
  if (drawn_ && now - last_draw_ < (mode == Mode::kLog ? kLogPeriod : kTerminalPeriod) &&
      done != total_) {
    return;
  }
  last_draw_ = now;
  drawn_ = true;
  std::string tool;
  {
    std::lock_guard<std::mutex> lock(ToolMutex());
    tool = ToolName();
  }
  std::string line = absl::StrFormat("%s: %s", tool, what_);
  if (total_ > 0) {
    absl::StrAppendFormat(&line, ": %d/%d (%d%%)", done, total_, done * 100 / total_);
  } else {
    absl::StrAppendFormat(&line, ": %d", done);
  }
  if (!detail.empty()) absl::StrAppend(&line, " ", std::string(detail));
  if (mode == Mode::kTerminal) {
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

}  // namespace neuron
