// Binding the arrays of tensor bundles (neuron-exec -i FILE.npz,
// -i FILE.safetensors) to a model's inputs: each array by its key, which
// names an input (its HLO parameter name, or #k) or gives its pytree path.
// Paths compare as key sequences whatever their spelling; a key sequence
// that is the whole path of one input, or the end of exactly one input's
// path, binds to it. Shape and type must match exactly (bf16 and fp8 may
// come as raw bits: an unsigned integer or void array of their width).
#ifndef NEURON_TOOLS_NEURON_EXEC_INPUT_BUNDLES_H_
#define NEURON_TOOLS_NEURON_EXEC_INPUT_BUNDLES_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/nrt_client/loaded_model.h"
#include "lib/tensorfile/tensor_file.h"

namespace neuron::exec_tool {

using nrt_client::TensorInfo;

// One input's values: array `array` of `file`.
struct BundleArray {
  std::shared_ptr<const tensorfile::TensorFile> file;
  size_t array = 0;
};

// Binds every array of `bundles`; result[k] is input k's array, if any.
// An error (one line) names the array and what is wrong: a key that binds
// nothing or several inputs, two arrays for one input, a shape or type that
// differs.
absl::StatusOr<std::vector<std::optional<BundleArray>>> BindBundles(
    const std::vector<std::shared_ptr<const tensorfile::TensorFile>>& bundles,
    const std::vector<TensorInfo>& inputs);

// "#3 'Arg_3.4' args[1]['params']['w'] bf16[4,8]": an input as messages name it.
std::string DescribeInput(const TensorInfo& input);

// The pytree path of an input as Python subscripts; "" where none.
std::string InputPath(const TensorInfo& input);

// Inputs not bound: "3 inputs are not given: #0 ..., #1 ..., #2 ..." with at
// most `shown` of them named.
std::string DescribeUnbound(const std::vector<TensorInfo>& inputs, const std::vector<size_t>& unbound,
                            size_t shown = 3);

}  // namespace neuron::exec_tool

#endif  // NEURON_TOOLS_NEURON_EXEC_INPUT_BUNDLES_H_
