// One nrt_init .. nrt_close of a tool, on the cores it asked for. The cores
// are chosen as the SDK documents it: NEURON_RT_VISIBLE_CORES, set before
// nrt_init. A tool takes only the cores it uses, so several tools can share
// an instance:
//   - `cores` given (--cores): exactly those;
//   - else the `index`-th core of NEURON_RT_VISIBLE_CORES when the user set
//     it (a rank takes its local rank's core);
//   - else, with `first_free`, the first core whose nrt_init succeeds (one
//     another process holds fails with NRT_RESOURCE): nothing beyond the
//     SDK's functions is needed to find it.
#ifndef NEURON_LIB_NRT_CLIENT_RUNTIME_SESSION_H_
#define NEURON_LIB_NRT_CLIENT_RUNTIME_SESSION_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/nrt_client/runtime_library.h"

namespace neuron::nrt_client {

struct CoreChoice {
  std::optional<std::vector<int>> cores;  // --cores
  size_t index = 0;                       // which visible core without --cores
  bool first_free = false;                // try each core until one is free
};

class RuntimeSession {
 public:
  // Opens the library (RuntimeLibrary::Get), tells it the tool's name for
  // progress lines, and initializes it on the chosen cores. The error is
  // one line: "cannot initialize the runtime: ...".
  static absl::StatusOr<std::unique_ptr<RuntimeSession>> Open(const char* tool, bool quiet,
                                                              const CoreChoice& choice);
  ~RuntimeSession();  // nrt_close
  RuntimeSession(const RuntimeSession&) = delete;
  RuntimeSession& operator=(const RuntimeSession&) = delete;

  const RuntimeLibrary& library() const { return *library_; }
  const SdkFunctions& sdk() const { return library_->sdk(); }
  const ExtraFunctions& ext() const { return library_->ext(); }
  // The instance's ids of the held cores; vnc k of the C API is cores()[k].
  const std::vector<int>& cores() const { return cores_; }
  // The instance family as neuron-compile names targets ("trn1", "inf2",
  // ...); "" when the library does not say.
  const std::string& arch() const { return arch_; }

 private:
  explicit RuntimeSession(const RuntimeLibrary* library) : library_(library) {}
  const RuntimeLibrary* library_;
  std::vector<int> cores_;
  std::string arch_;
};

}  // namespace neuron::nrt_client

#endif  // NEURON_LIB_NRT_CLIENT_RUNTIME_SESSION_H_
