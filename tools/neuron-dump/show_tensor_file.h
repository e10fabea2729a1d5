// neuron-dump show for tensor files (.npy, .npz, safetensors): each
// array's key, shape, type and bytes, from the headers alone (a bundle of
// gigabytes is not read).
#ifndef NEURON_TOOLS_NEURON_DUMP_SHOW_TENSOR_FILE_H_
#define NEURON_TOOLS_NEURON_DUMP_SHOW_TENSOR_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "lib/tensorfile/tensor_file.h"
#include "nlohmann/json.hpp"

namespace neuron::dump {

// {"kind": "tensor-file", "file", "format", "arrays": [{key, dtype, shape,
// bytes, compressed}], "bytes"}.
nlohmann::json DescribeTensorFile(const tensorfile::TensorFile& file);

// The text of a DescribeTensorFile() result: a header line, then one line
// per array.
std::string FormatTensorFileText(const nlohmann::json& view);

}  // namespace neuron::dump

#endif  // NEURON_TOOLS_NEURON_DUMP_SHOW_TENSOR_FILE_H_
