// Names of element types as the program package writes them: NumPy type
// names for neff.json ("float32", "bfloat16", "int8", "bool"...) and .npy
// descriptors ("<f4"). Types NumPy lacks (bf16, fp8) are stored in .npy
// files as raw bits in an unsigned integer of the same width; neff.json
// carries the real type.
#ifndef NEURON_LIB_PROGRAM_DTYPE_H_
#define NEURON_LIB_PROGRAM_DTYPE_H_

#include <optional>
#include <string>
#include <string_view>

#include "lib/hlo/shape.h"

namespace neuron::program {

// "float32" for f32, "bfloat16" for bf16, "float8_e4m3fn" for f8e4m3fn...;
// empty for tuple/token/opaque.
std::string DtypeName(hlo::ElementType type);
std::optional<hlo::ElementType> DtypeFromName(std::string_view name);

// .npy descriptor of the storage of `type` ("<f4", "|b1", "<u2" for bf16).
std::string NpyDescr(hlo::ElementType type);

// Bytes a dense array of `shape` takes (StorageBytes per element); nullopt
// on overflow or for non-arrays.
std::optional<int64_t> ArrayBytes(const hlo::Shape& shape);

}  // namespace neuron::program

#endif  // NEURON_LIB_PROGRAM_DTYPE_H_
