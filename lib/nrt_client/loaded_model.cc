#include "lib/nrt_client/loaded_model.h"

#include <chrono>

#include "absl/strings/str_format.h"
#include "lib/program/dtype.h"

namespace neuron::nrt_client {

hlo::ElementType ElementTypeOfNrtDtype(nrt_dtype_t dtype) {
  using hlo::ElementType;
  switch (dtype) {
    case NRT_DTYPE_FP8_E3: return ElementType::kF8E3M4;
    case NRT_DTYPE_FP8_E4: return ElementType::kF8E4M3FN;
    case NRT_DTYPE_FP8_E5: return ElementType::kF8E5M2;
    case NRT_DTYPE_FLOAT16: return ElementType::kF16;
    case NRT_DTYPE_BFLOAT16: return ElementType::kBF16;
    case NRT_DTYPE_FLOAT32: return ElementType::kF32;
    case NRT_DTYPE_UINT8: return ElementType::kU8;
    case NRT_DTYPE_UINT16: return ElementType::kU16;
    case NRT_DTYPE_UINT32: return ElementType::kU32;
    case NRT_DTYPE_UINT64: return ElementType::kU64;
    case NRT_DTYPE_INT8: return ElementType::kS8;
    case NRT_DTYPE_INT16: return ElementType::kS16;
    case NRT_DTYPE_INT32: return ElementType::kS32;
    case NRT_DTYPE_INT64: return ElementType::kS64;
    default: return ElementType::kInvalid;  // UNKNOWN, and FP32R (no HLO type)
  }
}

absl::StatusOr<std::unique_ptr<LoadedModel>> LoadedModel::Load(const RuntimeSession& session,
                                                               const ModelInput& input, int vnc,
                                                               const CollectiveLoad* collective) {
  const std::string_view neff = input.neff();
  const SdkFunctions& sdk = session.sdk();
  if (session.ext().set_load_name != nullptr) {
    session.ext().set_load_name(input.display.c_str(), input.path.c_str());
  }
  nrt_model_t* handle = nullptr;
  const auto start = std::chrono::steady_clock::now();
  const NRT_STATUS s =
      collective != nullptr
          ? sdk.load_collectives(neff.data(), neff.size(), vnc, -1, collective->device,
                                 collective->devices, &handle)
          : sdk.load(neff.data(), neff.size(), vnc, -1, &handle);
  const auto end = std::chrono::steady_clock::now();
  if (s != NRT_SUCCESS) {
    return absl::InvalidArgumentError(
        session.library().Describe(s, collective != nullptr ? "nrt_load_collectives" : "nrt_load"));
  }
  auto model = std::unique_ptr<LoadedModel>(new LoadedModel(session, handle, vnc));
  model->load_wall_ms_ = std::chrono::duration<double, std::milli>(end - start).count();
  model->core_ = static_cast<size_t>(vnc) < session.cores().size() ? session.cores()[vnc] : vnc;
  if (absl::Status st = model->ReadTensorInfo(); !st.ok()) return st;
  return model;
}

absl::Status LoadedModel::ReadTensorInfo() {
  const SdkFunctions& sdk = session_.sdk();
  nrt_tensor_info_array_t* array = nullptr;
  if (NRT_STATUS s = sdk.get_model_tensor_info(model_, &array); s != NRT_SUCCESS) {
    return absl::InternalError(session_.library().Describe(s, "nrt_get_model_tensor_info"));
  }
  for (uint64_t i = 0; i < array->tensor_count; ++i) {
    const nrt_tensor_info_t& t = array->tensor_array[i];
    std::vector<TensorInfo>* list = t.usage == NRT_TENSOR_USAGE_INPUT    ? &inputs_
                                    : t.usage == NRT_TENSOR_USAGE_OUTPUT ? &outputs_
                                                                         : nullptr;
    if (list == nullptr) continue;
    TensorInfo info;
    info.name = std::string(t.name, strnlen(t.name, sizeof t.name));
    info.position = static_cast<int>(list->size());
    info.bytes = t.size;
    std::vector<int64_t> dims;
    for (uint32_t d = 0; d < t.ndim && t.shape != nullptr; ++d) dims.push_back(t.shape[d]);
    info.shape = hlo::Shape::Array(ElementTypeOfNrtDtype(t.dtype), dims);
    list->push_back(std::move(info));
  }
  sdk.free_model_tensor_info(array);

  // The extras: exact types, positions, paths, donations, the load report.
  const ExtraFunctions& ext = session_.ext();
  if (ext.describe_model == nullptr) return absl::OkStatus();
  char* text = nullptr;
  if (ext.describe_model(model_, &text) != NRT_SUCCESS || text == nullptr) return absl::OkStatus();
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  ext.free(text);
  if (doc.is_discarded()) return absl::OkStatus();
  auto refine = [](const nlohmann::json& list, std::vector<TensorInfo>& infos) {
    if (!list.is_array() || list.size() != infos.size()) return;
    for (size_t k = 0; k < infos.size(); ++k) {
      const nlohmann::json& t = list[k];
      TensorInfo& info = infos[k];
      if (t.value("name", std::string()) != info.name) continue;
      info.position = t.value("position", info.position);
      if (std::optional<hlo::ElementType> type = program::DtypeFromName(t.value("dtype", std::string()))) {
        info.shape.type = *type;
      }
      info.aliased_input = t.value("aliased_input", -1);
      info.path = t.value("path", std::vector<std::string>());
    }
  };
  refine(doc["inputs"], inputs_);
  refine(doc["outputs"], outputs_);
  description_ = std::move(doc);
  return absl::OkStatus();
}

std::string LoadedModel::name() const {
  return description_.has_value() ? description_->value("name", std::string()) : std::string();
}

LoadedModel::~LoadedModel() { session_.sdk().unload(model_); }

}  // namespace neuron::nrt_client
