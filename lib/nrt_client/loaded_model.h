// A NEFF loaded through nrt_load on one core of a session, with its inputs
// and outputs as nrt_get_model_tensor_info describes them (names, shapes,
// sizes; element types mapped from nrt_dtype_t). Where the library has the
// project's extras, nrt_tools_describe_model adds what the SDK's enum and
// struct cannot carry: exact element types (pred, f64, complex), positions,
// pytree key paths, donated inputs, and the load report (plan, cost,
// timings), kept in `description`. Unloaded when destroyed.
#ifndef NEURON_LIB_NRT_CLIENT_LOADED_MODEL_H_
#define NEURON_LIB_NRT_CLIENT_LOADED_MODEL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/hlo/shape.h"
#include "lib/nrt_client/model_input.h"
#include "lib/nrt_client/runtime_session.h"
#include "nlohmann/json.hpp"

namespace neuron::nrt_client {

struct TensorInfo {
  std::string name;
  int position = 0;  // the k of #k
  // Element type and dims; kInvalid where nrt_dtype_t has no value for the
  // type and the library has no extras to name it.
  hlo::Shape shape;
  uint64_t bytes = 0;
  // Outputs: the input (position) it may share a buffer with; -1 where
  // none or unknown.
  int aliased_input = -1;
  // Inputs: the parameter's pytree path as keys; empty where unknown.
  std::vector<std::string> path;
};

// The element type nrt_dtype_t names (kInvalid for NRT_DTYPE_UNKNOWN).
hlo::ElementType ElementTypeOfNrtDtype(nrt_dtype_t dtype);

// Where a model loaded for a collectives job stands (nrt_load_collectives):
// this process is global device `device` of `devices`.
struct CollectiveLoad {
  uint32_t device = 0;
  uint32_t devices = 1;
};

class LoadedModel {
 public:
  // Loads the input's NEFF on vnc `vnc` of the session; its display name
  // and file go to the library's messages, progress and dumps (where it has
  // the extras). With
  // `collective`, loaded with nrt_load_collectives. A failure is
  // "<message> (NRT_NAME)".
  static absl::StatusOr<std::unique_ptr<LoadedModel>> Load(
      const RuntimeSession& session, const ModelInput& input, int vnc,
      const CollectiveLoad* collective = nullptr);
  ~LoadedModel();  // nrt_unload
  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;

  nrt_model_t* handle() const { return model_; }
  int vnc() const { return vnc_; }
  int core() const { return core_; }  // the instance's id (ncN)
  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  const std::vector<TensorInfo>& outputs() const { return outputs_; }
  // nrt_tools_describe_model's document; unset without the extras.
  const std::optional<nlohmann::json>& description() const { return description_; }
  // The model's name (from the extras), else "".
  std::string name() const;
  double load_wall_ms() const { return load_wall_ms_; }  // nrt_load as the tool timed it

 private:
  LoadedModel(const RuntimeSession& session, nrt_model_t* model, int vnc)
      : session_(session), model_(model), vnc_(vnc) {}
  absl::Status ReadTensorInfo();
  const RuntimeSession& session_;
  nrt_model_t* model_;
  int vnc_;
  int core_ = 0;
  std::vector<TensorInfo> inputs_, outputs_;
  std::optional<nlohmann::json> description_;
  double load_wall_ms_ = 0;
};

}  // namespace neuron::nrt_client

#endif  // NEURON_LIB_NRT_CLIENT_LOADED_MODEL_H_
