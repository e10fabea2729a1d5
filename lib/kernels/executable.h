// Executing an HLO module on the host CPU. Build() checks that every
// operator is supported, plans buffers (allocated once, reused by every
// execution) and pre-binds a kernel to each instruction; Run() then only
// walks the list of steps. Any verified module runs: optimized modules
// (fusions, converts) take the fast paths, the rest runs op by op.
#ifndef NEURON_LIB_KERNELS_EXECUTABLE_H_
#define NEURON_LIB_KERNELS_EXECUTABLE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/hlo/module.h"
#include "lib/kernels/collectives.h"
#include "lib/kernels/device_print.h"
#include "lib/kernels/host_feed.h"
#include "lib/kernels/tensor.h"

namespace neuron::kernels {

// Where the executable's buffers live; the runtime may place them in its
// device-memory arena. The default uses 64-byte aligned host memory.
class BufferAllocator {
 public:
  virtual ~BufferAllocator() = default;
  virtual void* Allocate(size_t bytes) = 0;
  virtual void Free(void* ptr, size_t bytes) = 0;
};

// The bytes of a constant whose values live outside the module (a NEFF's
// constants/ member), row-major; nullptr when there are none. Returned
// memory must outlive the executable and is never written.
using ExternalConstantFn = std::function<const uint8_t*(const hlo::Instruction&)>;

struct BuildOptions {
  BufferAllocator* allocator = nullptr;  // nullptr: aligned host memory
  // Constants with an elided literal are read from here. 64-byte aligned
  // bytes are used in place (zero copy: a mapped NEFF's weights are never
  // touched at load); others are copied once.
  ExternalConstantFn external_constant;
};

// Optional per-step hooks (profiling, core-dump program position): called
// around every step, named after its HLO instruction, nested for the steps
// of called computations. Unset, a run pays one pointer test per step.
class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual void StepBegin(const std::string& instruction) = 0;
  virtual void StepEnd(const std::string& instruction) = 0;
};

struct ExecOptions {
  int threads = 2;
  const std::atomic<bool>* cancel = nullptr;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  bool stochastic_rounding = false;
  uint64_t sr_seed = 0;
  // What the GetRngSeed custom-call returns: one value per execution.
  uint64_t rng_seed = 0;
  int replica_id = 0;
  int partition_id = 0;
  int replica_count = 1;
  CollectiveOps* collectives = nullptr;  // nullptr: a single device
  // Check every instruction's result for NaN/Inf and name the first one
  // that produced any (slower; for debug verbosity).
  bool find_first_nonfinite = false;
  StepObserver* observer = nullptr;
  // Where neuron.device_print values go; nullptr: nowhere.
  DevicePrinter* printer = nullptr;
  // Infeed values and outfeed results; nullptr: a model with infeed or
  // outfeed fails when it reaches one.
  HostFeed* feed = nullptr;
  // Per input (as Run's inputs): the runtime's version of its contents,
  // which it changes whenever the bytes may have changed (0 or missing:
  // unknown). See Buf::version.
  std::span<const uint64_t> input_versions;
};

struct RunStats {
  bool has_nonfinite = false;              // some output holds NaN or Inf
  std::string first_nonfinite_instruction; // with find_first_nonfinite
  // Trips of the outermost while loop that made the most (a generate loop:
  // one a token), and the time that loop took, from its start to its end
  // (what ran before it, a prompt's prefill, is not in it); 0 when the
  // program ran no loop.
  int64_t loop_trips = 0;
  int64_t loop_ns = 0;
};

struct MemoryUsage {
  int64_t constants = 0;
  int64_t intermediates = 0;
  // The kernels' scratch, taken step by step from one workspace: the most
  // one step takes (the workspace grows to it as the steps run).
  int64_t workspace = 0;
  int64_t inputs = 0;
  int64_t outputs = 0;
};

class Executable {
 public:
  ~Executable();

  // Fails naming the instruction, its computation and the unsupported
  // opcode, element type or custom-call target.
  static absl::StatusOr<std::unique_ptr<Executable>> Build(const hlo::Module& module,
                                                           const BuildOptions& options = {});

  // One Run at a time per Executable (its buffers are reused); different
  // Executables may run concurrently (e.g. one per simulated device).
  // inputs: the entry parameters in order, tuple parameters flattened
  // depth-first. outputs: the result leaves depth-first (reused when they
  // already have the right shapes). Errors: InvalidArgument for bad inputs,
  // DeadlineExceeded on timeout, Cancelled on cancel.
  absl::Status Run(std::span<const Tensor> inputs, std::vector<Tensor>* outputs,
                   const ExecOptions& options, RunStats* stats = nullptr);

  // Expected inputs and produced outputs (leaves, depth-first).
  const std::vector<Tensor>& input_specs() const;
  const std::vector<Tensor>& output_specs() const;
  MemoryUsage memory() const;
  // The input leaf that output leaf `output` is, unchanged (the program
  // returns the parameter itself, as a train or predict step returns its
  // state), or -1. Where the caller gives that input's own bytes as the
  // output, a run leaves them as they were.
  int PassedThroughInput(size_t output) const;

  struct Impl;

 private:
  explicit Executable(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_EXECUTABLE_H_
