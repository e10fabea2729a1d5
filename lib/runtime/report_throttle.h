// The rate limit of a repeated error report (NEURON_RT_MIN_MEM_ERROR_INTERVAL):
// at most one report per interval goes out; the ones in between are only
// counted, and the next report that goes out says how many were held back.
// So a flapping condition cannot flood the logs, and nothing is lost silently.
#ifndef NEURON_LIB_RUNTIME_REPORT_THROTTLE_H_
#define NEURON_LIB_RUNTIME_REPORT_THROTTLE_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>

namespace neuron::runtime {

class ReportThrottle {
 public:
  using Clock = std::chrono::steady_clock;

  // `interval_s` 0: every report goes out.
  explicit ReportThrottle(uint64_t interval_s) : interval_s_(interval_s) {}

  // Whether a report at `now` goes out. If it does, `*suppressed` gets the
  // number held back since the previous one (and the count restarts).
  bool Admit(Clock::time_point now, uint64_t* suppressed);

  uint64_t interval_s() const { return interval_s_; }
  // Reports held back since the last one that went out.
  uint64_t suppressed() const;

 private:
  const uint64_t interval_s_;
  mutable std::mutex mu_;
  std::optional<Clock::time_point> last_;  // guarded by mu_
  uint64_t suppressed_ = 0;                // guarded by mu_
};

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_REPORT_THROTTLE_H_
