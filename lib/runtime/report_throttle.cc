#include "lib/runtime/report_throttle.h"

namespace neuron::runtime {

bool ReportThrottle::Admit(Clock::time_point now, uint64_t* suppressed) {
  std::lock_guard<std::mutex> lock(mu_);
  if (last_.has_value() && interval_s_ > 0) {
    // Whole seconds elapsed, compared as integers: any interval up to
    // UINT64_MAX is valid and must not overflow a duration.
    const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(now - *last_).count();
    if (elapsed < 0 || static_cast<uint64_t>(elapsed) < interval_s_) {
      ++suppressed_;
      return false;
    }
  }
  last_ = now;
  if (suppressed != nullptr) *suppressed = suppressed_;
  suppressed_ = 0;
  return true;
}

uint64_t ReportThrottle::suppressed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return suppressed_;
}

}  // namespace neuron::runtime
