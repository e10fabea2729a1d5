#include "lib/runtime/status.h"

#include "absl/strings/str_cat.h"

namespace neuron::runtime {

std::string DescribeForCli(const absl::Status& status) {
  NRT_STATUS code = NrtStatusOf(status);
  return absl::StrCat(status.message(), " (", nrt_get_status_name(code), ")");
}

}  // namespace neuron::runtime
