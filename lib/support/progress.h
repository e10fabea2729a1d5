// Progress of long work (compiling a large module, loading a large NEFF, a
// benchmark sweep) as one line on stderr, redrawn in place:
//   neuron-compile: compiling gemma: pass 7/18 (38%) elementwise-fusion
// It is drawn only when a tool turned it on (library callers such as libnrt
// users never see it), stderr is a terminal, the user did not pass
// --quiet, and the work has run for over half a second (quick work prints
// nothing). NEURON_TOOLS_PROGRESS=always draws it in logs as well (one
// plain line per second), =never turns it off.
#ifndef NEURON_LIB_SUPPORT_PROGRESS_H_
#define NEURON_LIB_SUPPORT_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace neuron {

class Progress {
 public:
  // Called by a tool's main: its name prefixes the line; `quiet` (from
  // --quiet) turns progress off.
  static void EnableForTool(std::string_view tool, bool quiet);

  // `what` names the work ("compiling NAME"); `total` steps (0: unknown).
  Progress(std::string_view what, uint64_t total);
  ~Progress();  // erases the line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` steps finished; `detail` says what is being done now.
  void Update(uint64_t done, std::string_view detail = "");

 private:
  using Clock = std::chrono::steady_clock;
  std::string what_;
  uint64_t total_;
  Clock::time_point start_, last_draw_;
  bool drawn_ = false;
};

}  // namespace neuron

#endif  // NEURON_LIB_SUPPORT_PROGRESS_H_
