// A NEFF loaded on one logical core: the deserialized program, its CPU
// executable, and its device memory (constants, model code, scratchpad)
// placed in the core's HBM arena. Executes with inputs and outputs in
// TensorBuffers, under NEURON_RT_EXEC_TIMEOUT, with the numerical-error
// checks of NEURON_RT_NUMERICAL_ERRORS_VERBOSITY / NEURON_FAIL_ON_NAN.
#ifndef NEURON_LIB_RUNTIME_MODEL_H_
#define NEURON_LIB_RUNTIME_MODEL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/device/hbm_arena.h"
#include "lib/hlo/shape.h"
#include "lib/program/manifest.h"
#include "neuron/nrt_status.h"

namespace neuron::kernels {
class CollectiveOps;
class HostFeed;
}  // namespace neuron::kernels

namespace neuron::runtime {

class Core;
class TensorBuffer;
struct ModelState;

// One input or output of the model, in HLO order (inputs: parameter
// number; outputs: the flattened result tuple).
struct TensorInfo {
  std::string name;   // the HLO parameter; the root (single result) or output<k>
  int position = 0;   // the k of #k
  hlo::Shape shape;   // array shape (type and dims)
  uint64_t bytes = 0;
  // Outputs: the input (position) it may share a buffer with, per the
  // model's input_output_alias: given the same tensor for both, the model
  // runs in place (a donated input); -1 where none.
  int aliased_input = -1;
  // Inputs: the parameter's pytree path as keys (manifest "path"); empty
  // where the HLO records none.
  std::vector<std::string> path;
};

struct LoadOptions {
  // Host threads an execution may use (0: the host's CPUs divided over the
  // held cores, at least 1).
  int threads = 0;
  // Names the NEFF in messages when loaded from bytes ("" = "NEFF").
  std::string display_name;
  // The file the bytes were read from, recorded in input and core dumps
  // ("" = loaded from memory).
  std::string source_path;
};

// Where load time went (milliseconds), for neuron-load.
struct LoadTimings {
  double read_ms = 0;         // map or read the file
  double hash_ms = 0;         // NEURON_RT_VALIDATE_HASH (0 when off)
  double decompress_ms = 0;   // header checks, decompression, archive parsing
  double deserialize_ms = 0;  // program and manifest
  double build_ms = 0;        // building the executable
  double place_ms = 0;        // device memory placement and constants
  double debug_info_ms = 0;   // the debug-information map (0 when skipped)
  double total_ms = 0;
};

// What the model costs in the core's HBM (bytes).
struct LoadCost {
  uint64_t weights = 0;      // constants
  uint64_t model_code = 0;   // the serialized program
  uint64_t scratchpad = 0;   // intermediates, in whole scratchpad pages
  uint64_t scratchpad_page = 0;  // page size in effect
  uint64_t largest_variable = 0; // the largest intermediate
  uint64_t intermediates = 0;    // the executor's buffers for them
  uint64_t planned_intermediates = 0;  // buffer assignment's peak (0: not recorded)
  uint64_t io_tensors = 0;   // inputs + outputs, allocated by the caller
  uint64_t peak = 0;         // all of the above at once
  // The NEFF's memory plan (its parts: inputs, outputs, outputs aliased to
  // inputs, scratch, constants), what the load was checked against.
  program::MemoryPlan plan;
  // The kernels' scratch: the most one step takes at once, from a workspace
  // shared by every step (on top of the plan).
  uint64_t workspace = 0;
};

struct ExecuteOptions {
  // Fail with NRT_QUEUE_FULL instead of waiting when the core already has
  // NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS requests in flight.
  bool nonblocking = false;
  // This execution's place in a multi-rank job: HLO collectives run over
  // `collectives` with replica id `replica_id` of `replica_count`. Unset:
  // a single device, where collectives are local.
  kernels::CollectiveOps* collectives = nullptr;
  int replica_id = 0;
  int replica_count = 1;
  // Infeed values and outfeed results (neuron-exec --infeed/--outfeed-dir).
  kernels::HostFeed* feed = nullptr;
};

struct ExecuteResult {
  // NRT_SUCCESS, or NRT_EXEC_COMPLETED_WITH_NUM_ERR when a result holds
  // NaN/Inf (outputs are written either way).
  NRT_STATUS status = NRT_SUCCESS;
  // The numerical report (empty when clean): which outputs hold NaN/Inf
  // and, at debug verbosity or above, the first HLO instruction that made one
  // (from the debug-information map; "unknown" under NEURON_RT_DISABLE_DEBUG_INFO).
  std::string numerical_report;
  // NEURON_FAIL_ON_NAN is set and the status is NUM_ERR: callers must fail.
  bool fail = false;
  uint64_t nanos = 0;
  // kernels::RunStats::loop_trips/loop_ns: the outermost loop's trips and
  // its own time (0: none).
  int64_t loop_trips = 0;
  int64_t loop_ns = 0;
};

class Model {
 public:
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  int core_id() const;
  const std::string& name() const;
  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  const LoadTimings& timings() const;
  const LoadCost& cost() const;
  // The NEFF's target ("trn1") and LNC.
  const std::string& target() const;
  // Entries of the debug-information map built at load; nullopt when
  // NEURON_RT_DISABLE_DEBUG_INFO skipped it.
  std::optional<size_t> debug_info_entries() const;

  // Runs once. inputs[i] holds input i (at least its bytes), outputs[j]
  // receives output j. Errors: NRT_INVALID for missing/short tensors,
  // NRT_TIMEOUT past NEURON_RT_EXEC_TIMEOUT (the model stays usable),
  // NRT_QUEUE_FULL (nonblocking), NRT_FAILURE for an execution failure.
  absl::StatusOr<ExecuteResult> Execute(const std::vector<const TensorBuffer*>& inputs,
                                        const std::vector<TensorBuffer*>& outputs,
                                        const ExecuteOptions& options = {});

 private:
  friend class Runtime;
  friend class ModelLoader;
  explicit Model(std::unique_ptr<ModelState> state);
  std::unique_ptr<ModelState> state_;
};

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_MODEL_H_
