// The runtime's C++ API: what nrt.h wraps and what the tools call directly
// (so they get whole error messages, not only status codes).
//
//   auto rt = Runtime::Init({});          // reads the environment once
//   auto model = rt->LoadFile("m.neff", rt->cores()[0]);
//   auto in = rt->AllocateTensor(core, bytes, "x");  ... model->Execute(...)
//
// Errors are absl::Status values carrying an NRT_STATUS (status.h); they are
// returned, not logged (the C API logs them, as libnrt does; the tools print
// them as their one error line). Reports that say more than a status (OOM
// breakdown, numerical errors that count as success) are logged.
#ifndef NEURON_LIB_RUNTIME_RUNTIME_H_
#define NEURON_LIB_RUNTIME_RUNTIME_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/config/config.h"
#include "lib/device/core_lock.h"
#include "lib/device/device_tree.h"
#include "lib/device/instance_catalog.h"
#include "lib/device/logical_cores.h"
#include "lib/runtime/core.h"
#include "lib/runtime/model.h"
#include "lib/runtime/tensor_buffer.h"

namespace neuron::runtime {

struct InitOptions {
  // Where variables come from (tests pass their own).
  config::EnvLookup env = config::ProcessEnv();
  // Logical cores to take, a subset of NEURON_RT_VISIBLE_CORES; unset =
  // every visible core (what nrt_init does). The tools take only the cores
  // they use, so several tools can run side by side.
  std::optional<std::vector<int>> cores;
  // With `cores` unset: take only the first visible core (or, for the
  // ranks of a job on one host, the visible_core_index-th).
  bool first_visible_core_only = false;
  size_t visible_core_index = 0;
  // With first_visible_core_only: take the first visible core no other
  // process holds, and name the holders only when every one is held (the
  // tools, when neither --cores nor NEURON_RT_VISIBLE_CORES chooses).
  bool first_free_core = false;
  // Apply NEURON_RT_LOG_* to the process logger and print the resolution's
  // diagnostics.
  bool configure_logging = true;
};

// What the environment makes of the instance, without taking any core:
// for the calls libnrt answers before nrt_init (core counts, instance).
struct PlatformView {
  const device::InstanceType* instance = nullptr;
  device::LogicalCoreMap core_map = *device::LogicalCoreMap::Create(1, 1, 1);
  std::vector<int> visible_cores;  // NEURON_RT_VISIBLE_CORES, resolved
};
absl::StatusOr<PlatformView> ProbePlatform(const config::EnvLookup& env);

class Runtime {
 public:
  // Resolves the configuration (a configuration that must fail nrt_init
  // fails here, with its status and one-line reason), opens the device
  // tree, and takes the cores exclusively: a core another process holds is
  // NRT_RESOURCE with "NeuronCore(s) not available - Requested:nc1-nc1
  // Available:0 (nc1 held by pid N: command)".
  static absl::StatusOr<std::unique_ptr<Runtime>> Init(InitOptions options);
  // Releases the cores and writes the final counters.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const config::Resolution& resolution() const { return resolution_; }
  const config::RuntimeConfig& config() const { return resolution_.config; }
  const device::InstanceType& instance() const { return *instance_; }
  const device::LogicalCoreMap& core_map() const { return core_map_; }
  const std::string& device_root() const { return tree_->root(); }
  // The logical cores held, ascending.
  const std::vector<int>& cores() const { return core_ids_; }
  // The held core with that logical id; NRT_INVALID naming the held ones.
  absl::StatusOr<Core*> GetCore(int logical_id);

  // Loads a NEFF file ("-" = stdin) or bytes on one held core.
  absl::StatusOr<std::unique_ptr<Model>> LoadFile(const std::string& path, int core,
                                                  const LoadOptions& options = {});
  absl::StatusOr<std::unique_ptr<Model>> LoadBytes(std::string_view bytes, int core,
                                                   const LoadOptions& options = {});

  // A device tensor of `size` bytes in the core's HBM.
  absl::StatusOr<std::unique_ptr<TensorBuffer>> AllocateTensor(int core, uint64_t size,
                                                               const std::string& name);

 private:
  Runtime() = default;

  config::Resolution resolution_;
  const device::InstanceType* instance_ = nullptr;
  device::LogicalCoreMap core_map_ = *device::LogicalCoreMap::Create(1, 1, 1);
  std::unique_ptr<device::SimDeviceTree> tree_;
  std::unique_ptr<device::CoreLease> lease_;
  std::vector<int> core_ids_;
  std::vector<std::unique_ptr<Core>> cores_;  // parallel to core_ids_
};

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_RUNTIME_H_
