#include "tools/neuron-exec/input_bundles.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/literal_io/literal_text.h"
#include "lib/tensorfile/key_path.h"

namespace neuron::exec_tool {

using literal_io::FormatTensorType;
namespace {

using tensorfile::ArrayInfo;
using tensorfile::KeyPath;
using tensorfile::TensorFile;

absl::Status Bad(const TensorFile& file, size_t i, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", file.Where(i), what));
}

// "#k": the k-th input.
std::optional<size_t> ByPosition(std::string_view key, size_t count) {
  if (key.size() < 2 || key[0] != '#') return std::nullopt;
  size_t k = 0;
  for (char c : key.substr(1)) {
    if (c < '0' || c > '9' || k > count) return std::nullopt;
    k = k * 10 + static_cast<size_t>(c - '0');
  }
  if (k >= count) return std::nullopt;
  return k;
}

// The input a key binds to: by name, by #k, by its whole path, or by the
// end of exactly one input's path.
absl::StatusOr<size_t> MatchKey(const TensorFile& file, size_t i, const std::vector<TensorInfo>& inputs) {
  const std::string& key = file.arrays()[i].key;
  if (key.empty()) {
    return Bad(file, i, "a single .npy array has no key: give it as --input NAME=FILE.npy");
  }
  std::string_view name = key;
  if (name[0] == '%') name.remove_prefix(1);
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k].name == name) return k;
  }
  if (std::optional<size_t> k = ByPosition(key, inputs.size())) return *k;
  std::optional<KeyPath> keys = tensorfile::ParseKeyPath(key);
  std::vector<size_t> ends;
  if (keys.has_value()) {
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (inputs[k].path == *keys) return k;
      if (tensorfile::IsSuffix(*keys, inputs[k].path)) ends.push_back(k);
    }
  }
  if (ends.size() == 1) return ends[0];
  if (ends.empty()) {
    return Bad(file, i,
               "the key binds no input (not an input's name, #k, or the end of its path; "
               "see --list-inputs)");
  }
  std::string some;
  for (size_t j = 0; j < ends.size() && j < 3; ++j) {
    absl::StrAppend(&some, j ? ", " : "", "#", ends[j], " ", InputPath(inputs[ends[j]]));
  }
  return Bad(file, i, absl::StrFormat("the key ends the paths of %d inputs (%s%s): give more of the path",
                                      ends.size(), some, ends.size() > 3 ? ", ..." : ""));
}

// "3x2xf32 ('<f4')": the array as inputs are described, and as the file
// spells its type; raw bytes keep the spelling alone.
std::string DescribeArray(const ArrayInfo& a) {
  if (a.dtype.type == hlo::ElementType::kInvalid) return tensorfile::DescribeArray(a.dtype.spelled, a.dims);
  return absl::StrFormat("%s ('%s')", FormatTensorType(hlo::Shape::Array(a.dtype.type, a.dims)), a.dtype.spelled);
}

}  // namespace

std::string InputPath(const TensorInfo& input) { return tensorfile::FormatKeyPath(input.path); }

std::string DescribeInput(const TensorInfo& input) {
  std::string out = absl::StrFormat("#%d '%s'", input.position, input.name);
  if (!input.path.empty()) absl::StrAppend(&out, " ", InputPath(input));
  return out;
}

std::string DescribeUnbound(const std::vector<TensorInfo>& inputs, const std::vector<size_t>& unbound,
                            size_t shown) {
  std::string out = absl::StrFormat("%d input%s not given: ", unbound.size(),
                                    unbound.size() == 1 ? " is" : "s are");
  for (size_t j = 0; j < unbound.size() && j < shown; ++j) {
    absl::StrAppend(&out, j ? ", " : "", DescribeInput(inputs[unbound[j]]), " ",
                    FormatTensorType(inputs[unbound[j]].shape));
  }
  if (unbound.size() > shown) absl::StrAppend(&out, " and ", unbound.size() - shown, " more");
  return out;
}

absl::StatusOr<std::vector<std::optional<BundleArray>>> BindBundles(
    const std::vector<std::shared_ptr<const TensorFile>>& bundles, const std::vector<TensorInfo>& inputs) {
  std::vector<std::optional<BundleArray>> bound(inputs.size());
  for (const std::shared_ptr<const TensorFile>& file : bundles) {
    for (size_t i = 0; i < file->arrays().size(); ++i) {
      absl::StatusOr<size_t> k = MatchKey(*file, i, inputs);
      if (!k.ok()) return k.status();
      const TensorInfo& input = inputs[*k];
      if (bound[*k].has_value()) {
        return Bad(*file, i, absl::StrFormat("input %s is bound twice: also by %s", DescribeInput(input),
                                             bound[*k]->file->Where(bound[*k]->array)));
      }
      const ArrayInfo& a = file->arrays()[i];
      if (a.dims != input.shape.dims || !tensorfile::HoldsType(a.dtype, input.shape.type)) {
        return Bad(*file, i, absl::StrFormat("is %s, but input %s is %s", DescribeArray(a),
                                             DescribeInput(input), FormatTensorType(input.shape)));
      }
      bound[*k] = BundleArray{file, i};
    }
  }
  return bound;
}

}  // namespace neuron::exec_tool
