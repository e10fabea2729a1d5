// Shared-memory segments a host's leader left behind. The leader creates
// /dev/shm/neuron-cc-<its pid>-<job nonce>-<rank> and unlinks it once every
// rank of its host mapped it; a leader killed in between leaves it there,
// holding memory until reboot. Leaders sweep such segments when they start.
#ifndef NEURON_LIB_COLLECTIVES_SHM_SWEEP_H_
#define NEURON_LIB_COLLECTIVES_SHM_SWEEP_H_

#include <chrono>
#include <string>

namespace neuron::collectives {

// The segment's name (for shm_open) for a leader.
std::string SegmentName(int leader_pid, unsigned long long nonce, int leader_rank);

// Removes this user's segments in `dir` whose leader process is gone and
// that were not touched for `min_age` (a leader in another PID namespace
// looks gone too, but its set-up is younger than that). Returns how many.
int SweepStaleSegments(const std::string& dir = "/dev/shm",
                       std::chrono::seconds min_age = std::chrono::seconds(600));

}  // namespace neuron::collectives

#endif  // NEURON_LIB_COLLECTIVES_SHM_SWEEP_H_
