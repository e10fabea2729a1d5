// A hostile peer for tests: a process that connects to a listener of a job
// and misbehaves the way port scanners, health probes, misconfigured
// services and impostors do.
#ifndef NEURON_TESTS_COLLECTIVES_STRANGER_H_
#define NEURON_TESTS_COLLECTIVES_STRANGER_H_

#include <netinet/in.h>
#include <sys/types.h>

#include <string>

namespace neuron::collectives::testing {

enum class Stranger {
  kScan,     // connects and closes
  kGarbage,  // sends an HTTP request
  kIdle,     // connects and says nothing
  kDrip,     // sends the start of a hello, one byte every 300 ms
  kForged,   // answers the challenge with a well-formed hello claiming rank 1
};
const char* StrangerName(Stranger s);

// Forks a process that does `kind` to addr (a bootstrap listener of a job
// of `world` ranks), once, or again and again when `repeat`, for at most
// `seconds`; it dies with its parent. Returns its pid.
pid_t StartStranger(Stranger kind, const sockaddr_in& addr, int world, bool repeat,
                    double seconds);
// Kills and reaps it.
void StopStranger(pid_t pid);

}  // namespace neuron::collectives::testing

#endif  // NEURON_TESTS_COLLECTIVES_STRANGER_H_
