// Observing one execution for profiling (lib/profile) and failure
// forensics (lib/dump): Model::Execute makes one ExecutionObserver per
// execution; it costs nothing beyond a few branches unless a profile, an
// input dump or a core dump could be wanted. The Observe* hooks feed the
// system trace (lib/profile/sys_trace.h) and the C API's profilers with
// loads, unloads, device tensor transfers and device memory.
//
// On a failing execution (an error status, or a numerical error under
// NEURON_FAIL_ON_NAN): input dumps (NEURON_RT_DBG_DUMP_INPUTS_ON_ERR), the
// core dump to NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY, and the hand-off to
// neuron-dump when NEURON_RT_S3_CORE_DUMP_PREFIX is set.
#ifndef NEURON_LIB_RUNTIME_OBSERVE_H_
#define NEURON_LIB_RUNTIME_OBSERVE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "lib/device/memory_category.h"
#include "lib/kernels/executable.h"
#include "lib/runtime/memory_metrics.h"
#include "neuron/nrt_status.h"

namespace neuron::profile {
class Capture;
class Profiler;
}  // namespace neuron::profile

namespace neuron::runtime {

class Model;
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
  // Every profiler this execution goes to, each with its capture.
  std::vector<std::pair<std::shared_ptr<profile::Profiler>, std::unique_ptr<profile::Capture>>>
      captures_;
  // System trace: the execution's span, and collectives inside it.
  bool sys_exec_ = false;
  int64_t begin_ns_ = 0, run_begin_ns_ = 0, run_end_ns_ = 0;
  std::shared_ptr<const std::unordered_set<std::string>> collectives_;
  std::vector<std::pair<const std::string*, int64_t>> cc_open_;
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

// A model was loaded / is about to be unloaded (system trace "load" and
// "unload", and its device memory for nrt_trace_start(trace_mem)).
// ObserveUnload(state) also writes session profiles.
void ObserveLoad(const ModelState& state);
void ObserveUnload(const ModelState& state);

// A transfer to, from or within device memory (system trace "tensor"):
// records `op` on the core of the first device tensor of `a`, `b` when it
// goes out of scope. Host-only copies are not recorded. Copies between host
// and device memory (tensor_write, tensor_read, tensor_copy of a host and a
// device tensor) are also DMA for the session device profiles.
class TensorOpScope {
 public:
  TensorOpScope(const char* op, const TensorBuffer* a, const TensorBuffer* b, uint64_t bytes);
  ~TensorOpScope();
  TensorOpScope(const TensorOpScope&) = delete;
  TensorOpScope& operator=(const TensorOpScope&) = delete;

 private:
  const char* op_;
  const TensorBuffer* tensor_ = nullptr;
  uint64_t bytes_;
  int64_t begin_ns_ = 0;
  const TensorBuffer* dma_tensor_ = nullptr;  // the device side of a DMA copy
  bool to_device_ = false;
};

// What identifies a loaded model to profilers (ExecutionInfo::model_key),
// for profiles of one model's executions (nrt_profile_start).
const void* ProfileKey(const Model& model);

// A device tensor's memory was allocated or is about to be freed (system
// trace "memory", nrt_trace_start(trace_mem)). Host memory is ignored.
void ObserveDeviceMemory(const TensorBuffer& tensor, bool alloc);

// A metric of NEURON_RT_ENABLE_MEMORY_METRICS: an allocation or free of
// `bytes` of `category` on `core`, and the category's counters after it
// (system trace "memory" event "memory_metric").
void ObserveMemoryMetric(int core, device::MemoryCategory category, uint64_t bytes, bool alloc,
                         const CategoryMetrics& after);

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_OBSERVE_H_
