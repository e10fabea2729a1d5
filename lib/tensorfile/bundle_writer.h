// Writing several arrays as one bundle: an .npz (members stored
// uncompressed, as np.savez writes them) or a safetensors file. The file
// appears whole or not at all. Types NumPy lacks (bf16, fp8) go into .npz
// members as their raw bits ("<u2", "|u1"), so nothing is rounded;
// safetensors names them (BF16, F8_E4M3, F8_E5M2).
#ifndef NEURON_LIB_TENSORFILE_BUNDLE_WRITER_H_
#define NEURON_LIB_TENSORFILE_BUNDLE_WRITER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "lib/hlo/shape.h"
#include "lib/tensorfile/tensor_file.h"

namespace neuron::tensorfile {

struct NamedArray {
  std::string key;
  hlo::ElementType type = hlo::ElementType::kInvalid;
  std::vector<int64_t> dims;
  std::string_view data;  // C order, little-endian
};

// The bundle format a file name asks for (".npz", ".safetensors"), if any.
std::optional<Format> BundleFormatOfName(std::string_view path);

// Writes `arrays` to `path` ("-": standard output, safetensors only).
absl::Status WriteBundle(const std::string& path, Format format, const std::vector<NamedArray>& arrays);

}  // namespace neuron::tensorfile

#endif  // NEURON_LIB_TENSORFILE_BUNDLE_WRITER_H_
