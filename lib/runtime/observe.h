// Observing one execution for profiling (lib/profile) and failure
// forensics (lib/dump): Model::Execute makes one ExecutionObserver per
// execution; it costs nothing beyond a few branches unless a profile, an
// input dump or a core dump could be wanted.
//
// On a failing execution (an error status, or a numerical error under
// NEURON_FAIL_ON_NAN): input dumps (NEURON_RT_DBG_DUMP_INPUTS_ON_ERR), the
// core dump to NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY, and the hand-off to
// neuron-dump when NEURON_RT_S3_CORE_DUMP_PREFIX is set.
#ifndef NEURON_LIB_RUNTIME_OBSERVE_H_
#define NEURON_LIB_RUNTIME_OBSERVE_H_

#include <memory>
#include <string>
#include <vector>

#include "lib/kernels/executable.h"
#include "neuron/nrt_status.h"

namespace neuron::profile {
class Capture;
class Profiler;
}  // namespace neuron::profile

namespace neuron::runtime {

struct ModelState;
class TensorBuffer;

class ExecutionObserver : public kernels::StepObserver {
 public:
  ExecutionObserver(ModelState& state, const std::vector<const TensorBuffer*>& inputs,
                    const std::vector<TensorBuffer*>& outputs);
  ~ExecutionObserver() override;

  // The executor's per-step hook; nullptr when nothing needs it.
  kernels::StepObserver* steps() { return active_ ? this : nullptr; }
  void RunBegin();
  void RunEnd();
  // The execution's outcome. `failed`: the caller gets a failure.
  void Finish(NRT_STATUS status, bool failed, const std::string& message,
              const std::string& first_nonfinite);

  void StepBegin(const std::string& instruction) override;
  void StepEnd(const std::string& instruction) override;

 private:
  void WriteDumps(NRT_STATUS status, bool failed, const std::string& message,
                  const std::string& first_nonfinite);

  ModelState& s_;
  const std::vector<const TensorBuffer*>& inputs_;
  const std::vector<TensorBuffer*>& outputs_;
  profile::Profiler* profiler_ = nullptr;
  std::unique_ptr<profile::Capture> capture_;
  bool track_position_ = false;
  bool active_ = false;
  bool last_was_begin_ = false;
  // Fixed arrays: tracking allocates nothing per execution.
  static constexpr int kMaxDepth = 16;
  const std::string* stack_[kMaxDepth] = {};
  const std::string* position_[kMaxDepth] = {};
  int depth_ = 0, position_depth_ = 0;
  uint64_t steps_started_ = 0;
};

// A model is being unloaded: session profiles are written.
void ObserveUnload();

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_OBSERVE_H_
