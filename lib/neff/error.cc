#include "lib/neff/error.h"

#include <cstdlib>
#include <optional>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace neff {
namespace {

constexpr char kNrtStatusPayloadUrl[] = "neuron-tools/nrt_status";

absl::StatusCode CanonicalCode(NRT_STATUS code) {
  switch (code) {
    case NRT_INVALID:
      return absl::StatusCode::kInvalidArgument;
    case NRT_UNSUPPORTED_NEFF_VERSION:
      return absl::StatusCode::kFailedPrecondition;
    case NRT_FAIL_HOST_MEM_ALLOC:
      return absl::StatusCode::kResourceExhausted;
    default:
      return absl::StatusCode::kUnknown;
  }
}

}  // namespace

absl::Status NeffError(NRT_STATUS code, const std::string& message) {
  absl::Status status(CanonicalCode(code), message);
  status.SetPayload(kNrtStatusPayloadUrl, absl::Cord(absl::StrCat(static_cast<int>(code))));
  return status;
}

NRT_STATUS NrtStatusOf(const absl::Status& status) {
  if (status.ok()) return NRT_SUCCESS;
  auto payload = status.GetPayload(kNrtStatusPayloadUrl);
  if (!payload) return NRT_FAILURE;
  return static_cast<NRT_STATUS>(std::atoi(std::string(*payload).c_str()));
}

absl::Status WithContext(const absl::Status& status, const std::string& context) {
  if (status.ok()) return status;
  absl::Status out(status.code(), absl::StrCat(context, ": ", status.message()));
  status.ForEachPayload([&out](absl::string_view url, const absl::Cord& value) {
    out.SetPayload(url, value);
  });
  return out;
}

}  // namespace neff
