#include "tools/neuron-dump/show_tensor_file.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace neuron::dump {

using nlohmann::json;

json DescribeTensorFile(const tensorfile::TensorFile& file) {
  json arrays = json::array();
  uint64_t total = 0;
  for (const tensorfile::ArrayInfo& a : file.arrays()) {
    // The type the array holds where the file says it; raw bits keep the
    // file's spelling ("|V2": typed by the input it binds to).
    const std::string type = a.dtype.type != hlo::ElementType::kInvalid
                                 ? std::string(hlo::ElementTypeName(a.dtype.type))
                                 : a.dtype.spelled;
    arrays.push_back({{"key", a.key},
                      {"dtype", type},
                      {"stored_as", a.dtype.spelled},
                      {"shape", a.dims},
                      {"bytes", a.bytes},
                      {"compressed", a.compressed}});
    total += a.bytes;
  }
  return json{{"kind", "tensor-file"},
              {"file", file.display()},
              {"format", std::string(tensorfile::FormatName(file.format()))},
              {"arrays", arrays},
              {"bytes", total}};
}

std::string FormatTensorFileText(const json& v) {
  const json& arrays = v["arrays"];
  std::string out = absl::StrFormat("%s   %s, %d array%s, %d bytes of data\n", v["file"].get<std::string>(),
                                    v["format"].get<std::string>(), arrays.size(),
                                    arrays.size() == 1 ? "" : "s", v["bytes"].get<uint64_t>());
  for (const json& a : arrays) {
    const std::string key = a["key"].get<std::string>();
    absl::StrAppend(&out, absl::StrFormat("  %-40s %s[%s]  %d bytes%s%s\n", key.empty() ? "(array)" : key,
                                          a["dtype"].get<std::string>(),
                                          absl::StrJoin(a["shape"].get<std::vector<int64_t>>(), ","),
                                          a["bytes"].get<uint64_t>(),
                                          a["stored_as"] == a["dtype"] ? " (raw bytes, typed by what they bind to)" : "",
                                          a["compressed"].get<bool>() ? ", deflated" : ""));
  }
  return out;
}

}  // namespace neuron::dump
